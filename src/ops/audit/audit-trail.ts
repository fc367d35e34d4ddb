// The audit trail as an operations sink: it hears every ops event, keeps the ones worth a
// record (audit-record.ts says which, and why), and writes each once (audit-store.ts claims
// its id) to the day it happened on. It also drops the days older than AUDIT_RETENTION_DAYS.
//
// The one idea: a turn never waits for the trail. `handle` only turns the event into a record
// and queues it; one writer drains the queue in order, outside any session's fence scope (a
// record is the bot's, not a session's: it must not be written under, or refused by, the
// lease of whichever session's event happened to start the writer). A write that fails is
// tried again later, in order; `flush()` (at shutdown, and in tests) drains what is queued.
//
// Retention is a sweep (core.ts runs it with the transcripts' sweep, every six hours) rather
// than a TTL on each record: Keyv's TTL on SQLite deletes a row only when it is read, so a
// trail nobody exports would never shrink; and a sweep applies a changed AUDIT_RETENTION_DAYS
// to the days already written. Days are whole buckets: the sweep reads only the day index to
// know what to delete, never the records of the days it keeps.
import type { EngineLogger } from '../../engine/index.js';
import { fenceScope } from '../../cluster/fence-scope.js';
import type { OpsEvent, OpsSink } from '../ops-events.js';
import { auditRecordOf, type AuditRecord } from './audit-record.js';
import { dayOf, type AuditStore } from './audit-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Records held while the store cannot take them; past this new ones are dropped, and said so. */
const MAX_QUEUED = 10_000;
/** After a failed write, the writer waits this long before trying again (doubling up to the cap). */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

export interface AuditTrailOptions {
  /** Days a record is kept (AUDIT_RETENTION_DAYS). */
  retentionDays: number;
  logger?: EngineLogger;
  /** Hides the configured secrets in what a tool call brought (its argument summary, a granted command). */
  mask?: (text: string) => string;
  /** The clock of the retention sweep (tests move it). */
  now?: () => number;
}

export class AuditTrail implements OpsSink {
  private queue: AuditRecord[] = [];
  private draining: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  private dropped = 0;
  private closed = false;
  /** A flush is under way: a failed write is given up (logged) rather than retried later. */
  private flushing = false;
  /** Ids claimed by this trail and not written yet (a failed write keeps its claim for the retry). */
  private readonly claimedHere = new Set<string>();
  private readonly now: () => number;

  constructor(
    private readonly store: AuditStore,
    private readonly options: AuditTrailOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  handle(event: OpsEvent): void {
    if (this.closed) return;
    const record = auditRecordOf(event, this.options.mask);
    if (!record) return;
    // Full: the new record is the one dropped (the head may be in the middle of its write).
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped++;
      return;
    }
    this.queue.push(record);
    if (!this.retryTimer) this.startDrain();
  }

  /** Write out everything queued; a record the store refuses now is logged as lost. */
  async flush(): Promise<void> {
    this.flushing = true;
    try {
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
      }
      // One writer at a time, always: two would both take the head of the queue.
      while (this.queue.length > 0 || this.draining) {
        this.startDrain();
        await this.draining;
      }
    } finally {
      this.flushing = false;
    }
    this.reportDropped();
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  /**
   * Delete the days past the retention period: a day goes once its last moment is more than
   * AUDIT_RETENTION_DAYS old (the day of the moment exactly that long ago stays: part of it
   * is younger). Never throws (a failure is logged; the next sweep tries again). Resolves
   * with the days deleted.
   */
  async sweep(): Promise<string[]> {
    const oldestKept = dayOf(this.now() - this.options.retentionDays * DAY_MS);
    const dropped: string[] = [];
    try {
      for (const day of await this.store.days()) {
        if (day >= oldestKept) break;
        await this.store.drop(day);
        dropped.push(day);
      }
      if (dropped.length > 0)
        this.options.logger?.info(
          { days: dropped.length, oldestKept },
          'deleted audit records past AUDIT_RETENTION_DAYS',
        );
    } catch (error) {
      this.options.logger?.error({ err: error }, 'audit retention sweep failed');
    }
    return dropped;
  }

  private startDrain(): void {
    if (this.draining) return;
    // Outside the emitting session's fence scope: see the header.
    this.draining = fenceScope
      .exit(() => this.writeQueued())
      .finally(() => {
        this.draining = undefined;
        if (this.queue.length > 0 && !this.retryTimer && !this.closed) this.startDrain();
      });
  }

  /** Write the queue in order. On a failure: keep the rest queued and retry later, or (flushing) log and drop it. */
  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const record = this.queue[0]!;
      try {
        await this.write(record);
        if (this.queue[0] === record) this.queue.shift();
        this.retryMs = RETRY_FIRST_MS;
      } catch (error) {
        if (this.flushing) {
          this.options.logger?.error(
            { err: error, lost: this.queue.length },
            'could not write audit records at shutdown; they are lost',
          );
          // Given back where the store still answers, so another instance that saw the same facts may write them.
          for (const id of this.claimedHere) await this.store.release(id).catch(() => undefined);
          this.claimedHere.clear();
          this.queue = [];
          return;
        }
        this.options.logger?.warn(
          { err: error, queued: this.queue.length, retryInMs: this.retryMs },
          'could not write an audit record; trying again',
        );
        this.scheduleRetry();
        return;
      }
    }
  }

  private async write(record: AuditRecord): Promise<void> {
    // A record claimed by an earlier attempt is ours to finish: its claim outlives a failed
    // write (giving it back needs the very store that just failed).
    if (!this.claimedHere.has(record.id)) {
      if (!(await this.store.claim(record.id))) return; // another instance (or an earlier replay) wrote it
      this.claimedHere.add(record.id);
    }
    await this.store.append(dayOf(record.at), record);
    this.claimedHere.delete(record.id);
  }

  private scheduleRetry(): void {
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed) this.startDrain();
    }, wait);
    this.retryTimer.unref();
  }

  private reportDropped(): void {
    if (this.dropped === 0) return;
    this.options.logger?.error(
      { dropped: this.dropped },
      `the audit trail dropped records: ${MAX_QUEUED} already waited for the store`,
    );
    this.dropped = 0;
  }
}
