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
// prompts in prompt-answers.ts, thread commands in thread-controls.ts, what connectors may
// read of the stored threads in thread-records.ts. Turns are driven by turn-driver.ts; after
// a restart, recovery.ts repairs what the crash left before anything else touches a session.
import { silentLogger, type EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import { PersistentToolLedger } from '../store/persistent-tool-ledger.js';
import { sessionIdOf, sessionKeyOf, type SessionKey, type SessionRecord, type SessionStore } from '../store/session-store.js';
import type { AccessDecision, AccessPolicy, ActorContext } from './access-policy.js';
import { routes, type Coordinator, type RoutingCoordinator, type SessionCommand } from './coordination.js';
import { ClusterRouting } from './cluster-routing.js';
import { markStopped, type EngineSetupFactory, type GrantScope } from './live-session.js';
import { FairUse, type FairUseLimits } from './fair-use.js';
import { MessageDelivery, type DeliverResult, type InboundMessage } from './message-delivery.js';
import { ThreadReplay } from './thread-replay.js';
import { isBusy, LiveSessions } from './live-sessions.js';
import { PromptAnswers, type ResolveOutcome } from './prompt-answers.js';
import { PromptReplies, type PromptChoice } from './prompt-replies.js';
import { recoverSession, recoverSessions, type RecoveryReport } from './recovery.js';
import { Reporter, type SessionObserver } from './session-observer.js';
import type { BudgetGate, SessionOps } from './session-ops.js';
import type { SessionProfiles } from './session-profiles.js';
import { ThreadControls, type ControlResult, type ModelMenu } from './thread-controls.js';
import { StoredThreadRecords, type ThreadRecords } from './thread-records.js';
import { ThreadStops } from './thread-stops.js';
import { TurnDriver } from './turn-driver.js';
import { afterWindDown } from './turn-wind-down.js';
import type { DeliveryFileCaps } from '../files/delivery-caps.js';

export type { InputDisposition, SessionObserver } from './session-observer.js';
export type { BudgetGate, SessionOps } from './session-ops.js';
export type { SessionProfile, SessionProfiles } from './session-profiles.js';
export type { PromptChoice } from './prompt-replies.js';
export type { RecoveryReport } from './recovery.js';
export type { DeliverResult, InboundMessage } from './message-delivery.js';
export type { ControlResult, LookResult, ModelMenu, ThreadStatus } from './thread-controls.js';

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
  private readonly replies: PromptReplies;
  private readonly replay: ThreadReplay;
  private readonly logger: EngineLogger;
  private readonly evictTimer: NodeJS.Timeout;
  private readonly delivery: MessageDelivery;
  private readonly stops: ThreadStops;
  private readonly answers: PromptAnswers;
  /** /retry, /model, /grants, /revoke, /forget, /status. */
  readonly controls: ThreadControls;
  /** What connectors may know of the stored threads (thread-records.ts): they never hold the store. */
  readonly records: ThreadRecords;
  /** Cluster mode only: inbound actions go through the sessions' command lists (cluster-routing.ts). */
  private readonly routing: ClusterRouting | undefined;
  private readonly reporter: Reporter;
  /** Aborted as the bot shuts down: no more work is taken, and controls waiting for a turn to wind down stop waiting. */
  private readonly closing = new AbortController();

  constructor(private readonly options: SessionManagerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.records = new StoredThreadRecords(options.store);
    const reporter = new Reporter(options.observer ?? {}, this.logger);
    this.replay = new ThreadReplay(reporter);
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
    const profiles = options.profiles;
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
    this.replies = new PromptReplies(options.inbox, options.access, reporter);
    this.controls = new ThreadControls({ ...options, sessions: this.sessions, driver: this.driver, closing: this.closing.signal });
    const { store, inbox, coordinator, access } = options;
    const shared = { inbox, coordinator, access, sessions: this.sessions, driver: this.driver, replies: this.replies, logger: this.logger, routing: () => this.routing };
    this.stops = new ThreadStops({ ...shared, replay: this.replay, reporter, ops: options.ops });
    this.answers = new PromptAnswers({ ...shared, reporter, ops: options.ops });
    // A person's starts and working threads are counted through the coordinator: for the whole bot in cluster mode.
    const fairUse = new FairUse(options.fairUse, coordinator.people);
    this.delivery = new MessageDelivery({ ...shared, store, stops: this.stops, fairUse, closing: this.closing.signal, fileCaps: options.fileCaps, budget: options.budget, profiles });
    const idleMs = options.idleEvictMs ?? 15 * 60 * 1000;
    this.evictTimer = setInterval(() => void this.sessions.evictIdle(idleMs), Math.max(1000, idleMs / 2));
    this.evictTimer.unref();
    options.coordinator.serve((sessionId, command) => this.applyCommand(sessionId, command));
    this.reporter = reporter;
    this.routing = routes(options.coordinator) ? this.clusterRouting(options.coordinator) : undefined;
  }

  /** The one-process paths, as the cluster routing applies the commands this instance owns. */
  private clusterRouting(coordinator: RoutingCoordinator): ClusterRouting {
    return new ClusterRouting(
      coordinator,
      {
        deliverHere: (key, message, inputId) => this.delivery.deliverHere(key, message, inputId),
        interruptHere: async (sessionId, userId) => this.stops.interruptHere(sessionId, userId, await this.recordOf(sessionId)),
        resolvedHere: (sessionId, itemId, toolCallId) => this.answers.resolvedHere(sessionId, itemId, toolCallId),
        recoverHere: async (sessionId) => {
          const { store, inbox } = this.options;
          await recoverSession({ store, inbox, coordinator, sessions: this.sessions, driver: this.driver, replies: this.replies, replay: this.replay, logger: this.logger }, sessionId);
        },
        inFlight: async (sessionId) => (await this.options.store.openSessionIds()).includes(sessionId),
        announceTakeover: async (sessionId) => {
          const record = await this.recordOf(sessionId);
          if (record) await this.reporter.takenOver(record);
        },
        busy: (sessionId) => {
          const live = this.sessions.peek(sessionId);
          return live !== undefined && isBusy(live);
        },
        forget: (sessionId, lost) => {
          if (lost) this.logger.warn({ sessionId }, 'cluster: this instance lost a session to another; its work here stops');
          // Another instance may have written the session since: nothing held here is current.
          this.options.store.forgetCached(sessionId);
          void this.sessions.drop(sessionId);
        },
      },
      this.logger,
    );
  }

  /** The owner's side of the coordination seam: act on a command for a session we run. */
  private async applyCommand(sessionId: string, command: SessionCommand): Promise<void> {
    const live = this.sessions.peek(sessionId);
    switch (command.kind) {
      case 'steer':
        live?.engine.queueSteering(command.text, command.source, command.inputId, command.attachments);
        return;
      case 'stop':
        // A reserved turn counts: a stop right after the message that started it lands.
        if (live?.engine.isRunning) {
          markStopped(live, command.userId);
          live.engine.requestInterrupt();
        }
        return;
      case 'resolved':
        return this.answers.resolvedHere(sessionId, command.itemId, command.toolCallId);
    }
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
      return await this.options.coordinator.exclusive(sessionId, async () => (await this.sessions.get(sessionId, key, starter)).record);
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
    const { store, inbox, coordinator } = this.options;
    return recoverSessions({ store, inbox, coordinator, sessions: this.sessions, driver: this.driver, replies: this.replies, replay: this.replay, logger: this.logger });
  }

  /** Wait until no turn runs (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const turns = this.sessions.all().flatMap((live) => (live.turn ? [live.turn] : []));
      if (turns.length === 0) return;
      await Promise.allSettled(turns);
    }
  }

  /** Stop taking work; stop running turns through the usual interrupt path; release everything. */
  async shutdown(graceMs = 5_000): Promise<void> {
    this.closing.abort();
    clearInterval(this.evictTimer);
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    for (const live of this.sessions.all()) if (live.engine.isRunning) live.engine.requestInterrupt();
    await this.idle();
    for (const live of this.sessions.all()) await this.sessions.evict(live.record.id);
  }

  /**
   * The bot is shutting down for a restart: take no more work, and name the sessions whose
   * turn is in flight (with whether it only waits for a person's answer). Nothing is stopped
   * or written: the caller fences the store, so what persists is what a crash at this instant
   * would leave, and the next start's recovery carries each turn on (core.ts `suspend`).
   */
  async beginSuspend(): Promise<{ record: SessionRecord; waitingForAnswer: boolean }[]> {
    this.closing.abort();
    clearInterval(this.evictTimer);
    const working: { record: SessionRecord; waitingForAnswer: boolean }[] = [];
    for (const live of this.sessions.all()) {
      if (!isBusy(live)) continue;
      const prompts = await this.options.inbox.pending(live.record.id);
      working.push({ record: live.record, waitingForAnswer: prompts.length > 0 });
    }
    return working;
  }

  /**
   * After `beginSuspend` and the fence: end every session's tools now (a command on the host
   * would outlive the process), without waiting for the turns, which can record nothing more.
   */
  async releaseTools(): Promise<void> {
    await Promise.all(
      this.sessions.all().map(async (live) => {
        try {
          await live.setup.dispose?.();
        } catch (error) {
          this.logger.warn({ err: error, sessionId: live.record.id }, 'could not end a session’s tools');
        }
      }),
    );
  }

  /**
   * Retention: delete every session untouched for longer than `retentionMs`, with its thread's
   * own folder (each session is dropped from memory first, so no shell of it runs while its
   * folder goes). Resolves with the deleted ids.
   */
  async sweepExpired(retentionMs: number, now = Date.now()): Promise<string[]> {
    const deleted = await this.options.store.sweepExpired(retentionMs, now);
    for (const sessionId of deleted) {
      await this.sessions.drop(sessionId);
      const key = sessionKeyOf(sessionId);
      if (!key || !this.options.removeThreadFiles) continue;
      try {
        await this.options.removeThreadFiles(key);
      } catch (error) {
        this.logger.warn({ err: error, sessionId }, "could not remove an expired thread's folder");
      }
    }
    return deleted;
  }

  /**
   * Resolves once the turns winding down now have ended (at once when none does): a click on
   * a button a turn's end just showed (👍 / 👎 under its answer) waits for that turn to record
   * what the click looks for (turn-wind-down.ts).
   */
  async afterTurnsWindDown(): Promise<void> {
    await Promise.all(this.sessions.all().map((live) => afterWindDown(live, { signal: this.closing.signal })));
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
