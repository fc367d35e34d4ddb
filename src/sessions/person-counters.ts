// A person's starts and working threads in one process (the coordination seam's in-process
// PersonCounters; cluster mode counts them in Redis, src/cluster/redis-person-counters.ts).
// A start is remembered for a minute; a thread counts as working from the start that made it
// work until its turn is over (`threadDone`). Check and count are one synchronous step, so two
// messages at once cannot both take the last place.
//
// The seam itself (PersonCounters, part of the coordinator, coordination.ts) is named here,
// beside its in-process form, so that the coordinator and the counters do not import each other.

/** What one person may start: turns per minute, and threads working for them at once. */
export interface PersonLimits {
  turnsPerMinute: number;
  threads: number;
}

export type StartCount =
  | { ok: true }
  /** `working`: their other threads working now. */
  | { ok: false; limit: 'threads'; working: number }
  /** `recent`: their starts in the last minute; `retryInMs`: until the oldest leaves the minute. */
  | { ok: false; limit: 'turns'; recent: number; retryInMs: number };

/**
 * A person's starts and working threads, counted for the whole bot (src/sessions/fair-use.ts
 * words the refusals): in this process here (InProcessPersonCounters), in Redis in cluster mode.
 */
export interface PersonCounters {
  /**
   * One step: refused when `userId` has `limits.threads` threads working besides `sessionId`, or
   * started `limits.turnsPerMinute` turns in the last minute; else the start (`startId`) is
   * counted, and `sessionId` works for them until `threadDone`.
   */
  tryStart(userId: string, sessionId: string, startId: string, limits: PersonLimits): Promise<StartCount>;
  /** A counted start that did not happen after all (a spend limit refused it): neither it nor the thread counts. */
  undoStart(userId: string, sessionId: string, startId: string): Promise<void>;
  /** The thread's turn is over: it no longer works for `userId`. */
  threadDone(userId: string, sessionId: string): Promise<void>;
}

/** The window TURNS_PER_USER_PER_MINUTE counts in. */
export const START_WINDOW_MS = 60_000;
/** People whose recent starts are tracked at once; the oldest drop out first (their minute has long passed). */
const MAX_TRACKED_PEOPLE = 10_000;

export class InProcessPersonCounters implements PersonCounters {
  private readonly starts = new Map<string, { id: string; at: number }[]>();
  private readonly threads = new Map<string, Set<string>>();

  constructor(private readonly now: () => number = Date.now) {}

  tryStart(userId: string, sessionId: string, startId: string, limits: PersonLimits): Promise<StartCount> {
    const now = this.now();
    const working = this.threads.get(userId);
    const others = (working?.size ?? 0) - (working?.has(sessionId) ? 1 : 0);
    if (others >= limits.threads) return Promise.resolve({ ok: false, limit: 'threads', working: others });
    const recent = (this.starts.get(userId) ?? []).filter((start) => now - start.at < START_WINDOW_MS);
    if (recent.length >= limits.turnsPerMinute) {
      return Promise.resolve({
        ok: false,
        limit: 'turns',
        recent: recent.length,
        retryInMs: START_WINDOW_MS - (now - recent[0]!.at),
      });
    }
    // Map order is recency order: the person moves to the end, the longest quiet drop out first.
    this.starts.delete(userId);
    this.starts.set(userId, [...recent, { id: startId, at: now }]);
    if (this.starts.size > MAX_TRACKED_PEOPLE) this.starts.delete(this.starts.keys().next().value!);
    if (working) working.add(sessionId);
    else this.threads.set(userId, new Set([sessionId]));
    return Promise.resolve({ ok: true });
  }

  undoStart(userId: string, sessionId: string, startId: string): Promise<void> {
    const starts = this.starts.get(userId)?.filter((start) => start.id !== startId);
    if (starts?.length) this.starts.set(userId, starts);
    else this.starts.delete(userId);
    return this.threadDone(userId, sessionId);
  }

  threadDone(userId: string, sessionId: string): Promise<void> {
    const working = this.threads.get(userId);
    working?.delete(sessionId);
    if (working?.size === 0) this.threads.delete(userId);
    return Promise.resolve();
  }
}
