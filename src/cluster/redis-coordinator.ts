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
// This file holds which leases this instance has and what it does about them; every Redis step
// of the protocol is in lease-protocol.ts, the timers that renew, poll and sweep in
// background-checks.ts. Nothing outside src/cluster and the session layer's routing knows this
// runs instead of the in-process coordinator.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { EngineLogger } from '../engine/index.js';
import { KeyedMutex } from '../store/keyed-mutex.js';
import {
  OwnedElsewhereError,
  TurnOwners,
  type CommandHandler,
  type OwnershipEvents,
  type RoutingCoordinator,
  type SessionCommand,
  type TurnLease,
} from '../sessions/coordination.js';
import { BackgroundChecks } from './background-checks.js';
import { clusterKeys, type ClusterKeys } from './cluster-keys.js';
import { fenceScope } from './fence-scope.js';
import { LeaseProtocol } from './lease-protocol.js';
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

const DEFAULT_CLUSTER_TIMINGS: ClusterTimings = { leaseMs: 15_000, sweepMs: 2_000, pollMs: 1_000 };

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
  private readonly protocol: LeaseProtocol;
  private readonly checks: BackgroundChecks;
  private readonly mutex = new KeyedMutex();
  private readonly held = new Map<string, HeldLease>();
  private readonly turnOwners = new TurnOwners();
  private readonly acquiring = new Map<string, Promise<boolean>>();
  private handler: CommandHandler | undefined;
  private events: OwnershipEvents | undefined;
  private closed = false;
  /** A person's starts and working threads, for the whole cluster. */
  readonly people: RedisPersonCounters;
  private slots: RedisModelSlots | undefined;

  constructor(private readonly options: RedisCoordinatorOptions) {
    this.nodeId = options.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.keys = options.keys ?? clusterKeys();
    this.timings = { ...DEFAULT_CLUSTER_TIMINGS, ...options.timings };
    this.protocol = new LeaseProtocol(options.redis, this.keys, this.nodeId, this.timings.leaseMs);
    this.checks = new BackgroundChecks(options.logger, () => this.closed);
    this.people = new RedisPersonCounters(options.redis, this.keys, this.timings.leaseMs);
  }

  /** The cluster's `max` model call slots (MAX_CONCURRENT_MODEL_CALLS), for the model-call gate. Ask before `start`. */
  modelSlots(max: number): RedisModelSlots {
    this.slots ??= new RedisModelSlots({
      redis: this.options.redis,
      subscriber: this.options.subscriber,
      keys: this.keys,
      nodeId: this.nodeId,
      max,
      leaseMs: this.timings.leaseMs,
      pollMs: this.timings.pollMs,
      logger: this.options.logger,
    });
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
    this.checks.every('renew', Math.max(50, Math.floor(this.timings.leaseMs / 3)), () => this.renewAll());
    this.checks.every('limits', Math.max(50, Math.floor(this.timings.leaseMs / 3)), async () => {
      await this.people.renew();
      await this.slots?.renew();
    });
    this.checks.every('poll', this.timings.pollMs, () => this.pollCommands());
    this.checks.every('sweep', this.timings.sweepMs, () => this.sweep());
  }

  watch(events: OwnershipEvents): void {
    this.events = events;
  }

  // ---- ingress -----------------------------------------------------------------------

  claimEvent(eventId: string): Promise<boolean> {
    return this.protocol.claimEvent(eventId);
  }

  enqueue(sessionId: string, command: string, eventId?: string): Promise<boolean> {
    return this.protocol.claimAndEnqueue(sessionId, command, eventId);
  }

  resolveOnce(itemId: string): Promise<boolean> {
    return this.protocol.resolveOnce(itemId);
  }

  /** Give a resolve-once claim back (the answer could not be recorded). */
  unresolve(itemId: string): Promise<void> {
    return this.protocol.unresolve(itemId);
  }

  poke(sessionId: string): Promise<void> {
    return this.protocol.poke(sessionId);
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
    const token = await this.protocol.acquire(sessionId);
    if (token === undefined) return false;
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
      const result = await this.protocol.releaseIfIdle(sessionId, lease.token);
      if (result === 'pending') return 'pending';
      this.held.delete(sessionId);
      if (result === 'lost') {
        this.events?.lost(sessionId);
        return 'lost';
      }
      return 'released';
    });
  }

  commands(sessionId: string): Promise<string[]> {
    return this.protocol.commands(sessionId);
  }

  async consume(sessionId: string, command: string): Promise<boolean> {
    const lease = this.held.get(sessionId);
    if (!lease) return false;
    if (!(await this.protocol.consume(sessionId, lease.token, command))) {
      this.drop(sessionId);
      return false;
    }
    return true;
  }

  /** Whether the session was handed over by a graceful stop (and forget that it was). */
  handedOver(sessionId: string): Promise<boolean> {
    return this.protocol.handedOver(sessionId);
  }

  async handOver(): Promise<void> {
    // From now on this instance takes no lease (a turn ending during the shutdown would).
    this.closed = true;
    for (const [sessionId, lease] of [...this.held]) {
      this.held.delete(sessionId);
      await this.protocol.handOver(sessionId, lease.token).catch((error: unknown) => {
        this.options.logger.warn(
          { err: error, sessionId },
          'cluster: could not hand a session over (it is taken over when its lease runs out)',
        );
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
    this.checks.stopAll();
    const held = [...this.held.keys()];
    this.held.clear();
    return held;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.checks.stopAll();
    await this.handOver();
    // What this instance counted is given back now rather than a lease later.
    await this.people
      .releaseAll()
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error },
          'cluster: could not give back the working threads (they lapse with their leases)',
        ),
      );
    await this.slots
      ?.releaseAll()
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error },
          'cluster: could not give back the model call slots (they lapse with their leases)',
        ),
      );
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
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error, sessionId }, 'cluster: could not release a session'),
      );
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
        if (await this.protocol.renew(sessionId, lease.token)) lease.renewedAt = Date.now();
        else this.drop(sessionId);
      } catch (error) {
        if (now - lease.renewedAt >= limit) {
          this.options.logger.warn(
            { err: error, sessionId },
            'cluster: could not renew a lease in time; stopping work on the session',
          );
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
      if (await this.protocol.commandsWaiting(sessionId)) this.events?.commandsWaiting(sessionId);
    }
  }

  private async sweep(): Promise<void> {
    for (const sessionId of await this.protocol.overdue()) {
      // A live lease (renewed late) makes the takeover's acquire fail: nothing to check first.
      if (this.held.has(sessionId) || this.mutex.isHeld(sessionId)) continue;
      this.events?.overdue(sessionId);
    }
  }
}
