// The scheduler runtime: holds every stored schedule on one timer, set for the earliest due
// instant (a heap: thousands of schedules, one timer), and acts on each occurrence exactly
// once across instances.
//
// - An occurrence is claimed first (`claim('schedule:<id>:<dueAt>')`: core passes the
//   coordinator's claimEvent, a Redis SET NX in cluster mode, the durable event ledger on one
//   instance). The winner re-reads the record (ended meanwhile: nothing), records the
//   occurrence (`lastDueAt`, the next `nextRunAt`) and only then calls `fire`: a crash during
//   a run never runs it again. A loser only moves its own copy on.
// - Late: an occurrence found more than `graceMs` after its instant (the bot was down, or the
//   process stalled) is not run but reported once through `skipped(…, 'missed')`; of several
//   missed instants of a recurring schedule only the latest is acted on.
// - A finished one-off (no instant left) is deleted from the store once claimed: /schedules
//   lists what will still run, and nothing is kept that could run again.
// - Timers run in the async context the Scheduler was made in (core's start-up), never in
//   that of whoever added a schedule: a schedule_task call runs inside its session's cluster
//   fence scope (AsyncLocalStorage, which timers inherit), and every later occurrence of every
//   schedule would otherwise write to the store under that one session's lease.
// - The timer never sleeps longer than `refreshMs`: at each wake past it the store's index is
//   read again, so schedules made or ended on another instance are seen here (and run here
//   if that instance died), and a wall-clock jump is noticed.
import { AsyncResource } from 'node:async_hooks';
import { silentLogger, type EngineLogger } from '../engine/index.js';
import { DueHeap } from './due-heap.js';
import { latestDue } from './missed-runs.js';
import { nextRunAfter } from './occurrences.js';
import type { ScheduleStore } from './schedule-store.js';
import type { Schedule } from './schedule-types.js';

export interface ScheduleClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** Date.now and an unref'd setTimeout: the scheduler never keeps the process alive by itself. */
export const systemScheduleClock: ScheduleClock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface SchedulerOptions {
  store: ScheduleStore;
  clock?: ScheduleClock;
  /** True for exactly one caller per occurrence id, across instances (the coordinator's claimEvent). */
  claim: (occurrenceId: string) => Promise<boolean>;
  /** Run the occurrence (a turn in the schedule's thread). `schedule` already shows the next run. */
  fire: (schedule: Schedule, dueAt: number) => Promise<void>;
  /** An occurrence found past the grace: say so in the thread. */
  skipped: (schedule: Schedule, dueAt: number, reason: 'missed') => Promise<void>;
  /** How late an occurrence may still run (SCHEDULE_GRACE). */
  graceMs: number;
  /** The longest the timer sleeps before the store's index is read again (default 30 s). */
  refreshMs?: number;
  logger?: EngineLogger;
}

const DEFAULT_SCHEDULE_REFRESH_MS = 30_000;
/** After a claim or a read that failed (Redis or the store down), the occurrence is tried again this soon. */
const RETRY_MS = 5_000;

interface Tracked {
  schedule: Schedule;
  /** The instant this process waits for next (the record's nextRunAt, or later once moved on). */
  dueAt: number;
  /** Which heap entry is current: the others are stale (a lazy delete). */
  seq: number;
}

export class Scheduler {
  private readonly clock: ScheduleClock;
  private readonly logger: EngineLogger;
  private readonly refreshMs: number;
  private readonly tracked = new Map<string, Tracked>();
  private readonly heap = new DueHeap();
  private seq = 0;
  private timer: unknown;
  /** When the armed timer wakes (Infinity: none armed). */
  private timerAt = Number.POSITIVE_INFINITY;
  private lastRefresh = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | undefined;
  private readonly busy = new Set<Promise<void>>();
  /** Occurrences being claimed and recorded (not yet run): what `close` waits for. */
  private readonly claiming = new Set<Promise<unknown>>();
  private started = false;
  private closed = false;
  /** The context the timers are set in (see the header). */
  private readonly context = new AsyncResource('chat-agent.scheduler');

