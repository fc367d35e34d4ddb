// Every Redis step of the session lease protocol, as typed calls: which keys and arguments
// each step takes (lease-scripts.ts holds the scripts themselves) and what its answer means.
// It keeps no state: which leases this instance holds, and what it does when it loses one,
// is the coordinator's (redis-coordinator.ts). A token is the lease's value, `{node}:{epoch}`;
// a step given a token that no longer matches the lease does nothing and says so.
import type { Redis } from 'ioredis';
import { EVENT_DEDUP_TTL_MS } from '../sessions/coordination.js';
import type { ClusterKeys } from './cluster-keys.js';
import { LeaseScripts } from './lease-scripts.js';

/** At most this many overdue sessions are handed to one sweep. */
const OVERDUE_PER_SWEEP = 50;

export class LeaseProtocol {
  private readonly scripts: LeaseScripts;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly nodeId: string,
    private readonly leaseMs: number,
  ) {
    this.scripts = new LeaseScripts(redis);
  }

  // ---- ingress -----------------------------------------------------------------------

  /** A platform event's de-duplication claim. False: another instance (or a retry) claimed it first. */
  async claimEvent(eventId: string): Promise<boolean> {
    return (await this.redis.set(this.keys.event(eventId), '1', 'PX', EVENT_DEDUP_TTL_MS, 'NX')) === 'OK';
  }

  /** The event's claim (when `eventId` is given) and the push on the session's command list, in one step. False: a duplicate. */
  async claimAndEnqueue(sessionId: string, command: string, eventId?: string): Promise<boolean> {
    const result = await this.scripts.run(
      'claimAndEnqueue',
      [this.keys.event(eventId ?? ''), this.keys.commands(sessionId), this.keys.running],
      [eventId ? '1' : '0', EVENT_DEDUP_TTL_MS, command, sessionId, this.leaseMs],
    );
    return result === 1;
  }

  async resolveOnce(itemId: string): Promise<boolean> {
    return (await this.redis.set(this.keys.resolved(itemId), this.nodeId, 'PX', EVENT_DEDUP_TTL_MS, 'NX')) === 'OK';
  }

  /** Give a resolve-once claim back, if it is still this instance's. */
  async unresolve(itemId: string): Promise<void> {
    await this.scripts.run('dropIfMine', [this.keys.resolved(itemId)], [this.nodeId]);
  }

  /** Publish a wake-up hint to the instance that holds the session's lease, if any does. */
  async poke(sessionId: string): Promise<void> {
    const holder = await this.redis.get(this.keys.lease(sessionId));
    const node = holder?.slice(0, holder.lastIndexOf(':'));
    if (node) await this.redis.publish(this.keys.poke(node), sessionId);
  }

  // ---- one session's lease -------------------------------------------------------------

  /** Take the lease if it is free. Its token, or undefined: another instance holds it. */
  async acquire(sessionId: string): Promise<string | undefined> {
    const [acquired, token] = (await this.scripts.run(
      'acquire',
      [this.keys.lease(sessionId), this.keys.epoch(sessionId), this.keys.running],
      [this.nodeId, this.leaseMs, sessionId],
    )) as [number, string];
    return acquired === 1 ? token : undefined;
  }

  /** False: the lease is no longer this token's. */
  async renew(sessionId: string, token: string): Promise<boolean> {
    return (
      (await this.scripts.run(
        'renew',
        [this.keys.lease(sessionId), this.keys.running],
        [token, this.leaseMs, sessionId],
      )) === 1
    );
  }

  /** Release unless a command waits (`pending`); `lost`: the lease is no longer this token's. */
  async releaseIfIdle(sessionId: string, token: string): Promise<'released' | 'pending' | 'lost'> {
    const result = await this.scripts.run(
      'releaseIfIdle',
      [this.keys.lease(sessionId), this.keys.commands(sessionId), this.keys.running],
      [token, sessionId],
    );
    if (result === 0) return 'pending';
    return result === -1 ? 'lost' : 'released';
  }

  /** Give the lease up for another instance to take at once, marked as a hand-over (not a death) for a while. */
  async handOver(sessionId: string, token: string): Promise<void> {
    await this.scripts.run(
      'handOver',
      [this.keys.lease(sessionId), this.keys.running, this.keys.handedOver(sessionId)],
      [token, sessionId, this.leaseMs * 4],
    );
  }

  /** Whether the session was handed over by a graceful stop (and forget that it was). */
  async handedOver(sessionId: string): Promise<boolean> {
    return (await this.redis.getdel(this.keys.handedOver(sessionId))) !== null;
  }

  // ---- one session's command list --------------------------------------------------------

  async commands(sessionId: string): Promise<string[]> {
    return this.redis.lrange(this.keys.commands(sessionId), 0, -1);
  }

  async commandsWaiting(sessionId: string): Promise<boolean> {
    return (await this.redis.llen(this.keys.commands(sessionId))) > 0;
  }

  /** Remove an applied command while the lease is still this token's. False: it is not any more. */
  async consume(sessionId: string, token: string, command: string): Promise<boolean> {
    return (
      (await this.scripts.run(
        'consume',
        [this.keys.lease(sessionId), this.keys.commands(sessionId)],
        [token, command],
      )) !== -1
    );
  }

  // ---- the whole cluster -----------------------------------------------------------------

  /** Sessions whose lease deadline passed: their owner may be dead. */
  async overdue(): Promise<string[]> {
    return (await this.scripts.run('overdue', [this.keys.running], [OVERDUE_PER_SWEEP])) as string[];
  }
}
