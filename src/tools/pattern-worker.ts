// A search pattern run off the event loop: a worker thread matches the model's regular
// expression against text the search sends it, and is terminated when it takes too long or
// the turn is stopped.
//
// One idea: a regular expression from the model is untrusted code. JavaScript's regex
// engine backtracks, so `^(a+)+$` against 27 `a`s took 4.6 s on the event loop, during which
// no thread moved and 🛑 did nothing; no check inside `exec` can cut it short. In a worker it
// blocks only the worker, and `terminate()` stops it mid-match (measured: 4 ms).
//
// The worker only matches: files are opened and read on the main thread, through
// safe-open.ts, and sent here a batch at a time, so the security checks stay in one place
// and memory holds one batch, not the workspace.
//
// The worker's code is a self-contained CommonJS string run with `eval: true`: a worker
// started from a .ts file would need tsx's loader in the worker under `npm start` and
// vitest, and a different path once compiled. A string runs the same under tsx, vitest
// and plain node, and needs no build step.
import { Worker } from 'node:worker_threads';

/** A matching line: its 1-based number and the text shown for it. */
export type LineMatch = [line: number, shown: string];

/** The pattern did not finish within its time budget; the worker was terminated. */
export class PatternTooSlowError extends Error {
  constructor(readonly timeLimitMs: number) {
    super(`the pattern took too long (over ${formatSeconds(timeLimitMs)}) and was stopped`);
    this.name = 'PatternTooSlowError';
  }
}

export interface PatternWorkerOptions {
  /** Regular expression source and flags, already checked by `new RegExp` on the main thread. */
  source: string;
  flags: string;
  /** Total time the worker may spend matching, over all batches. */
  timeLimitMs: number;
  /** A matching line longer than this is shown as a window around the match. */
  maxLineChars: number;
  signal: AbortSignal;
}

/** What a batch found: the matches in each text finished, in order. */
export interface BatchMatches {
  /** One entry per text finished: all of them, unless the limit or the time ran out first. */
  perText: LineMatch[][];
  /** Set when the time budget ran out during this batch; the worker has been terminated. */
  tooSlow: PatternTooSlowError | null;
}

type WorkerReply = { kind: 'text'; matches: LineMatch[] } | { kind: 'done' } | { kind: 'error'; message: string };

// Each text's matches are posted as soon as the text is done, so when the budget runs out
// in the middle of a batch, what the texts before it matched is kept.
// String.raw: the escapes below (\n, \u2026) are the worker's, not this file's.
const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const regex = new RegExp(workerData.source, workerData.flags);
const maxLineChars = workerData.maxLineChars;

function excerpt(line, matchIndex) {
  if (line.length <= maxLineChars) return line;
  const start = Math.max(0, Math.min(matchIndex - 100, line.length - maxLineChars));
  const end = start + maxLineChars;
  return (start > 0 ? '\u2026' : '') + line.slice(start, end) + (end < line.length ? '\u2026' : '');
}

