// The PDF reader's own process (pdf-text.ts starts it, one PDF per process): reads the PDF's
// bytes from its standard input, a file the bot opened for it, extracts the text page by page
// within the budgets it is given, and writes one JSON line to its standard output. Whatever
// the PDF makes pdf.js do (inflate 2 GiB of one content stream, say) happens in this process,
// which the bot watches and kills past its memory bound; the bot's own memory never holds it.
//
// A warden thread (this same file, run as a worker) holds the bound from inside as well:
// it kills the process when its resident memory passes the bound (where the bot cannot read
// /proc, as on macOS) or when the bot is gone (a bot killed mid-read must not leave a reader
// inflating gigabytes with nobody watching). A thread of its own, because pdf.js may keep
// this process's main thread busy for long stretches.
//
// Plain JavaScript, not TypeScript: the same file runs under `npm start` (copied into the
// build as it is), under tsx and under vitest, with no loader in front of it. It takes no
// environment from the bot (no tokens to find) and needs no path: the file comes as fd 0.
import { readFileSync, writeSync } from 'node:fs';
import { isMainThread, Worker, workerData } from 'node:worker_threads';

/** @typedef {{ maxChars: number; maxPages: number; maxBytes: number; bot: number }} Budget */
/** @typedef {{ kind: 'text'; text: string; pages: number; truncated: boolean } | { kind: 'error'; name: string; code?: string; message: string }} Reply */

/** What the warden writes on stderr before it kills the process for its memory (the bot reads it). */
const MEMORY_MARK = 'pdf-reader: past its memory bound';
const WARDEN_POLL_MS = 50;

/** The warden's loop: `maxBytes` the bound, `bot` the pid of the process that started the reader. */
function warden(/** @type {{ maxBytes: number; bot: number }} */ { maxBytes, bot }) {
  setInterval(() => {
    const tooBig = process.memoryUsage.rss() > maxBytes;
    // Re-parented (to init or a subreaper) once the bot is gone.
    if (!tooBig && process.ppid === bot) return;
    // writeSync, not process.stderr: a worker's stream goes through the main thread, which may be busy.
    if (tooBig) writeSync(2, `${MEMORY_MARK}\n`);
    process.kill(process.pid, 'SIGKILL');
  }, WARDEN_POLL_MS);
}

/** @param {Budget} budget @returns {Promise<Reply>} */
async function extract(budget) {
  const { getDocumentProxy } = await import('unpdf');
  const data = new Uint8Array(readFileSync(0));
  // verbosity 0: pdf.js would print its parser's warnings ("Indexing all PDF objects") on
  // stderr, which the bot only keeps the end of, for its own diagnosis. Eval and system
  // fonts are off: text needs neither.
  const pdf = await getDocumentProxy(data, {
    verbosity: 0,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
  });
  try {
    /** @type {string[]} */
    const pages = [];
    let chars = 0;
    let truncated = false;
    for (let number = 1; number <= pdf.numPages; number++) {
      if (chars >= budget.maxChars || number > budget.maxPages) {
        truncated = true;
        break;
      }
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item) || typeof item.str !== 'string') continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      text = text.trim();
      pages.push(text);
      chars += text.length + 2;
    }
    let text = pages.join('\n\n');
    if (text.length > budget.maxChars) {
      text = text.slice(0, budget.maxChars);
      truncated = true;
    }
    return { kind: 'text', text, pages: pdf.numPages, truncated };
  } finally {
    await pdf.destroy();
  }
}

/** @param {unknown} error @returns {Reply} */
function failure(error) {
  const failed = /** @type {{ name?: unknown; code?: unknown; message?: unknown } | null | undefined} */ (error);
  return {
    kind: 'error',
    name: String(failed?.name),
    ...(typeof failed?.code === 'string' ? { code: failed.code } : {}),
    message: String(failed?.message ?? error),
  };
}

if (isMainThread) {
  /** @type {unknown} */
  const argument = JSON.parse(process.argv[2] ?? '{}');
  const budget = /** @type {Budget} */ (argument);
  // unref: the warden never keeps the reader alive once its reply is written.
  // The bot's pid comes from the bot: read here, it could already be init's, had the bot died at once.
  const guard = new Worker(new URL(import.meta.url), { workerData: { maxBytes: budget.maxBytes, bot: budget.bot } });
  guard.unref();
  // A warden that cannot start must not take the reading with it: on Linux the bot's own watch still holds the bound.
  guard.on('error', () => undefined);
  const reply = await extract(budget).catch(failure);
  // Written whole before the process ends: a large text is more than one pipe's buffer.
  process.stdout.write(`${JSON.stringify(reply)}\n`, () => process.exit(0));
} else {
  /** @type {unknown} */
  const orders = workerData;
  warden(/** @type {{ maxBytes: number; bot: number }} */ (orders));
}
