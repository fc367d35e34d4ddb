// The coordination seam on Redis (cluster mode): several identical instances share one Redis,
// and each session is owned by at most one of them at a time.
//
// - Ownership is a lease (`SET NX PX`) whose value `{node}:{epoch}` is the fencing token: the
//   epoch is INCR'd at every acquire. The owner renews it every third of its time. Work done
//   for a session runs in its fence scope (fence-scope.ts), and the Redis document store
//   checks the token atomically on every write made there: a paused or partitioned former
//   owner cannot write. An owner that cannot renew stops acting on the session by itself
//   (`lost`) before its lease can expire.
// - Inbound actions become commands on the session's durable list, pushed together with the
//   event's de-duplication claim in one script, before the platform is acknowledged. The
//   owner drains the list (woken by a Pub/Sub poke, with a poll as back-up), and releases
//   the lease only when the list is empty, in one script: nothing is stranded.
// - A sweep takes over sessions whose lease ran out (their owner died): the session layer
//   then runs the same recovery as after a restart.
// - The limits that must hold for the whole bot, not per instance: a person's starts and
//   working threads (redis-person-counters.ts) and the model calls in flight
//   (redis-model-slots.ts). What an instance holds of them is renewed with its leases, and
//   lapses a lease after it dies.
//
// Nothing outside src/cluster and the session layer's routing knows this runs instead of the
// in-process coordinator.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { EngineLogger } from '../engine/index.js';
import { KeyedMutex } from '../store/keyed-mutex.js';
import { EVENT_DEDUP_TTL_MS, OwnedElsewhereError, TurnOwners, type CommandHandler, type OwnershipEvents, type RoutingCoordinator, type SessionCommand, type TurnLease } from '../sessions/coordination.js';
import { clusterKeys, type ClusterKeys } from './cluster-keys.js';
import { fenceScope } from './fence-scope.js';
import { LeaseScripts } from './lease-scripts.js';
import { RedisModelSlots } from './redis-model-slots.js';
import { RedisPersonCounters } from './redis-person-counters.js';

export interface ClusterTimings {
  /** How long a lease lasts without renewal (default 15 s). Takeover after a death: this plus a sweep. */
  leaseMs: number;
  /** How often every instance looks for sessions whose owner stopped renewing (default 2 s). */
  sweepMs: number;
  /** How often an owner checks its sessions' command lists without a poke (default 1 s). */
  pollMs: number;
}

/** A background check that keeps failing (Redis down) warns on its 1st, 50th, 100th… failure. */
const FAILURES_BETWEEN_WARNINGS = 50;

export const DEFAULT_CLUSTER_TIMINGS: ClusterTimings = { leaseMs: 15_000, sweepMs: 2_000, pollMs: 1_000 };

export interface RedisCoordinatorOptions {
  /** For commands and scripts. */
  redis: Redis;
  /** A second connection, for Pub/Sub (a subscribed connection can do nothing else). */
  subscriber: Redis;
  /** This instance's name in leases (default: host, pid and a random suffix). */
  nodeId?: string;
  keys?: ClusterKeys;
  timings?: Partial<ClusterTimings>;
  logger: EngineLogger;
  /** Called last by `close` (the subscriber connection is the caller's). */
  onClose?: () => Promise<void>;
}

interface HeldLease {
  token: string;
  /** When the last renewal succeeded (local clock): past `leaseMs` minus a margin, we stop acting. */
  renewedAt: number;
}

export class RedisCoordinator implements RoutingCoordinator {
  readonly routes = true as const;
  readonly nodeId: string;
  private readonly keys: ClusterKeys;
  private readonly timings: ClusterTimings;
  private readonly scripts: LeaseScripts;
  private readonly mutex = new KeyedMutex();
  private readonly held = new Map<string, HeldLease>();
  private readonly turnOwners = new TurnOwners();
  private readonly acquiring = new Map<string, Promise<boolean>>();
  private handler: CommandHandler | undefined;
  private events: OwnershipEvents | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;
  /** A person's starts and working threads, for the whole cluster. */
  readonly people: RedisPersonCounters;
  private slots: RedisModelSlots | undefined;

