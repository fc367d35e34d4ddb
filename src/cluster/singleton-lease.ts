// A lease held by one instance for the whole bot (cluster mode): the Discord gateway, which
// must have one holder (two gateway connections would each receive every event) while the
// other instances stand by, ready to take it when the holder dies. It is a
// Redis key `singleton:{name}` whose value is the holder's node id, with a TTL, taken and
// renewed by one script (`holdSingleton`) and dropped only by its holder (`dropIfMine`).
//
// The one idea: the holder fences itself. It renews every third of the lease; if a renewal is
// refused (another instance took the key) or none has succeeded for the lease minus a fifth
// (Redis unreachable), `onLost` runs *before* the key can expire and be taken elsewhere, so
// two holders never act at once for longer than a handover takes. A standby retries every
// `retryMs`; when the holder dies without releasing, the key runs out and the next retry
// takes it (takeover ≈ lease + retry).
//
// A stall of the holder's own process (a blocked event loop, a busy machine) is not Redis
// failing: the fence's timer then fires late, right after the renewal the stall held back was
// sent. The key cannot have run out before the last confirmed renewal's time plus the lease, so
// until then the holder waits for that renewal instead of standing down; standing down would
// drop the gateway and connect it again (a second IDENTIFY) for a lease nobody else took.
import type { Redis } from 'ioredis';
import type { EngineLogger } from '../engine/index.js';
import { LeaseScripts } from './lease-scripts.js';

export interface SingletonLeaseOptions {
  redis: Redis;
  /** The Redis key (ClusterKeys.singleton(name)). */
  key: string;
  /** This instance's name; the key's value while it holds the lease. Unique per instance. */
  nodeId: string;
  /** How long the lease lasts without renewal. */
  leaseMs: number;
  /** How often a standby tries to take it (default: a third of the lease). */
  retryMs?: number;
  logger?: EngineLogger;
}

export interface SingletonHandlers {
  /** The lease was taken from standby (not called for the first attempt: `start` returns that). */
  onAcquired(): void | Promise<void>;
  /** The lease is no longer ours (refused, or not renewed in time): stop acting at once. */
  onLost(): void | Promise<void>;
}

type State = 'idle' | 'standby' | 'held' | 'stopped';

/** The least lateness of the fence's timer taken for a stall of this process (a busy machine's timers run a few ms late). */
const STALL_SLACK_MS = 50;

