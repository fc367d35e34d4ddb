// The coordination seam: what must hold across machines one day, behind one small
// interface with an in-process implementation now.
//
// - Event de-duplication: a platform event is claimed once (Slack retries, both
//   `app_mention` and `message` for one mention, gateway replays), and the claim is
//   persisted with a TTL so a restart does not process a retried event again.
// - Turn ownership: one running turn per session, owned by one worker.
// - Exclusive sections per session: deciding "new turn or steering" and applying a
//   command happen under the session's lock, so two quick messages cannot both start a turn.
// - A command channel to the owner: steering, a stop, an answered prompt. Here the owner is
//   this process and a command is handled at once; across machines it travels to the owner,
//   which applies it at its next loop boundary.
// - What one person may start (TURNS_PER_USER_PER_MINUTE, THREADS_PER_USER), counted for the
//   whole bot: with several instances each would otherwise grant its own share.
//
// Keyv stores the data but has no compare-and-set, so it is never used for the claims
// themselves. A Redis implementation (atomic SET NX claims, leases with fencing tokens,
// a per-session command stream the owner drains) can replace this without changes to the
// session layer, the engine or the connectors.
import type { IncomingFile, MessageSource } from '../engine/index.js';
import { KeyedMutex } from '../store/keyed-mutex.js';
import { InProcessPersonCounters, type PersonCounters } from './person-counters.js';

/**
 * What a worker that does not own a session's running turn asks the owner to do. The data
 * behind a command (the pending message, the inbox answer) is already persisted when the
 * command is sent; the command only tells the owner to act on it.
 */
export type SessionCommand =
  | { kind: 'steer'; inputId: string; text: string; source?: MessageSource; attachments?: IncomingFile[] }
  | { kind: 'stop'; userId: string }
  | { kind: 'resolved'; itemId: string; toolCallId: string };

export type CommandHandler = (sessionId: string, command: SessionCommand) => Promise<void>;

export interface TurnLease {
  readonly sessionId: string;
  release(): void;
}

export interface Coordinator {
  /** A person's starts and working threads, for the whole bot. */
  readonly people: PersonCounters;
  /** True exactly once per event id (within the de-duplication window). */
  claimEvent(eventId: string): Promise<boolean>;
  /** The lease on a session's running turn, or undefined when another worker holds it. */
  acquireTurn(sessionId: string): TurnLease | undefined;
  isTurnOwned(sessionId: string): boolean;
  /** Run `work` while holding the session's lock. */
  exclusive<T>(sessionId: string, work: () => Promise<T>): Promise<T>;
  /** Whether this worker holds (or waits for) the session's lock now: the session is in use. */
  isLocked(sessionId: string): boolean;
  /** Hand a command to the worker that owns the session (here: this process). */
  dispatch(sessionId: string, command: SessionCommand): Promise<void>;
  /** Register this worker's handler for commands of the sessions it owns. */
  serve(handler: CommandHandler): void;
}

export interface EventLedger {
  hasProcessedEvent(eventId: string): Promise<boolean>;
  markEventProcessed(eventId: string, ttlMs: number): Promise<void>;
}

/** Slack retries for up to about an hour; a day covers every replay we know of. */
export const EVENT_DEDUP_TTL_MS = 24 * 60 * 60 * 1000;

const RECENT_CLAIMS = 10_000;

/** The running turns of this process, one per session: what `acquireTurn` hands out. */
export class TurnOwners {
  private readonly owners = new Set<string>();

  acquire(sessionId: string): TurnLease | undefined {
    if (this.owners.has(sessionId)) return undefined;
    this.owners.add(sessionId);
    let released = false;
    return {
      sessionId,
      release: () => {
        if (released) return;
        released = true;
        this.owners.delete(sessionId);
      },
    };
  }

  has(sessionId: string): boolean {
    return this.owners.has(sessionId);
  }
}

export class InProcessCoordinator implements Coordinator {
  /** Recent claims, oldest first; older ones are still caught by the persisted ledger. */
  private readonly claimed = new Set<string>();
  private readonly owners = new TurnOwners();
  private readonly mutex = new KeyedMutex();
  readonly people: PersonCounters = new InProcessPersonCounters();

  constructor(private readonly ledger: EventLedger) {}

