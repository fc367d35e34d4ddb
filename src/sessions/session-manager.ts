// The session layer: where a platform event becomes a turn. Connectors call four things,
// the same on every platform: `deliver` (a message), `interrupt` (a stop), `resolve` (a
// click on a prompt) and the thread commands (retry, switch model, grants, forget). The
// policy check happens here, for every transport alike.
//
// The one idea: one running turn per session, and nothing acknowledged that was not
// recorded. An inbound message is claimed (de-duplicated) and persisted as a pending
// input before `deliver` returns (so before the platform is acknowledged); a turn takes
// it from there, as a new turn when the session is idle or as steering when it runs.
// This class wires the session layer together and is its one door; each job has its module:
// a message's way to a turn in message-delivery.ts, stops in thread-stops.ts, clicks on
// prompts in prompt-answers.ts, thread commands in thread-controls.ts, commands for the
// sessions this instance owns in owner-commands.ts, what connectors may read of the stored
// threads in thread-records.ts, eviction, shutdown, suspend and retention in
// session-lifecycle.ts. Turns are driven by turn-driver.ts; after a restart, recovery.ts
// repairs what the crash left before anything else touches a session.
import { silentLogger, type EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import { PersistentToolLedger } from '../store/persistent-tool-ledger.js';
import { sessionIdOf, type SessionKey, type SessionRecord, type SessionStore } from '../store/session-store.js';
import type { AccessDecision, AccessPolicy, ActorContext } from './access-policy.js';
import { routes, type Coordinator } from './coordination.js';
import { ClusterRouting } from './cluster-routing.js';
import type { EngineSetupFactory, GrantScope } from './live-session.js';
import { FairUse, type FairUseLimits } from './fair-use.js';
import { MessageDelivery, type DeliverResult, type InboundMessage } from './message-delivery.js';
import { ThreadReplay } from './thread-replay.js';
import { isBusy, LiveSessions } from './live-sessions.js';
import { PromptAnswers, type ResolveOutcome } from './prompt-answers.js';
import { applyOwnerCommand, ownerPaths } from './owner-commands.js';
import { PromptReplies, type PromptChoice } from './prompt-replies.js';
import { recoverSessions, type RecoveryDeps, type RecoveryReport } from './recovery.js';
import { SessionLifecycle, type InFlightTurn } from './session-lifecycle.js';
import { Reporter, type SessionObserver } from './session-observer.js';
import type { BudgetGate, SessionOps } from './session-ops.js';
import type { SessionProfiles } from './session-profiles.js';
import { ThreadControls, type ControlResult, type ModelMenu } from './thread-controls.js';
import { StoredThreadRecords, type ThreadRecords } from './thread-records.js';
import { ThreadStops } from './thread-stops.js';
import { TurnDriver } from './turn-driver.js';
import type { DeliveryFileCaps } from '../files/delivery-caps.js';

export type { InputDisposition, SessionObserver } from './session-observer.js';
export type { PromptChoice } from './prompt-replies.js';
export type { RecoveryReport } from './recovery.js';
export type { InFlightTurn } from './session-lifecycle.js';
export type { DeliverResult, InboundMessage } from './message-delivery.js';
export type { ControlResult } from './thread-controls.js';

export type { ResolveOutcome } from './prompt-answers.js';

export interface SessionManagerOptions {
  store: SessionStore;
  inbox: PersistentInbox;
  coordinator: Coordinator;
  access: AccessPolicy;
  engineSetup: EngineSetupFactory;
  defaultModel: string;
  observer?: SessionObserver;
  logger?: EngineLogger;
  grantScope?: GrantScope;
  /** Drop an idle session's engine from memory after this long (default 15 min). */
  idleEvictMs?: number;
  /** Which models /model may choose (default: any). */
  models?: ModelMenu;
  /** Queue sizes and per-person limits (default: fair-use.ts). */
  fairUse?: FairUseLimits;
  /** Sessions kept in memory (least recently used dropped first; default 500). */
  maxLiveSessions?: number;
  /** MAX_FILE_BYTES and MAX_FILES_PER_MESSAGE, held to what a message's files are said to be as it is delivered (default: no cap here). */
  fileCaps?: DeliveryFileCaps;
  /** Remove what a thread keeps outside the store (its own workspace folder) when /forget or retention deletes it. */
  removeThreadFiles?: (key: SessionKey) => Promise<void>;
  /** The operations side (src/ops/): who clicked, stopped, switched, forgot. Default: nobody listens. */
  ops?: SessionOps;
  /** Spend limits (src/ops/): a new request past a limit is refused; an admin's Continue lets a paused turn go on. */
  budget?: BudgetGate;
  /** Profiles per place (src/profiles/): access, the starting model and /model's list per thread. Default: the environment's for all. */
  profiles?: SessionProfiles;
}

export class SessionManager {
  private readonly sessions: LiveSessions;
  private readonly driver: TurnDriver;
  /** What the restart recovery needs (recovery.ts), for every session or one taken over. */
  private readonly recovery: RecoveryDeps;
  private readonly logger: EngineLogger;
  /** Idle eviction while the layer runs; shutdown, suspend and retention (session-lifecycle.ts). */
  private readonly lifecycle: SessionLifecycle;
  private readonly delivery: MessageDelivery;
  private readonly stops: ThreadStops;
  private readonly answers: PromptAnswers;
  /** /retry, /model, /grants, /revoke, /forget, /status. */
  readonly controls: ThreadControls;
  /** What connectors may know of the stored threads (thread-records.ts): they never hold the store. */
  readonly records: ThreadRecords;
  /** Cluster mode only: inbound actions go through the sessions' command lists (cluster-routing.ts). */
  private readonly routing: ClusterRouting | undefined;

  constructor(private readonly options: SessionManagerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.records = new StoredThreadRecords(options.store);
    const reporter = new Reporter(options.observer ?? {}, this.logger);
    const replay = new ThreadReplay(reporter);
    this.sessions = new LiveSessions({
      store: options.store,
      inbox: options.inbox,
      ledger: new PersistentToolLedger(options.store),
      engineSetup: options.engineSetup,
      defaultModel: options.defaultModel,
      grantScope: options.grantScope ?? 'thread',
      logger: this.logger,
      maxLive: options.maxLiveSessions,
      inUse: (sessionId) => options.coordinator.isLocked(sessionId),
      ...(options.profiles ? { profiles: options.profiles } : {}),
    });
    const { store, inbox, coordinator, access, profiles } = options;
    this.lifecycle = new SessionLifecycle({ ...options, sessions: this.sessions, logger: this.logger });
    const closing = this.lifecycle.signal;
    if (profiles) options.access.useProfiles((name) => profiles.named(name));
    this.driver = new TurnDriver({
      store: options.store,
      inbox: options.inbox,
      coordinator: options.coordinator,
      reporter,
      logger: this.logger,
      everyoneGrants: options.access.hasAdmins,
      onIdle: (live) => this.delivery.threadDone(live),
    });
    const replies = new PromptReplies(options.inbox, options.access, reporter);
    this.controls = new ThreadControls({ ...options, sessions: this.sessions, driver: this.driver, closing });
    const shared = {
      inbox,
      coordinator,
      access,
      sessions: this.sessions,
      driver: this.driver,
      replies,
      logger: this.logger,
      routing: () => this.routing,
    };
    this.stops = new ThreadStops({ ...shared, replay, reporter, ops: options.ops });
    this.answers = new PromptAnswers({ ...shared, reporter, ops: options.ops });
    // A person's starts and working threads are counted through the coordinator: for the whole bot in cluster mode.
    const fairUse = new FairUse(options.fairUse, coordinator.people);
    this.delivery = new MessageDelivery({
      ...shared,
      store,
      stops: this.stops,
      fairUse,
      closing,
      fileCaps: options.fileCaps,
      budget: options.budget,
      profiles,
    });
    this.recovery = {
      store,
      inbox,
      coordinator,
      sessions: this.sessions,
      driver: this.driver,
      replies,
      replay,
      logger: this.logger,
    };
    const owner = {
      store,
      sessions: this.sessions,
      delivery: this.delivery,
      stops: this.stops,
      answers: this.answers,
      recovery: this.recovery,
      reporter,
      logger: this.logger,
    };
    coordinator.serve((sessionId, command) => applyOwnerCommand(owner, sessionId, command));
    this.routing = routes(coordinator) ? new ClusterRouting(coordinator, ownerPaths(owner), this.logger) : undefined;
  }

  // ---- inbound -----------------------------------------------------------------------

  /**
   * Whether this person may start or steer a turn, judged as `deliver` will judge it. A
   * connector asks first, so a refused message costs no work: an outsider's message holding
   * hundreds of mentions once made as many name lookups before `deliver` refused it.
   */
  admits(userId: string, actor: ActorContext = {}): AccessDecision {
    return this.options.access.mayStartOrSteer(userId, actor);
  }

  /** Whether this person is one of the bot's admins (ADMINS): who may see the totals of `/feedback`. */
  isAdmin(userId: string): boolean {
    return this.options.access.isAdmin(userId);
  }

  /** A person's message (message-delivery.ts): recorded before this returns, then a turn, steering or an answer. */
  deliver(key: SessionKey, message: InboundMessage): Promise<DeliverResult> {
    return this.delivery.deliver(key, message);
  }

  /** A stop, from a reaction or a command (thread-stops.ts): ends the running turn, or closes a waiting prompt. */
  interrupt(sessionId: string, userId: string): Promise<ControlResult> {
    return this.stops.interrupt(sessionId, userId);
  }

  /**
   * The thread's session record, made if the thread has none yet (a schedule set with the
   * thread's first words): its notes need a session to be shown in. `starter` starts it.
   */
  async openThread(key: SessionKey, starter: string): Promise<SessionRecord> {
    const sessionId = sessionIdOf(key);
    const existing = await this.recordOf(sessionId);
    if (existing) return existing;
    try {
      return await this.options.coordinator.exclusive(
        sessionId,
        async () => (await this.sessions.get(sessionId, key, starter)).record,
      );
    } catch (error) {
      // Cluster mode: another instance owns it, so it exists by now.
      const record = await this.options.store.getSession(sessionId);
      if (record) return record;
      throw error;
    }
  }

  /**
   * Close a turn's prompts that have waited since `since` (a scheduled run nobody answered):
   * the turn stops as a 🛑 would stop it, by the bot itself (thread-stops.ts).
   */
  closeWaitingSince(sessionId: string, since: number): Promise<boolean> {
    return this.stops.closeWaitingSince(sessionId, since);
  }

  /** A click on a prompt card (prompt-answers.ts). Resumes the turn when no engine waits for the answer (after a restart). */
  resolve(itemId: string, choice: PromptChoice, userId: string): Promise<ResolveOutcome> {
    return this.answers.resolve(itemId, choice, userId);
  }

  // ---- thread commands (thread-controls.ts) ------------------------------------------

  /** Claim a platform event id for something that is not a message (a thread command). */
  claimEvent(eventId: string): Promise<boolean> {
    return this.options.coordinator.claimEvent(eventId);
  }

  // ---- life cycle --------------------------------------------------------------------

  /**
   * Repair what a crash left. Call once, after the connectors that render sessions are
   * attached and before they take events.
   */
  recover(): Promise<RecoveryReport> {
    return recoverSessions(this.recovery);
  }

  /** Wait until no turn runs (tests, shutdown). */
  idle(): Promise<void> {
    return this.lifecycle.idle();
  }

  /** Stop taking work; stop running turns through the usual interrupt path; release everything. */
  shutdown(graceMs = 5_000): Promise<void> {
    return this.lifecycle.shutdown(graceMs);
  }

  /** A restart begins: take no more work and name the turns in flight, stopping none (session-lifecycle.ts). */
  beginSuspend(): Promise<InFlightTurn[]> {
    return this.lifecycle.beginSuspend();
  }

  /** After `beginSuspend` and the fence: end every session's tools now, without waiting for the turns. */
  releaseTools(): Promise<void> {
    return this.lifecycle.releaseTools();
  }

  /** Retention: delete every session untouched for longer than `retentionMs`, with its thread's folder; resolves with the ids. */
  sweepExpired(retentionMs: number, now = Date.now()): Promise<string[]> {
    return this.lifecycle.sweepExpired(retentionMs, now);
  }

  /** Resolves once the turns winding down now have ended, so a click on a button a turn's end just showed finds what it looks for. */
  afterTurnsWindDown(): Promise<void> {
    return this.lifecycle.afterTurnsWindDown();
  }

  /** Whether a turn runs (or is reserved) in this thread now. */
  isWorking(sessionId: string): boolean {
    const live = this.sessions.peek(sessionId);
    return live !== undefined && isBusy(live);
  }

  /** How many engines are in memory (tests, metrics). */
  get liveCount(): number {
    return this.sessions.size;
  }

  /**
   * What is in memory now, for the metrics' gauges (read at each scrape, read-only): engines,
   * those with a turn running, and the replies queued for running turns. One pass over the
   * live sessions, which MAX_LIVE_SESSIONS bounds.
   */
  load(): { live: number; working: number; queuedSteering: number } {
    let working = 0;
    let queuedSteering = 0;
    for (const live of this.sessions.all()) {
      if (isBusy(live)) working++;
      queuedSteering += live.engine.pendingSteeringCount;
    }
    return { live: this.sessions.size, working, queuedSteering };
  }

  private recordOf(sessionId: string): Promise<SessionRecord | undefined> {
    return this.sessions.record(sessionId);
  }
}