  constructor(private readonly options: RedisCoordinatorOptions) {
    this.nodeId = options.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.keys = options.keys ?? clusterKeys();
    this.timings = { ...DEFAULT_CLUSTER_TIMINGS, ...options.timings };
    this.scripts = new LeaseScripts(options.redis);
    this.people = new RedisPersonCounters(options.redis, this.keys, this.timings.leaseMs);
  }

  /** The cluster's `max` model call slots (MAX_CONCURRENT_MODEL_CALLS), for the model-call gate. Ask before `start`. */
  modelSlots(max: number): RedisModelSlots {
    this.slots ??= new RedisModelSlots({ redis: this.options.redis, subscriber: this.options.subscriber, keys: this.keys, nodeId: this.nodeId, max, leaseMs: this.timings.leaseMs, pollMs: this.timings.pollMs, logger: this.options.logger });
    return this.slots;
  }

  /** Subscribe to this instance's pokes and start renewing, polling and sweeping. */
  async start(): Promise<void> {
    const channel = this.keys.poke(this.nodeId);
    this.options.subscriber.on('message', (from: string, sessionId: string) => {
      if (from === channel && this.held.has(sessionId)) this.events?.commandsWaiting(sessionId);
    });
    // Connected already (redis-keyv-store.ts connectedDuplicate): the store's settings fail a command sent while disconnected.
    await this.options.subscriber.subscribe(channel);
    await this.slots?.listen();
    const every = (check: string, ms: number, work: () => Promise<void>): void => {
      let running = false;
      // While Redis is down every check fails, every sweep period (200 ms in the cluster
      // tests): say so on the first failure, then every FAILURES_BETWEEN_WARNINGS-th, and once
      // when it works again, instead of a stack trace per attempt.
      let failures = 0;
      const timer = setInterval(() => {
        if (running || this.closed) return;
        running = true;
        work()
          .then(() => {
            if (failures > 0) this.options.logger.info({ check, failures }, 'cluster: background check works again');
            failures = 0;
          })
          .catch((error: unknown) => {
            failures++;
            if (failures === 1 || failures % FAILURES_BETWEEN_WARNINGS === 0) this.options.logger.warn({ err: error, check, failures }, 'cluster: background check failed');
          })
          .finally(() => (running = false));
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every('renew', Math.max(50, Math.floor(this.timings.leaseMs / 3)), () => this.renewAll());
    every('limits', Math.max(50, Math.floor(this.timings.leaseMs / 3)), async () => {
      await this.people.renew();
      await this.slots?.renew();
    });
    every('poll', this.timings.pollMs, () => this.pollCommands());
    every('sweep', this.timings.sweepMs, () => this.sweep());
  }

  watch(events: OwnershipEvents): void {
    this.events = events;
  }

  // ---- ingress -----------------------------------------------------------------------

  async claimEvent(eventId: string): Promise<boolean> {
    return (await this.options.redis.set(this.keys.event(eventId), '1', 'PX', EVENT_DEDUP_TTL_MS, 'NX')) === 'OK';
  }

  async enqueue(sessionId: string, command: string, eventId?: string): Promise<boolean> {
    const result = await this.scripts.run(
      'claimAndEnqueue',
      [this.keys.event(eventId ?? ''), this.keys.commands(sessionId), this.keys.running],
      [eventId ? '1' : '0', EVENT_DEDUP_TTL_MS, command, sessionId, this.timings.leaseMs],
    );
    return result === 1;
  }

  async resolveOnce(itemId: string): Promise<boolean> {
    return (await this.options.redis.set(this.keys.resolved(itemId), this.nodeId, 'PX', EVENT_DEDUP_TTL_MS, 'NX')) === 'OK';
  }

  /** Give a resolve-once claim back (the answer could not be recorded). */
  async unresolve(itemId: string): Promise<void> {
    await this.scripts.run('dropIfMine', [this.keys.resolved(itemId)], [this.nodeId]);
  }

  async poke(sessionId: string): Promise<void> {
    const holder = await this.options.redis.get(this.keys.lease(sessionId));
    const node = holder?.slice(0, holder.lastIndexOf(':'));
    if (node) await this.options.redis.publish(this.keys.poke(node), sessionId);
  }

  // ---- ownership ---------------------------------------------------------------------

  owns(sessionId: string): boolean {
    return this.held.has(sessionId);
  }

  /** Hold the session's lease; one acquire at a time per session (two at once here would see each other as the owner). */
  own(sessionId: string): Promise<boolean> {
    if (this.held.has(sessionId)) return Promise.resolve(true);
    const pending = this.acquiring.get(sessionId);
    if (pending) return pending;
    const acquiring = this.acquire(sessionId).finally(() => this.acquiring.delete(sessionId));
    this.acquiring.set(sessionId, acquiring);
    return acquiring;
  }

  private async acquire(sessionId: string): Promise<boolean> {
    if (this.closed) return false;
    const [acquired, token] = (await this.scripts.run('acquire', [this.keys.lease(sessionId), this.keys.epoch(sessionId), this.keys.running], [this.nodeId, this.timings.leaseMs, sessionId])) as [number, string];
    if (acquired !== 1) return false;
    this.held.set(sessionId, { token, renewedAt: Date.now() });
    this.events?.acquired(sessionId);
    return true;
  }

  /**
   * Release the lease unless the session is busy or a command waits. Under the session's
   * lock, like every exclusive section: a release can never fall in the middle of one (whose
   * writes would then be refused), and a turn started just before is seen busy.
   */
  releaseIfIdle(sessionId: string): Promise<'released' | 'pending' | 'busy' | 'lost'> {
    return this.mutex.run(sessionId, async () => {
      const lease = this.held.get(sessionId);
      if (!lease) return 'lost';
      if (this.events?.busy(sessionId)) return 'busy';
      const result = await this.scripts.run('releaseIfIdle', [this.keys.lease(sessionId), this.keys.commands(sessionId), this.keys.running], [lease.token, sessionId]);
      if (result === 0) return 'pending';
      this.held.delete(sessionId);
      if (result === -1) {
        this.events?.lost(sessionId);
        return 'lost';
      }
      return 'released';
    });
  }

  async commands(sessionId: string): Promise<string[]> {
    return this.options.redis.lrange(this.keys.commands(sessionId), 0, -1);
  }

  async consume(sessionId: string, command: string): Promise<boolean> {
    const lease = this.held.get(sessionId);
    if (!lease) return false;
    const result = await this.scripts.run('consume', [this.keys.lease(sessionId), this.keys.commands(sessionId)], [lease.token, command]);
    if (result === -1) {
      this.drop(sessionId);
      return false;
    }
    return true;
  }

  /** Whether the session was handed over by a graceful stop (and forget that it was). */
  async handedOver(sessionId: string): Promise<boolean> {
    return (await this.options.redis.getdel(this.keys.handedOver(sessionId))) !== null;
  }

  async handOver(): Promise<void> {
    // From now on this instance takes no lease (a turn ending during the shutdown would).
    this.closed = true;
    for (const [sessionId, lease] of [...this.held]) {
      this.held.delete(sessionId);
      await this.scripts.run('handOver', [this.keys.lease(sessionId), this.keys.running, this.keys.handedOver(sessionId)], [lease.token, sessionId, this.timings.leaseMs * 4]).catch((error: unknown) => {
        this.options.logger.warn({ err: error, sessionId }, 'cluster: could not hand a session over (it is taken over when its lease runs out)');
      });
    }
  }

  /**
   * Stop everything this instance does in the cluster, as a killed process would: no renewal,
   * no sweep, no hand-over. Returns the sessions whose leases it held, which run out on their
   * own. (Tests that play a death in-process; a real death needs no call.)
   */
  halt(): string[] {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    const held = [...this.held.keys()];
    this.held.clear();
    return held;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.handOver();
    // What this instance counted is given back now rather than a lease later.
    await this.people.releaseAll().catch((error: unknown) => this.options.logger.warn({ err: error }, 'cluster: could not give back the working threads (they lapse with their leases)'));
    await this.slots?.releaseAll().catch((error: unknown) => this.options.logger.warn({ err: error }, 'cluster: could not give back the model call slots (they lapse with their leases)'));
    await this.options.onClose?.();
  }

  // ---- the Coordinator seam -----------------------------------------------------------

  acquireTurn(sessionId: string): TurnLease | undefined {
    return this.turnOwners.acquire(sessionId);
  }

  isTurnOwned(sessionId: string): boolean {
    return this.turnOwners.has(sessionId) && this.held.has(sessionId);
  }

  isLocked(sessionId: string): boolean {
    return this.mutex.isHeld(sessionId) || this.held.has(sessionId);
  }

  /**
   * The session's lock on this instance, and its lease in the cluster. The work runs in the
   * session's fence scope, so every store write it makes is checked against the lease. When
   * it ends and the session needs no owner any more, the lease is released (unless a command
   * waits: then the owner drains it).
   */
  async exclusive<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const result = await this.mutex.run(sessionId, async () => {
      if (!(await this.own(sessionId))) throw new OwnedElsewhereError(sessionId);
      const lease = this.held.get(sessionId)!;
      return fenceScope.run({ sessionId, leaseKey: this.keys.lease(sessionId), token: lease.token }, work);
    });
    this.settle(sessionId);
    return result;
  }

  /** Release the lease of a session that needs no owner now; drain if a command waits. */
  settle(sessionId: string): void {
    if (!this.held.has(sessionId)) return;
    void this.releaseIfIdle(sessionId)
      .then((outcome) => {
        if (outcome === 'pending') this.events?.commandsWaiting(sessionId);
      })
      .catch((error: unknown) => this.options.logger.warn({ err: error, sessionId }, 'cluster: could not release a session'));
  }

  serve(handler: CommandHandler): void {
    this.handler = handler;
  }

  /** The owner's own commands (steer, stop, resolved) are applied here, at once: only the owner sends them. */
  async dispatch(sessionId: string, command: SessionCommand): Promise<void> {
    if (!this.handler) throw new Error('no worker serves session commands yet');
    await this.handler(sessionId, command);
  }

  // ---- background --------------------------------------------------------------------

  private async renewAll(): Promise<void> {
    const now = Date.now();
    // Stop acting before the lease can run out elsewhere: a margin of a fifth of its time.
    const limit = this.timings.leaseMs - Math.floor(this.timings.leaseMs / 5);
    for (const [sessionId, lease] of [...this.held]) {
      try {
        const renewed = await this.scripts.run('renew', [this.keys.lease(sessionId), this.keys.running], [lease.token, this.timings.leaseMs, sessionId]);
        if (renewed === 1) lease.renewedAt = Date.now();
        else this.drop(sessionId);
      } catch (error) {
        if (now - lease.renewedAt >= limit) {
          this.options.logger.warn({ err: error, sessionId }, 'cluster: could not renew a lease in time; stopping work on the session');
          this.drop(sessionId);
        }
      }
    }
  }

  /** This instance no longer owns the session: forget it and tell the session layer. */
  private drop(sessionId: string): void {
    if (!this.held.delete(sessionId)) return;
    this.events?.lost(sessionId);
  }

  private async pollCommands(): Promise<void> {
    for (const sessionId of [...this.held.keys()]) {
      if ((await this.options.redis.llen(this.keys.commands(sessionId))) > 0) this.events?.commandsWaiting(sessionId);
    }
  }

  private async sweep(): Promise<void> {
    const overdue = (await this.scripts.run('overdue', [this.keys.running], [50])) as string[];
    for (const sessionId of overdue) {
      // A live lease (renewed late) makes the takeover's acquire fail: nothing to check first.
      if (this.held.has(sessionId) || this.mutex.isHeld(sessionId)) continue;
      this.events?.overdue(sessionId);
    }
  }
}