  constructor(private readonly options: SchedulerOptions) {
    this.clock = options.clock ?? systemScheduleClock;
    this.logger = options.logger ?? silentLogger;
    this.refreshMs = Math.max(1, options.refreshMs ?? DEFAULT_SCHEDULE_REFRESH_MS);
  }

  /** How many schedules this process holds. */
  get size(): number {
    return this.tracked.size;
  }

  /**
   * Load every stored schedule and arm the timer. Occurrences missed while the bot was down
   * are acted on right after (within the grace: run once; older: skipped once); `idle()`
   * waits for that.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.refresh();
    this.track(this.tick());
  }

  /** A schedule just made or changed here (the service calls it after saving). */
  add(schedule: Schedule): void {
    if (this.closed) return;
    this.place(schedule, schedule.nextRunAt);
    this.arm();
  }

  /** A schedule ended here (the service calls it after deleting). */
  remove(id: string): void {
    this.tracked.delete(id);
  }

  /** Act on everything due now. The timer calls it; tests may too. Resolves when those runs have returned. */
  async tick(): Promise<void> {
    if (this.closed) return;
    const now = this.clock.now();
    if (now - this.lastRefresh >= this.refreshMs) await this.refresh();
    const due: Tracked[] = [];
    for (;;) {
      const top = this.heap.peek();
      if (!top || top.at > now) break;
      this.heap.pop();
      const entry = this.tracked.get(top.id);
      if (entry && entry.seq === top.seq) due.push(entry);
    }
    const runs = due.map((entry) => this.occurrence(entry));
    this.arm();
    await Promise.all(runs);
  }

  /** Resolves when nothing started by the timer or `start` is still running. */
  async idle(): Promise<void> {
    while (this.busy.size > 0) await Promise.all([...this.busy]);
  }

