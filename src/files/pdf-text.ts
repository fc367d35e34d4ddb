// A PDF's text, for a model that cannot take the PDF itself: extracted page by page up to a
// character budget, in a process of its own (pdf-text-child.mjs) that is killed when it takes
// too long or holds more memory than its bound, so a hostile or broken PDF costs the bot one
// child process, never its event loop or its memory. A file that is not a PDF, a corrupt one
// or an encrypted one is an `{ error }` with words a person can read; this never throws.
//
// Why a process and not a worker thread: a worker's heap cap does not bound ArrayBuffers, and
// pdf.js inflates a stream into one. A 2 MB PDF holding 2 GiB of deflated spaces took the
// bot's resident memory from 59 MB to 1.8 GB for 30 s with a worker capped at 256 MB.
//
// How the bound holds: the bot reads the child's resident memory and its high-water mark
// (/proc/<pid>/status, every POLL_MS) and kills it once either passes the bound; the
// high-water mark catches a spike between two reads, and what the child can add between two
// reads is the overshoot (pdf.js inflated that bomb at about 70 MB/s here: a few MB). Inside
// the child, a warden thread holds the same bound (and ends the child if the bot is gone), and
// the child's V8 heap is capped at the bound too, for memory the heap holds. Not RLIMIT_AS
// (`ulimit -v`): V8 reserves address space it never touches, 0.73 GB at start on Node 20 and
// 1.28 GB on Node 24 on a two-core machine, more with more cores, so an address-space bound
// would be a different memory budget on every Node and host. Not a cgroup: making one needs
// root and cgroup v1, or a delegated cgroup v2. Where /proc is missing (macOS) only the
// warden, the heap cap and the time limit hold; the bot's own memory is safe either way, the
// PDF being read in another process.
//
// One reader at a time, process-wide (a PDF may take hundreds of MB to read, and two cores
// gain little from two at once), taking turns between the people who asked (fair-queue.ts).
//
// The library is unpdf 1.7 (package.json pins ~1.7.0: 1.8 declares Node >= 22). Evaluated on
// Node 20.20, 22.23 and 24.21 against pdfjs-dist 5.6.205's legacy build (the last pdfjs-dist
// that declares Node 20; 5.7 wants 22.13): both extract the same text and give the same
// errors (InvalidPDFException, PasswordException) on all three. unpdf wins because it
// bundles that same pdf.js 5.6.205 as one 1.6 MB ES module with its worker inlined: no
// worker file to locate, no 41 MB package, and no @napi-rs/canvas (an optional dependency of
// pdfjs-dist, 33 MB of native code; unpdf only names it as an optional peer, for rendering
// we do not do).
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { FairQueue } from './fair-queue.js';
import { residentMemory } from './process-memory.js';

export interface PdfTextOptions {
  /** Text past this many characters is cut; pages after the one that reaches it are not parsed. */
  maxChars: number;
  /** Pages read at most, so a PDF of many empty pages is bounded by work too. Default 2000. */
  maxPages?: number;
  /** The reader is killed past this. Default 30 s: a text PDF of hundreds of pages takes about a second. */
  timeLimitMs?: number;
  /** The reader process's memory bound, in MB (PDF_MAX_MEMORY_MB). Default 512; Node and pdf.js take 70-90 MB of it before the PDF. */
  maxMemoryMb?: number;
  /** Who asked (platform, workspace and user): readers take turns between requesters. */
  requester?: string;
  /** Stops the reading, or takes the PDF out of the line while it waits for the reader. */
  signal?: AbortSignal;
  /** The PDF already open (by its caller, who closes it): read from its start instead of opening `pdfPath`. */
  held?: FileHandle;
  /** false leaves the memory bound to the reader's own warden, as on a system without /proc (for tests). */
  watchFromBot?: boolean;
  /** Told when a reader process has started (for tests and benches). */
  onReaderStart?(pid: number): void;
  /** Told when a reader process is gone: what it held at most and how it ended (for tests and benches). */
  onReaderExit?(report: ReaderReport): void;
}

