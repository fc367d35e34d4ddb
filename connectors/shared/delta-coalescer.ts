// Streamed answer text, batched into as few platform calls as the rate limits want.
//
// The idea to hold: one flush at a time, at most one per interval, and text is never lost.
// The first delta goes out at once (the user sees the answer start within about a second of
// the first token); after that, deltas pile up and leave together. A flush that fails keeps its
// text in front of whatever arrived since, so the next flush carries it.
//
// Why an interval: every flush is a platform call against a per-method limit. Slack
// `chat.appendStream` is Tier 4 (100+/min) and `chat.update` Tier 3 (50+/min, so about one
// every 1.2 s); Discord rate-limits message edits per route bucket, and about one edit a
// second is the pace that stays inside it. A call per token would be throttled within seconds.

export interface DeltaCoalescerOptions {
  /** Send one batch of text. Never called twice at once. */
  flush: (chunk: string) => Promise<void>;
  /** The least time between the starts of two flushes. */
  minIntervalMs: number;
  /**
   * A flush failed. Its text is kept and retried at the next interval (with whatever arrived
   * since), until a flush succeeds or the coalescer is closed. Defaults to a process warning.
   */
  onError?: (error: unknown, chunk: string) => void;
}

export class DeltaCoalescer {
  private readonly options: DeltaCoalescerOptions;
  private buffer = '';
  private inFlight: Promise<boolean> | undefined;
  private lastFlushStart: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private isClosed = false;

  constructor(options: DeltaCoalescerOptions) {
    if (!Number.isFinite(options.minIntervalMs) || options.minIntervalMs < 0) {
      throw new RangeError(`DeltaCoalescer: minIntervalMs must be a non-negative number, got ${options.minIntervalMs}`);
    }
    this.options = options;
  }

  /** Text waiting for a flush, including text whose flush failed. */
  get pendingText(): string {
    return this.buffer;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Queue a delta. Throws once closed: text pushed after the last flush would silently vanish,
   * and a caller that does this has a lifecycle bug worth hearing about.
   */
  push(text: string): void {
    if (this.isClosed) throw new Error('DeltaCoalescer: push after close');
    if (text === '') return;
    this.buffer += text;
    this.schedule();
  }

  /**
   * Flush everything pending now, ignoring the interval, and wait until nothing is in flight.
   * Call it before something must appear below the text (a tool card, an approval) and at the
   * end of a turn. Resolves even if a flush fails (the failure went to `onError`; the text stays
   * in `pendingText`), so a broken platform call cannot hang the turn.
   */
  drain(): Promise<void> {
    this.draining ??= this.drainOnce().finally(() => {
      this.draining = undefined;
      // A failed flush left text behind: try again on the usual schedule.
      if (this.buffer !== '' && !this.isClosed) this.schedule();
    });
    return this.draining;
  }

  /** Drain, then refuse further pushes and clear the timer. Safe to call more than once. */
  async close(): Promise<void> {
    this.isClosed = true;
    await this.drain();
    this.clearTimer();
  }

  private async drainOnce(): Promise<void> {
    this.clearTimer();
    for (;;) {
      if (this.inFlight) {
        await this.inFlight;
        continue;
      }
      if (this.buffer === '') return;
      // One attempt per drain: retrying a failing platform in a tight loop helps nobody.
      if (!(await this.startFlush())) return;
    }
  }

  private schedule(): void {
    // In flight: its completion schedules the rest. Draining: the drain loop takes it.
    if (this.inFlight || this.draining || this.timer || this.buffer === '') return;
    const wait = this.lastFlushStart === undefined ? 0 : this.lastFlushStart + this.options.minIntervalMs - Date.now();
    if (wait <= 0) {
      void this.startFlush();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, wait);
    // A pending batch must not keep a shutting-down process alive.
    this.timer.unref();
  }

  /** Send the whole buffer. Resolves true on success; never rejects. */
  private startFlush(): Promise<boolean> {
    const chunk = this.buffer;
    this.buffer = '';
    this.lastFlushStart = Date.now();
    const flight = this.send(chunk).finally(() => {
      this.inFlight = undefined;
      if (!this.draining) this.schedule();
    });
    this.inFlight = flight;
    return flight;
  }

  private async send(chunk: string): Promise<boolean> {
    try {
      await this.options.flush(chunk);
      return true;
    } catch (error) {
      // In front of whatever arrived during the failed call: order is kept.
      this.buffer = chunk + this.buffer;
      this.report(error, chunk);
      return false;
    }
  }

  private report(error: unknown, chunk: string): void {
    try {
      if (this.options.onError) this.options.onError(error, chunk);
      else
        process.emitWarning(
          `DeltaCoalescer: a flush of ${chunk.length} characters failed and will be retried: ${String(error)}`,
        );
    } catch {
      // A throwing error handler must not turn into an unhandled rejection.
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