parentPort.on('message', ({ texts, limit }) => {
  try {
    let found = 0;
    for (let index = 0; index < texts.length && found < limit; index++) {
      const text = texts[index];
      const matches = [];
      let lineNumber = 0;
      for (let start = 0; start <= text.length && found < limit; ) {
        let end = text.indexOf('\n', start);
        if (end === -1) end = text.length;
        lineNumber++;
        let line = text.slice(start, end);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        const match = regex.exec(line);
        if (match) {
          matches.push([lineNumber, excerpt(line, match.index)]);
          found++;
        }
        start = end + 1;
      }
      parentPort.postMessage({ kind: 'text', matches });
    }
    parentPort.postMessage({ kind: 'done' });
  } catch (error) {
    parentPort.postMessage({ kind: 'error', message: error instanceof Error ? error.message : String(error) });
  }
});
`;

let running = 0;

/**
 * How many pattern workers are alive in this process (for tests and diagnostics).
 * @internal
 */
export function runningPatternWorkers(): number {
  return running;
}

/** How a batch in flight ends when the worker is stopped under it. */
type StopReason =
  { kind: 'too-slow'; error: PatternTooSlowError } | { kind: 'aborted'; reason: unknown } | { kind: 'closed' };

/**
 * One worker for one search, started with the first batch. Call `match` once per batch, in
 * turn, and `close` at the end, whatever happened: a worker left running holds a thread.
 */
export class PatternWorker {
  private worker: Worker | null = null;
  private spentMs = 0;
  private tooSlow: PatternTooSlowError | null = null;
  /** Settles the batch in flight, when the worker stops under it. */
  private batch: { resolve: () => void; reject: (error: unknown) => void } | null = null;
  private readonly onAbort = (): void => {
    void this.stop({ kind: 'aborted', reason: this.options.signal.reason });
  };

  constructor(private readonly options: PatternWorkerOptions) {
    options.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /**
   * The matches in each text, in order, at most `limit` in all. Once the time budget is
   * spent, resolves with what was finished and `tooSlow` set. Rejects with the signal's
   * reason on a stop. Either way the worker has been terminated by the time it settles.
   */
  async match(texts: string[], limit: number): Promise<BatchMatches> {
    this.options.signal.throwIfAborted();
    if (this.tooSlow) return { perText: [], tooSlow: this.tooSlow };
    const worker = this.start();
    const perText: LineMatch[][] = [];
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    let onMessage: ((reply: WorkerReply) => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.batch = { resolve, reject };
        onMessage = (reply) => {
          switch (reply.kind) {
            case 'text':
              perText.push(reply.matches);
              break;
            case 'done':
              resolve();
              break;
            case 'error':
              reject(new Error(`the pattern failed: ${reply.message}`));
              break;
            default:
              reply satisfies never;
          }
        };
        worker.on('message', onMessage);
        const error = new PatternTooSlowError(this.options.timeLimitMs);
        timer = setTimeout(() => void this.stop({ kind: 'too-slow', error }), this.options.timeLimitMs - this.spentMs);
        worker.postMessage({ texts, limit });
      });
      return { perText, tooSlow: this.tooSlow };
    } finally {
      clearTimeout(timer);
      if (onMessage) worker.off('message', onMessage);
      this.batch = null;
      this.spentMs += performance.now() - started;
    }
  }

  /** Terminate the worker (if it runs) and let go of the signal. */
  async close(): Promise<void> {
    this.options.signal.removeEventListener('abort', this.onAbort);
    await this.stop({ kind: 'closed' });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { source: this.options.source, flags: this.options.flags, maxLineChars: this.options.maxLineChars },
      // Not the parent's flags: under tsx they would load its loader into a worker that
      // runs no TypeScript, costing start-up time for nothing.
      execArgv: [],
      // A batch is a few MiB of text at most; this bounds what a runaway worker can take.
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    running++;
    worker.once('exit', () => {
      running--;
      if (this.worker === worker) this.worker = null;
      this.batch?.reject(new Error('the search worker stopped unexpectedly'));
    });
    worker.once('error', (error) => this.batch?.reject(new Error(`the search worker failed: ${error.message}`)));
    this.worker = worker;
    return worker;
  }

  /**
   * Terminate the worker, and once its thread has exited, settle the batch in flight (if
   * any) as `reason` says: when a stopped search returns, nothing of it still runs.
   */
  private async stop(reason: StopReason): Promise<void> {
    const worker = this.worker;
    const batch = this.batch;
    this.batch = null;
    this.worker = null;
    if (reason.kind === 'too-slow') this.tooSlow = reason.error;
    if (worker) await worker.terminate();
    switch (reason.kind) {
      case 'too-slow':
        batch?.resolve();
        break;
      case 'aborted':
        batch?.reject(reason.reason);
        break;
      case 'closed':
        break;
      default:
        reason satisfies never;
    }
  }
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