export class SingletonLease {
  private readonly scripts: LeaseScripts;
  private readonly renewMs: number;
  private readonly retryMs: number;
  /** No successful renewal for this long: the holder fences itself (a margin of a fifth of the lease). */
  private readonly fenceAfterMs: number;
  /** A fence that fires this late was held back by a stall of this process, not by Redis. */
  private readonly stallSlackMs: number;
  /** After a stall, the holder stands down this long before the key can expire, whatever its renewal does. */
  private readonly expiryMarginMs: number;
  /** A renewal is on its way to Redis. */
  private renewing = false;
  private state: State = 'idle';
  private handlers: SingletonHandlers | undefined;
  private tick: NodeJS.Timeout | undefined;
  private fence: NodeJS.Timeout | undefined;
  /** Bumped at every change of state: a reply to a call sent in an earlier state is ignored. */
  private generation = 0;
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: SingletonLeaseOptions) {
    this.scripts = new LeaseScripts(options.redis);
    this.renewMs = Math.max(50, Math.floor(options.leaseMs / 3));
    this.retryMs = options.retryMs ?? this.renewMs;
    this.fenceAfterMs = options.leaseMs - Math.floor(options.leaseMs / 5);
    this.stallSlackMs = Math.max(STALL_SLACK_MS, Math.floor(options.leaseMs / 50));
    this.expiryMarginMs = Math.floor(options.leaseMs / 20);
  }

  get name(): string {
    return this.options.key;
  }

  /** Whether this instance holds the lease now (as far as it can know: it fences itself early). */
  get held(): boolean {
    return this.state === 'held';
  }

  /**
   * Try once to take the lease and resolve with the outcome; from then on renew it (held) or
   * retry every `retryMs` (standby), reporting changes through `handlers`.
   */
  async start(handlers: SingletonHandlers): Promise<boolean> {
    if (this.state !== 'idle') throw new Error(`singleton lease ${this.options.key} was started already`);
    this.handlers = handlers;
    this.state = 'standby';
    let won: { sentAt: number } | undefined;
    try {
      won = await this.attempt();
    } catch (error) {
      this.options.logger?.warn(
        { err: error, lease: this.options.key },
        'cluster: could not try for a singleton lease; standing by',
      );
    }
    // Released while the first attempt was on its way (a shutdown during start-up).
    if ((this.state as State) === 'stopped') return false;
    if (won) this.becomeHolder(won.sentAt);
    else this.standBy();
    return won !== undefined;
  }

  /**
   * Give the lease up (if held) and stop. Resolves once Redis has dropped it, so another
   * instance can take it at its next retry instead of a lease later.
   */
  async release(): Promise<void> {
    if (this.state === 'stopped') return;
    this.enter('stopped');
    // An acquire still on its way could set the key after the drop: let it land first.
    await this.inFlight.catch(() => undefined);
    await this.scripts.run('dropIfMine', [this.options.key], [this.options.nodeId]);
  }

  /** Give the lease up but keep standing by (the holder could not use it, e.g. a failed login). */
  async yieldToOthers(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'idle') return;
    this.enter('standby');
    await this.inFlight.catch(() => undefined);
    await this.scripts.run('dropIfMine', [this.options.key], [this.options.nodeId]);
    if (this.state === 'standby') this.schedule(() => this.retry(), this.retryMs);
  }

  /**
   * Stop renewing and retrying without releasing, as a killed process would: the key runs
   * out on its own. (Tests that play a death in-process.)
   */
  halt(): void {
    this.enter('stopped');
  }

  // ---- the states ------------------------------------------------------------------------

  private enter(state: State): void {
    this.state = state;
    this.generation++;
    clearTimeout(this.tick);
    clearTimeout(this.fence);
    this.tick = undefined;
    this.fence = undefined;
  }

  private becomeHolder(renewedAt: number): void {
    this.enter('held');
    this.armFence(renewedAt);
    this.schedule(() => this.renew(), this.renewMs);
  }

  private standBy(): void {
    this.enter('standby');
    this.schedule(() => this.retry(), this.retryMs);
  }

  /** Lost the lease: fence first (the caller stops acting), then stand by for it again. */
  private lose(why: string, error?: unknown): void {
    if (this.state !== 'held') return;
    this.options.logger?.warn(
      { lease: this.options.key, ...(error ? { err: error } : {}) },
      `cluster: singleton lease lost (${why}); standing by`,
    );
    this.standBy();
    this.report(() => this.handlers?.onLost());
  }

  /** The deadline counts from when the renewal was *sent*: Redis set the TTL no earlier. */
  private armFence(renewedAt: number): void {
    const due = renewedAt + this.fenceAfterMs;
    this.fenceAt(due, () => this.fenceDue(renewedAt, due));
  }

  private fenceAt(at: number, fire: () => void): void {
    clearTimeout(this.fence);
    const generation = this.generation;
    this.fence = setTimeout(
      () => {
        if (generation === this.generation) fire();
      },
      Math.max(0, at - Date.now()),
    );
    this.fence.unref();
  }

  /**
   * No renewal has succeeded for most of the lease. On time, Redis is not answering: fence
   * now. Late, this process was stalled: the key is still ours until `renewedAt` plus the
   * lease, so a renewal (on its way, or sent now) may confirm it before then; if none does,
   * fence a margin before that.
   */
  private fenceDue(renewedAt: number, due: number): void {
    const now = Date.now();
    const keyLastsUntil = renewedAt + this.options.leaseMs - this.expiryMarginMs;
    if (now - due <= this.stallSlackMs || now >= keyLastsUntil) return this.lose('not renewed in time');
    this.options.logger?.debug?.(
      { lease: this.options.key, lateMs: now - due },
      'cluster: this process stalled past a singleton lease’s fence; confirming the lease before standing down',
    );
    this.fenceAt(keyLastsUntil, () => this.lose('not renewed in time, after a stall'));
    if (!this.renewing) this.schedule(() => this.renew(), 0);
  }

  /** One pending tick at a time: a renewal sent early (after a stall) must not start a second loop. */
  private schedule(work: () => Promise<void>, ms: number): void {
    clearTimeout(this.tick);
    const generation = this.generation;
    this.tick = setTimeout(() => {
      if (generation !== this.generation) return;
      work().catch((error: unknown) =>
        this.options.logger?.warn({ err: error, lease: this.options.key }, 'cluster: singleton lease check failed'),
      );
    }, ms);
    this.tick.unref();
  }

  private async renew(): Promise<void> {
    const generation = this.generation;
    let outcome: { sentAt: number } | undefined;
    this.renewing = true;
    try {
      outcome = await this.attempt();
    } catch (error) {
      // Not fatal yet: the fence timer fires if no renewal succeeds in time.
      if (generation === this.generation) {
        this.options.logger?.warn(
          { err: error, lease: this.options.key },
          'cluster: could not renew a singleton lease; retrying',
        );
        this.schedule(() => this.renew(), this.renewMs);
      }
      return;
    } finally {
      this.renewing = false;
    }
    if (generation !== this.generation) return;
    if (!outcome) return this.lose('another instance holds it');
    this.armFence(outcome.sentAt);
    this.schedule(() => this.renew(), this.renewMs);
  }

  private async retry(): Promise<void> {
    const generation = this.generation;
    let outcome: { sentAt: number } | undefined;
    try {
      outcome = await this.attempt();
    } finally {
      if (generation === this.generation && !outcome) this.schedule(() => this.retry(), this.retryMs);
    }
    if (generation !== this.generation || !outcome) return;
    this.becomeHolder(outcome.sentAt);
    this.report(() => this.handlers?.onAcquired());
  }

  /** One `holdSingleton`: resolves with when it was sent if the lease is ours, else undefined. */
  private attempt(): Promise<{ sentAt: number } | undefined> {
    const sentAt = Date.now();
    const call = this.scripts
      .run('holdSingleton', [this.options.key], [this.options.nodeId, this.options.leaseMs])
      .then((result) => (result === 1 ? { sentAt } : undefined));
    this.inFlight = call;
    return call;
  }

  private report(handler: () => void | Promise<void> | undefined): void {
    Promise.resolve()
      .then(handler)
      .catch((error: unknown) =>
        this.options.logger?.error(
          { err: error, lease: this.options.key },
          'cluster: a singleton lease handler failed',
        ),
      );
  }
}
