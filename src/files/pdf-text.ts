// A PDF's text, for a model that cannot take the PDF itself: extracted page by page up to a
// character budget, in a worker thread that is terminated when it takes too long or grows too
// big, so a hostile or broken PDF costs the bot one worker, never its event loop or its heap.
// A file that is not a PDF, a corrupt one or an encrypted one is an `{ error }` with words a
// person can read; this never throws.
//
// The library is unpdf 1.7 (package.json pins ~1.7.0: 1.8 declares Node >= 22). Evaluated on
// Node 20.20, 22.23 and 24.21 against pdfjs-dist 5.6.205's legacy build (the last pdfjs-dist
// that declares Node 20; 5.7 wants 22.13): both extract the same text and give the same
// errors (InvalidPDFException, PasswordException) on all three. unpdf wins because it
// bundles that same pdf.js 5.6.205 as one 1.6 MB ES module with its worker inlined: no
// worker file to locate (pdfjs-dist wants `GlobalWorkerOptions.workerSrc` or a fake worker),
// no 41 MB package, and no @napi-rs/canvas (an optional dependency of pdfjs-dist, 33 MB of
// native code; unpdf only names it as an optional peer, for rendering we do not do).
//
// Either library parses on the thread that calls it, and pdf.js has no way to cut a parse
// short, hence our own worker. Its code is a CommonJS string run with `eval: true`, as in
// src/tools/pattern-worker.ts (a .ts worker file would need tsx's loader under `npm start`
// and vitest, and another path once compiled); it loads unpdf from the path resolved here.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface PdfTextOptions {
  /** Text past this many characters is cut; pages after the one that reaches it are not parsed. */
  maxChars: number;
  /** Pages read at most, so a PDF of many empty pages is bounded by work too. Default 2000. */
  maxPages?: number;
  /** The worker is terminated past this. Default 30 s: a text PDF of hundreds of pages takes about a second. */
  timeLimitMs?: number;
  /** The worker's heap cap, in MB. Default 256. */
  maxHeapMb?: number;
  signal?: AbortSignal;
}

export type PdfTextResult =
  | {
      /** The pages' text in order, pages separated by a blank line. */
      text: string;
      /** The PDF's page count (all of them, also when fewer were read). */
      pages: number;
      /** True when the character budget or the page cap stopped the reading early. */
      truncated: boolean;
    }
  | { error: string };

export const PDF_TEXT_DEFAULTS = { maxPages: 2000, timeLimitMs: 30_000, maxHeapMb: 256 } as const;

type WorkerReply = { kind: 'text'; text: string; pages: number; truncated: boolean } | { kind: 'error'; name: string; code?: string; message: string };

// String.raw: the escapes below (\n) are the worker's, not this file's.
const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { readFile } = require('node:fs/promises');
const { getDocumentProxy } = require(workerData.library);

async function extract() {
  const data = new Uint8Array(await readFile(workerData.path));
  // verbosity 0: pdf.js would print its parser's warnings ("Indexing all PDF objects") on
  // the bot's stderr, outside its log. Eval and system fonts are off: text needs neither.
  const pdf = await getDocumentProxy(data, { verbosity: 0, isEvalSupported: false, useSystemFonts: false, disableFontFace: true });
  try {
    const pages = [];
    let chars = 0;
    let truncated = false;
    for (let number = 1; number <= pdf.numPages; number++) {
      if (chars >= workerData.maxChars || number > workerData.maxPages) { truncated = true; break; }
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (typeof item.str !== 'string') continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      text = text.trim();
      pages.push(text);
      chars += text.length + 2;
    }
    let text = pages.join('\n\n');
    if (text.length > workerData.maxChars) { text = text.slice(0, workerData.maxChars); truncated = true; }
    return { kind: 'text', text, pages: pdf.numPages, truncated };
  } finally {
    await pdf.destroy();
  }
}

extract().then(
  (reply) => parentPort.postMessage(reply),
  (error) => parentPort.postMessage({ kind: 'error', name: String(error && error.name), code: error && typeof error.code === 'string' ? error.code : undefined, message: String(error && error.message) }),
);
`;

// Resolved here, on the main thread, so the worker finds unpdf whatever its working folder.
const UNPDF_PATH = createRequire(import.meta.url).resolve('unpdf');

/** pdf.js's error names (and the file system's codes), in words for the person and the model. */
function describe(reply: Extract<WorkerReply, { kind: 'error' }>): string {
  const { name, code, message } = reply;
  if (code === 'ENOENT') return 'the PDF file is not there';
  if (code) return `the PDF file could not be opened (${code})`;
  switch (name) {
    case 'PasswordException':
      return 'the PDF is encrypted (password-protected), so its text cannot be read';
    case 'InvalidPDFException':
      return `the file is not a readable PDF (${message.replace(/\.$/, '')})`;
    default:
      return `the PDF could not be read (${name}: ${message})`;
  }
}

/** Extracts a PDF's text; `{ error }` for anything that is not a readable PDF, never a throw. */
export async function extractPdfText(pdfPath: string, options: PdfTextOptions): Promise<PdfTextResult> {
  const timeLimitMs = options.timeLimitMs ?? PDF_TEXT_DEFAULTS.timeLimitMs;
  if (options.signal?.aborted) return { error: 'the PDF was not read: the turn was stopped' };
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { library: UNPDF_PATH, path: pdfPath, maxChars: options.maxChars, maxPages: options.maxPages ?? PDF_TEXT_DEFAULTS.maxPages },
      // Not the parent's flags: under tsx they would load its loader into a worker that runs no TypeScript.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? PDF_TEXT_DEFAULTS.maxHeapMb },
      // Captured, not piped to the bot's: whatever pdf.js prints stays out of the bot's output.
      stdout: true,
      stderr: true,
    });
  } catch (error) {
    return { error: `the PDF reader could not start (${error instanceof Error ? error.message : String(error)})` };
  }
  worker.stdout.resume();
  worker.stderr.resume();

  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await new Promise<PdfTextResult>((resolve) => {
      worker.once('message', (reply: WorkerReply) => {
        resolve(reply.kind === 'text' ? { text: reply.text, pages: reply.pages, truncated: reply.truncated } : { error: describe(reply) });
      });
      // ERR_WORKER_OUT_OF_MEMORY lands here when the PDF needs more than the heap cap.
      worker.once('error', (error: Error & { code?: string }) => {
        resolve({ error: error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'the PDF needs more memory than the reader may use' : `the PDF reader failed (${error.message})` });
      });
      worker.once('exit', (code) => resolve({ error: `the PDF reader stopped unexpectedly (exit code ${code})` }));
      timer = setTimeout(() => resolve({ error: `reading the PDF took longer than ${formatSeconds(timeLimitMs)} and was stopped` }), timeLimitMs);
      onAbort = () => resolve({ error: 'the PDF was not read: the turn was stopped' });
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
    // Whatever settled the promise, nothing of the worker outlives this call.
    await worker.terminate();
  }
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(3))} s`;
}