/** @internal */
export interface ReaderReport {
  pid: number;
  /** The most the reader held resident, as last read (0 where the system has no /proc). */
  peakRssBytes: number;
  /** Why it was killed, if it was: by the bot, or for its memory by its own warden. */
  killedFor?: 'memory' | 'time' | 'stopped' | 'reply';
  exitCode: number | null;
  signal: NodeJS.Signals | null;
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

const PDF_TEXT_DEFAULTS = { maxPages: 2000, timeLimitMs: 30_000, maxMemoryMb: 512 } as const;

/** How often the reader's memory is read: often enough that a fast grower overshoots little. */
const POLL_MS = 20;
/** The end of the reader's stderr kept, to tell a V8 heap limit from another crash. */
const STDERR_TAIL_BYTES = 8192;
/** What the reader's warden writes before it kills the reader for its memory (pdf-text-child.mjs). */
const WARDEN_MEMORY_MARK = 'pdf-reader: past its memory bound';

const CHILD_ENTRY = fileURLToPath(new URL('./pdf-text-child.mjs', import.meta.url));

type ChildReply =
  | { kind: 'text'; text: string; pages: number; truncated: boolean }
  | { kind: 'error'; name: string; code?: string; message: string };

const readers = new FairQueue();

/** Extracts a PDF's text; `{ error }` for anything that is not a readable PDF, never a throw. */
export async function extractPdfText(pdfPath: string, options: PdfTextOptions): Promise<PdfTextResult> {
  try {
    return await readers.run(options.requester ?? '', () => readInChild(pdfPath, options), options.signal);
  } catch (error) {
    // Only a wait cut short rejects: readInChild itself answers every failure in words.
    if (options.signal?.aborted) return { error: STOPPED };
    return { error: `the PDF reader failed (${error instanceof Error ? error.message : String(error)})` };
  }
}

const STOPPED = 'the PDF was not read: the turn was stopped';

function memoryRefusal(maxMemoryMb: number): string {
  return `reading it needs more than the ${maxMemoryMb} MB of memory the PDF reader may use (PDF_MAX_MEMORY_MB)`;
}

async function readInChild(pdfPath: string, options: PdfTextOptions): Promise<PdfTextResult> {
  if (options.signal?.aborted) return { error: STOPPED };
  const timeLimitMs = options.timeLimitMs ?? PDF_TEXT_DEFAULTS.timeLimitMs;
  const maxMemoryMb = options.maxMemoryMb ?? PDF_TEXT_DEFAULTS.maxMemoryMb;
  const maxBytes = maxMemoryMb * 1024 * 1024;
  // Never through a link, and never a FIFO (whose open would wait for a writer, holding every
  // PDF behind it): the uploads folder is one the workspace's commands can write in.
  // A file the caller holds is opened again through its descriptor (/proc/self/fd/N, where
  // there is one), so the reader gets an offset of its own and the caller's handle is left as it was.
  let file: FileHandle;
  try {
    file = options.held
      ? await reopen(options.held, pdfPath)
      : await open(pdfPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      error:
        code === 'ENOENT' ? 'the PDF file is not there' : `the PDF file could not be opened (${code ?? String(error)})`,
    };
  }
  if (!(await file.stat()).isFile()) {
    await file.close();
    return { error: 'the PDF file is not a plain file' };
  }

  if (options.signal?.aborted) {
    await file.close();
    return { error: STOPPED };
  }
  const budget = {
    maxChars: options.maxChars,
    maxPages: options.maxPages ?? PDF_TEXT_DEFAULTS.maxPages,
    maxBytes,
    bot: process.pid,
  };
  const replyLimit = options.maxChars * 6 + 64 * 1024;
  return new Promise<PdfTextResult>((resolve) => {
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(
        process.execPath,
        // Not the bot's flags (under tsx they would load its loader into a process that runs no
        // TypeScript). No code from strings, no native addons: reading text needs neither.
        [
          `--max-old-space-size=${maxMemoryMb}`,
          '--disallow-code-generation-from-strings',
          '--no-addons',
          CHILD_ENTRY,
          JSON.stringify(budget),
        ],
        // The PDF is its stdin; it gets none of the bot's environment (its tokens and keys).
        { stdio: [file.fd, 'pipe', 'pipe'], env: {}, cwd: tmpdir() },
        // Node's types know stdin is null only for 'ignore'/'inherit'; a descriptor gives null too.
      ) as ChildProcessByStdio<null, Readable, Readable>;
    } catch (error) {
      void file.close().catch(() => undefined);
      resolve({ error: `the PDF reader could not start (${error instanceof Error ? error.message : String(error)})` });
      return;
    }
    let killedFor: ReaderReport['killedFor'];
    let peak = 0;
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrTail = '';
    let finished = false;
    // Settles once, from the child's 'close' (or 'error' when it never started); the timers go with it.
    const finish = (code: number | null, signal: NodeJS.Signals | null, startError?: string): void => {
      if (finished) return;
      finished = true;
      clearInterval(poll);
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      process.removeListener('exit', onExit);
      if (!killedFor && stderrTail.includes(WARDEN_MEMORY_MARK)) killedFor = 'memory';
      options.onReaderExit?.({
        pid: child.pid ?? 0,
        peakRssBytes: peak,
        ...(killedFor ? { killedFor } : {}),
        exitCode: code,
        signal,
      });
      if (startError) return resolve({ error: startError });
      resolve(outcome(code, signal));
    };

    const outcome = (code: number | null, signal: NodeJS.Signals | null): PdfTextResult => {
      switch (killedFor) {
        case 'memory':
          return { error: memoryRefusal(maxMemoryMb) };
        case 'time':
          return { error: `reading the PDF took longer than ${formatSeconds(timeLimitMs)} and was stopped` };
        case 'stopped':
          return { error: STOPPED };
        case 'reply':
          return { error: 'the PDF reader answered with more than the text it may return' };
        case undefined:
          break;
      }
      // V8's own words when the heap cap is reached (the process then aborts).
      if (/heap out of memory|Reached heap limit|Allocation failed/i.test(stderrTail))
        return { error: memoryRefusal(maxMemoryMb) };
      if (code === 0) {
        const reply = parseReply(Buffer.concat(stdout).toString('utf8'));
        if (reply)
          return reply.kind === 'text'
            ? { text: reply.text, pages: reply.pages, truncated: reply.truncated }
            : { error: describe(reply) };
      }
      return { error: `the PDF reader stopped unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})` };
    };
    const kill = (why: NonNullable<ReaderReport['killedFor']>): void => {
      killedFor ??= why;
      child.kill('SIGKILL');
    };
    const watch = (): void => {
      if (child.pid === undefined) return;
      const memory = residentMemory(child.pid);
      if (!memory) return;
      peak = Math.max(peak, memory.peak);
      if (memory.peak > maxBytes) kill('memory');
    };
    const poll = options.watchFromBot === false ? undefined : setInterval(watch, POLL_MS);
    const timer = setTimeout(() => kill('time'), timeLimitMs);
    const onAbort = (): void => kill('stopped');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    // A bot that exits (a deploy, a crash) takes its reader with it.
    const onExit = (): void => void child.kill('SIGKILL');
    process.once('exit', onExit);

    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      // The child writes one reply of at most maxChars characters; more is not a reply.
      if (stdoutBytes > replyLimit) return kill('reply');
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    child.once('error', (error) => {
      // Spawning failed (no such binary, no memory to fork): no 'close' follows.
      finish(null, null, `the PDF reader could not start (${error.message})`);
    });
    child.once('close', (code, signal) => finish(code, signal));
    // The child has its own copy of the descriptor from here on.
    void file.close().catch(() => undefined);
    if (child.pid !== undefined) options.onReaderStart?.(child.pid);
  });
}

/** A held file opened anew: by its descriptor's entry in /proc, else (no procfs) by its path, never through a link. */
async function reopen(held: FileHandle, pdfPath: string): Promise<FileHandle> {
  const byDescriptor = `/proc/self/fd/${held.fd}`;
  try {
    return await open(byDescriptor, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return await open(pdfPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  }
}

function parseReply(output: string): ChildReply | undefined {
  try {
    const reply = JSON.parse(output.trim()) as ChildReply;
    return reply.kind === 'text' || reply.kind === 'error' ? reply : undefined;
  } catch {
    return undefined;
  }
}

/** pdf.js's error names, in words for the person and the model. */
function describe(reply: Extract<ChildReply, { kind: 'error' }>): string {
  const { name, code, message } = reply;
  if (code) return `the PDF file could not be read (${code})`;
  switch (name) {
    case 'PasswordException':
      return 'the PDF is encrypted (password-protected), so its text cannot be read';
    case 'InvalidPDFException':
      return `the file is not a readable PDF (${message.replace(/\.$/, '')})`;
    default:
      return `the PDF could not be read (${name}: ${message})`;
  }
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(3))} s`;
}