  /**
   * Stop the timer and wait for occurrences being claimed and recorded. Runs already handed
   * to `fire` are not waited for: a run is a turn, which may wait hours for an approval; the
   * session layer's own shutdown deals with turns.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.disarm();
    while (this.claiming.size > 0) await Promise.allSettled([...this.claiming]);
    this.tracked.clear();
    this.heap.clear();
  }

  /**
   * Read the store's index: schedules made elsewhere join, ended ones leave. Records already
   * held are not re-read (an instance that ran an occurrence first is found out by the claim).
   */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        // A schedule added here while the index is being read may be missing from what is read.
        const placedBefore = this.seq;
        const ids = await this.options.store.ids();
        const present = new Set(ids);
        for (const [id, entry] of this.tracked)
          if (!present.has(id) && entry.seq <= placedBefore) this.tracked.delete(id);
        const fresh = ids.filter((id) => !this.tracked.has(id));
        for (const schedule of await this.options.store.many(fresh)) {
          if (!this.tracked.has(schedule.id)) this.place(schedule, schedule.nextRunAt);
        }
        this.lastRefresh = this.clock.now();
      } catch (error) {
        // Taken as a refresh that is due again in RETRY_MS, so the next try comes in RETRY_MS, not at once.
        this.lastRefresh = this.clock.now() - this.refreshMs + Math.min(RETRY_MS, this.refreshMs);
        this.logger.warn({ err: error }, 'schedules: could not read the stored schedules; trying again soon');
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Hold `schedule` and queue it for `dueAt`, or let it go when nothing is left to run. */
  private place(schedule: Schedule, dueAt: number | null, wakeAt: number | null = dueAt): void {
    if (dueAt === null || wakeAt === null) {
      this.tracked.delete(schedule.id);
      return;
    }
    const seq = ++this.seq;
    this.tracked.set(schedule.id, { schedule, dueAt, seq });
    this.heap.push({ at: wakeAt, id: schedule.id, seq });
  }

  /** Claim one occurrence, and run it (or report it missed) if this instance won. */
  private async occurrence(entry: Tracked): Promise<void> {
    const claiming = this.claimAndRecord(entry);
    this.claiming.add(claiming);
    let run: (() => Promise<void>) | undefined;
    try {
      run = await claiming;
    } finally {
      this.claiming.delete(claiming);
    }
    await run?.();
  }

  /**
   * The part of an occurrence that decides: the claim, the re-read and the record. Resolves
   * with the run to make when this instance won, else undefined.
   */
  private async claimAndRecord(entry: Tracked): Promise<(() => Promise<void>) | undefined> {
    const { id, spec } = entry.schedule;
    const now = this.clock.now();
    const dueAt = latestDue(spec, entry.dueAt, now);
    const handled = entry.schedule.lastDueAt;
    if (handled !== undefined && dueAt <= handled) {
      this.moveOn(entry, Math.max(handled, now));
      return undefined;
    }
    let won: boolean;
    let current: Schedule | undefined;
    try {
      won = await this.options.claim(`schedule:${id}:${dueAt}`);
      // The winner reads the record again: another instance may have ended it meanwhile.
      current = won ? await this.options.store.get(id) : undefined;
    } catch (error) {
      this.logger.warn(
        { err: error, schedule: id, dueAt },
        'schedules: could not claim an occurrence; trying again soon',
      );
      if (this.tracked.get(id) === entry) this.place(entry.schedule, entry.dueAt, now + RETRY_MS);
      this.arm();
      return undefined;
    }
    if (!won) {
      this.moveOn(entry, Math.max(dueAt, now));
      return undefined;
    }
    if (!current || current.nextRunAt === null) {
      if (this.tracked.get(id) === entry) this.tracked.delete(id);
      return undefined;
    }
    if (current.lastDueAt !== undefined && current.lastDueAt >= dueAt) {
      if (this.tracked.get(id) === entry)
        this.place(current, nextRunAfter(current.spec, Math.max(current.lastDueAt, now)));
      this.arm();
      return undefined;
    }
    const late = now - dueAt > this.options.graceMs;
    const next = nextRunAfter(current.spec, Math.max(dueAt, now));
    const recorded: Schedule = { ...current, lastDueAt: dueAt, nextRunAt: next };
    try {
      if (next === null) await this.options.store.delete(id);
      else if (!(await this.options.store.update(recorded))) {
        // Ended while this run was being claimed: it does not run, and is not put back.
        if (this.tracked.get(id) === entry) this.tracked.delete(id);
        return undefined;
      }
    } catch (error) {
      // The claim is what makes the occurrence once: it still runs.
      this.logger.error({ err: error, schedule: id, dueAt }, 'schedules: could not record an occurrence in the store');
    }
    if (this.tracked.get(id) === entry) this.place(recorded, next);
    this.arm();
    return async () => {
      try {
        if (late) await this.options.skipped(recorded, dueAt, 'missed');
        else await this.options.fire(recorded, dueAt);
      } catch (error) {
        this.logger.error(
          { err: error, schedule: id, dueAt },
          late ? 'schedules: reporting a missed run failed' : 'schedules: a scheduled run failed',
        );
      }
    };
  }

  /** This instance's copy moves to the spec's next instant after `after`. */
  private moveOn(entry: Tracked, after: number): void {
    if (this.tracked.get(entry.schedule.id) !== entry) return;
    this.place(entry.schedule, nextRunAfter(entry.schedule.spec, after));
    this.arm();
  }

  /** One timer, for the earliest due instant, never further away than the next refresh. */
  private arm(): void {
    if (this.closed || !this.started) return;
    let top = this.heap.peek();
    while (top && this.tracked.get(top.id)?.seq !== top.seq) {
      this.heap.pop();
      top = this.heap.peek();
    }
    const now = this.clock.now();
    const wakeAt = Math.min(
      top?.at ?? Number.POSITIVE_INFINITY,
      Math.max(now, this.lastRefresh + this.refreshMs),
      now + this.refreshMs,
    );
    if (wakeAt >= this.timerAt && this.timer !== undefined) return;
    this.disarm();
    this.timerAt = wakeAt;
    const wake = (): void => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.track(this.tick().finally(() => this.arm()));
    };
    this.timer = this.context.runInAsyncScope(() =>
      this.clock.setTimer(() => this.context.runInAsyncScope(wake), Math.max(0, wakeAt - now)),
    );
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) =>
      this.logger.error({ err: error }, 'schedules: the scheduler loop failed'),
    );
    this.busy.add(tracked);
    void tracked.finally(() => this.busy.delete(tracked));
  }
}
