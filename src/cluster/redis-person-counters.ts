// A person's starts and working threads in the cluster's Redis (the coordination seam's
// PersonCounters in cluster mode): TURNS_PER_USER_PER_MINUTE and THREADS_PER_USER hold for the
// whole bot, whichever instance takes a person's messages.
//
// - A start is one script: check the person's working threads and last minute's starts, and
//   count both, or refuse (limit-scripts.ts `personStart`).
// - A working thread is held by a lease that this instance renews while the thread works
//   (`renew`, from the coordinator's renewal loop). An instance that dies stops renewing: its
//   threads stop counting a lease later.
import type { Redis } from 'ioredis';
import type { PersonCounters, PersonLimits, StartCount } from '../sessions/person-counters.js';
import { START_WINDOW_MS } from '../sessions/person-counters.js';
import type { ClusterKeys } from './cluster-keys.js';
import { LimitScripts } from './limit-scripts.js';

export class RedisPersonCounters implements PersonCounters {
  private readonly scripts: LimitScripts;
  /** The threads this instance holds, `userId \0 sessionId` → both. */
  private readonly held = new Map<string, { userId: string; sessionId: string }>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly leaseMs: number,
  ) {
    this.scripts = new LimitScripts(redis);
  }

  async tryStart(userId: string, sessionId: string, startId: string, limits: PersonLimits): Promise<StartCount> {
    const reply = (await this.scripts.run(
      'personStart',
      [this.keys.personStarts(userId), this.keys.personThreads(userId)],
      [startId, sessionId, limits.turnsPerMinute, limits.threads, START_WINDOW_MS, this.leaseMs],
    )) as number[];
    if (Number(reply[0]) === 1) {
      this.held.set(heldKey(userId, sessionId), { userId, sessionId });
      return { ok: true };
    }
    if (Number(reply[1]) === 1) return { ok: false, limit: 'threads', working: Number(reply[2]) };
    return { ok: false, limit: 'turns', recent: Number(reply[2]), retryInMs: Math.max(0, Number(reply[3])) };
  }

  async undoStart(userId: string, sessionId: string, startId: string): Promise<void> {
    this.held.delete(heldKey(userId, sessionId));
    await this.redis
      .multi()
      .zrem(this.keys.personStarts(userId), startId)
      .zrem(this.keys.personThreads(userId), sessionId)
      .exec();
  }

  async threadDone(userId: string, sessionId: string): Promise<void> {
    this.held.delete(heldKey(userId, sessionId));
    await this.redis.zrem(this.keys.personThreads(userId), sessionId);
  }

  /** Push on the leases of every thread this instance holds (one script for them all). */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const threads = [...this.held.values()];
    await this.scripts.run(
      'renewThreads',
      threads.map((thread) => this.keys.personThreads(thread.userId)),
      [this.leaseMs, ...threads.map((thread) => thread.sessionId)],
    );
  }

  /** Stop holding anything (a graceful stop): the threads' turns are carried on elsewhere, uncounted, as after a restart. */
  async releaseAll(): Promise<void> {
    const threads = [...this.held.values()];
    this.held.clear();
    if (threads.length === 0) return;
    const multi = this.redis.multi();
    for (const thread of threads) multi.zrem(this.keys.personThreads(thread.userId), thread.sessionId);
    await multi.exec();
  }
}

function heldKey(userId: string, sessionId: string): string {
  return `${userId}\0${sessionId}`;
}
