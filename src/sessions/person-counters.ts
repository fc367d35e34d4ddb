// A person's starts and working threads in one process (the coordination seam's in-process
// PersonCounters; cluster mode counts them in Redis, src/cluster/redis-person-counters.ts).
// A start is remembered for a minute; a thread counts as working from the start that made it
// work until its turn is over (`threadDone`). Check and count are one synchronous step, so two
// messages at once cannot both take the last place.
import type { PersonCounters, PersonLimits, StartCount } from './coordination.js';

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
      return Promise.resolve({ ok: false, limit: 'turns', recent: recent.length, retryInMs: START_WINDOW_MS - (now - recent[0]!.at) });
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
