// MAX_CONCURRENT_MODEL_CALLS for the whole cluster: the slots are a sorted set in Redis (slot
// id → its lease deadline), taken in one script that first drops the slots whose deadline
// passed (limit-scripts.ts `takeSlot`). The model-call gate of each instance
// (src/providers/model-gate.ts) takes a slot per call and releases it when the call ends.
//
// - Held slots are renewed with the instance's other leases (`renew`): a call may stream for
//   minutes. An instance that dies stops renewing, and its slots come back a lease later.
// - A release publishes a hint, so an instance whose calls wait takes the slot at once; a poll
//   every `pollMs` covers a hint that was lost and a slot that came back by its lease running out.
// - Redis down: a call that would take a slot waits (and its thread says so) until Redis
//   answers or the call is stopped, with a warning in the log; a release that fails lapses.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { EngineLogger } from '../engine/index.js';
import type { SharedSlots } from '../providers/model-gate.js';
import type { ClusterKeys } from './cluster-keys.js';
import { LimitScripts } from './limit-scripts.js';

/** A failing Redis warns on its 1st, 50th, 100th… failure, not on every call. */
const FAILURES_BETWEEN_WARNINGS = 50;

export interface RedisModelSlotsOptions {
  redis: Redis;
  /** The coordinator's Pub/Sub connection (subscribed: it can do nothing else). */
  subscriber: Redis;
  keys: ClusterKeys;
  nodeId: string;
  max: number;
  leaseMs: number;
  pollMs: number;
  logger: EngineLogger;
}

export class RedisModelSlots implements SharedSlots {
  private readonly scripts: LimitScripts;
  private readonly held = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private sequence = 0;
  private failures = 0;
  private readonly prefix = randomBytes(3).toString('hex');

  constructor(private readonly options: RedisModelSlotsOptions) {
    this.scripts = new LimitScripts(options.redis);
  }

  /** Hear other instances' releases (called once, with the coordinator's start). */
  async listen(): Promise<void> {
    const channel = this.options.keys.modelSlotFreed;
    this.options.subscriber.on('message', (from: string) => {
      if (from === channel) this.wakeAll();
    });
    await this.options.subscriber.subscribe(channel);
  }

  async take(): Promise<(() => void) | undefined> {
    const id = `${this.options.nodeId}:${this.prefix}:${++this.sequence}`;
    let taken: number;
    try {
      taken = Number(
        await this.scripts.run(
          'takeSlot',
          [this.options.keys.modelSlots],
          [id, this.options.max, this.options.leaseMs],
        ),
      );
    } catch (error) {
      this.failed(error, 'cluster: could not take a model call slot; the call waits');
      return undefined;
    }
    this.failures = 0;
    if (taken !== 1) return undefined;
    this.held.add(id);
    return () => this.release(id);
  }

  whenFreed(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, this.options.pollMs);
      timer.unref();
      this.waiters.add(done);
      if (signal.aborted) done();
      else signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Push on the leases of every slot this instance holds. */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const lost = Number(
      await this.scripts.run(
        'renewSlots',
        [this.options.keys.modelSlots],
        [this.options.max, this.options.leaseMs, ...this.held],
      ),
    );
    // A pause past the lease let others take the slots meanwhile: the calls go on, over the limit for a while.
    if (lost > 0)
      this.options.logger.warn(
        { lost },
        'cluster: model call slots lapsed while their calls ran (a pause longer than the lease)',
      );
  }

  /** Give back every slot held (a graceful stop: the calls in flight end with it). */
  async releaseAll(): Promise<void> {
    const ids = [...this.held];
    this.held.clear();
    if (ids.length === 0) return;
    await this.options.redis.zrem(this.options.keys.modelSlots, ...ids);
    await this.options.redis.publish(this.options.keys.modelSlotFreed, '1');
  }

  private release(id: string): void {
    if (!this.held.delete(id)) return;
    // Waiters here need no hint from Redis: the gate wakes its own line.
    this.options.redis
      .multi()
      .zrem(this.options.keys.modelSlots, id)
      .publish(this.options.keys.modelSlotFreed, '1')
      .exec()
      .catch((error: unknown) =>
        this.failed(error, 'cluster: could not give a model call slot back; it comes back when its lease runs out'),
      );
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private failed(error: unknown, message: string): void {
    this.failures++;
    if (this.failures === 1 || this.failures % FAILURES_BETWEEN_WARNINGS === 0)
      this.options.logger.warn({ err: error, failures: this.failures }, message);
  }
}
