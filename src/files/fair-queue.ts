// A queue that runs heavy work one job at a time (or a few), taking turns between the people
// who asked: each person waiting gets the next free slot in their turn, round-robin, so the
// one who drops twenty PDFs waits behind their own files, not in front of everyone else's.
//
// The order: people in the order they first came to wait, each served one job and then sent
// to the back of the line while they have more. Someone new joins at the back, so their first
// job waits for at most one job of each person already waiting.
//
// No cap of its own: what can wait is bounded upstream (files per message, queued messages
// per thread, threads per person), and a waiting job is a closure, not its bytes.

export interface FairQueueOptions {
  /** Jobs run at once, process-wide. Default 1. */
  concurrency?: number;
}

interface Waiting {
  start: () => void;
}

export class FairQueue {
  private readonly concurrency: number;
  private running = 0;
  /** Each person's waiting jobs; the map's order is the line (a person served goes to its back). */
  private readonly lines = new Map<string, Waiting[]>();

  constructor(options: FairQueueOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? 1);
  }

  /** Jobs waiting for a slot (not those running). */
  get waiting(): number {
    let count = 0;
    for (const line of this.lines.values()) count += line.length;
    return count;
  }

  /**
   * Runs `job` once it is `requester`'s turn and a slot is free; resolves or rejects as it does.
   * A `signal` aborted while the job still waits takes it out of the line: it never runs, and
   * this rejects with the signal's reason. A signal aborted once it runs is the job's to honour.
   */
  run<T>(requester: string, job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.remove(requester, waiting)) return;
        reject(abortReason(signal!));
      };
      const waiting: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.running++;
          let ran: Promise<T>;
          try {
            ran = job();
          } catch (error) {
            // A job that throws before its first await is a rejection like any other.
            ran = Promise.reject(error instanceof Error ? error : new Error(String(error)));
          }
          void ran.then(resolve, reject).finally(() => {
            this.running--;
            this.next();
          });
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const line = this.lines.get(requester);
      if (line) line.push(waiting);
      else this.lines.set(requester, [waiting]);
      this.next();
    });
  }

  /** Starts waiting jobs while slots are free: the first person in line, who then goes to the back. */
  private next(): void {
    while (this.running < this.concurrency) {
      const first = this.lines.entries().next();
      if (first.done) return;
      const [requester, line] = first.value;
      const job = line.shift()!;
      this.lines.delete(requester);
      if (line.length > 0) this.lines.set(requester, line);
      job.start();
    }
  }

  private remove(requester: string, waiting: Waiting): boolean {
    const line = this.lines.get(requester);
    const at = line?.indexOf(waiting) ?? -1;
    if (!line || at < 0) return false;
    line.splice(at, 1);
    if (line.length === 0) this.lines.delete(requester);
    return true;
  }
}

/** The signal's reason when it is an Error (as AbortController.abort() makes), else one saying the wait was aborted. */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}