  async claimEvent(eventId: string): Promise<boolean> {
    // The in-memory check and add happen in one synchronous step: two deliveries of the
    // same event in this process cannot both pass, whatever the store's latency.
    if (this.claimed.has(eventId)) return false;
    this.claimed.add(eventId);
    if (this.claimed.size > RECENT_CLAIMS) this.claimed.delete(this.claimed.values().next().value!);
    if (await this.ledger.hasProcessedEvent(eventId)) return false;
    await this.ledger.markEventProcessed(eventId, EVENT_DEDUP_TTL_MS);
    return true;
  }

  acquireTurn(sessionId: string): TurnLease | undefined {
    return this.owners.acquire(sessionId);
  }

  isLocked(sessionId: string): boolean {
    return this.mutex.isHeld(sessionId);
  }

  isTurnOwned(sessionId: string): boolean {
    return this.owners.has(sessionId);
  }

  exclusive<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    return this.mutex.run(sessionId, work);
  }

  private handler: CommandHandler | undefined;

  serve(handler: CommandHandler): void {
    this.handler = handler;
  }

  /** In one process the owner is always this one: the command is handled at once. */
  async dispatch(sessionId: string, command: SessionCommand): Promise<void> {
    if (!this.handler) throw new Error('no worker serves session commands yet');
    await this.handler(sessionId, command);
  }
}

/** An exclusive section was asked for on a session another instance owns (cluster mode). */
export class OwnedElsewhereError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} is owned by another instance`);
    this.name = 'OwnedElsewhereError';
  }
}

/** What the session layer reacts to, in cluster mode. */
export interface OwnershipEvents {
  /** A command waits in the list of a session this instance owns (a poke, or the poll). */
  commandsWaiting(sessionId: string): void;
  /** A session's lease ran out with no one renewing it: its owner may have died. */
  overdue(sessionId: string): void;
  /** This instance lost a session's lease (could not renew in time, or another took it): stop acting on it. */
  lost(sessionId: string): void;
  /** This instance took a session's lease: what it holds of the session in memory may be stale. */
  acquired(sessionId: string): void;
  /** Whether a session still needs its owner (a turn runs or waits): if not, its lease is released. */
  busy(sessionId: string): boolean;
}

/**
 * Coordination across instances (cluster mode, src/cluster/redis-coordinator.ts): every
 * inbound action becomes a command on the session's durable list, and the instance that owns
 * the session (by a fenced lease) applies them. `exclusive` then also requires the lease: it
 * throws OwnedElsewhereError when another instance holds it.
 */
export interface RoutingCoordinator extends Coordinator {
  readonly routes: true;
  /** The de-duplication claim (when `eventId` is given) and the enqueue, in one atomic step. False: a duplicate. */
  enqueue(sessionId: string, command: string, eventId?: string): Promise<boolean>;
  /** One click wins a prompt, across instances. */
  resolveOnce(itemId: string): Promise<boolean>;
  /** Hold the session's lease (acquire it when free). False: another instance owns it. */
  own(sessionId: string): Promise<boolean>;
  /** Whether this instance holds the session's lease now. */
  owns(sessionId: string): boolean;
  /** The commands waiting, oldest first (as stored: pass one back to `consume`). */
  commands(sessionId: string): Promise<string[]>;
  /** Remove an applied command, if still the owner. False: the lease was lost. */
  consume(sessionId: string, command: string): Promise<boolean>;
  /** Release the lease unless the session is busy or a command waits. */
  releaseIfIdle(sessionId: string): Promise<'released' | 'pending' | 'busy' | 'lost'>;
  /** `releaseIfIdle` in the background; a waiting command is drained (`commandsWaiting`). */
  settle(sessionId: string): void;
  /** Wake the owner up (a hint: the owner also polls). */
  poke(sessionId: string): Promise<void>;
  watch(events: OwnershipEvents): void;
  /** Whether the session was handed over by a graceful stop rather than left by a death (asked once). */
  handedOver(sessionId: string): Promise<boolean>;
  /** Give every lease up now, for another instance to take at once (a graceful shutdown). */
  handOver(): Promise<void>;
  close(): Promise<void>;
}

export function routes(coordinator: Coordinator): coordinator is RoutingCoordinator {
  return (coordinator as Partial<RoutingCoordinator>).routes === true;
}
