// The session layer: where a platform event becomes a turn. Connectors call four things,
// the same on every platform: `deliver` (a message), `interrupt` (a stop), `resolve` (a
// click on a prompt) and the thread commands (retry, switch model, grants, forget). The
// policy check happens here, for every transport alike.
//
// The one idea: one running turn per session, and nothing acknowledged that was not
// recorded. An inbound message is claimed (de-duplicated) and persisted as a pending
// input before `deliver` returns (so before the platform is acknowledged); a turn takes
// it from there, as a new turn when the session is idle or as steering when it runs.
// Turns are driven by turn-driver.ts; after a restart, recovery.ts repairs what the crash
// left before anything else touches a session.
import { randomUUID } from 'node:crypto';
import { INTERRUPTED_BY_USER, silentLogger, type EngineLogger, type IncomingFile, type InboxItem, type MessageSource, type ResolveResult } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import { PersistentToolLedger } from '../store/persistent-tool-ledger.js';
import { sessionIdOf, sessionKeyOf, type PendingInput, type SessionKey, type SessionRecord, type SessionStore } from '../store/session-store.js';
import type { AccessDecision, AccessPolicy, ActorContext } from './access-policy.js';
import { routes, type Coordinator, type RoutingCoordinator, type SessionCommand } from './coordination.js';
import { ClusterRouting, DUPLICATE } from './cluster-routing.js';
import { markStopped, type EngineSetupFactory, type GrantScope, type LiveSession } from './live-session.js';
import { EarlyStops } from './early-stops.js';
import { FairUse, type CountedStart, type FairUseLimits } from './fair-use.js';
import { ThreadReplay } from './thread-replay.js';
import { isBusy, LiveSessions } from './live-sessions.js';
import { BOT_ITSELF, PromptReplies, resolutionOf, type PromptChoice } from './prompt-replies.js';
import { recoverSession, recoverSessions, type RecoveryReport } from './recovery.js';
import { Reporter, type SessionObserver } from './session-observer.js';
import type { BudgetGate, SessionOps } from './session-ops.js';
import type { SessionProfiles } from './session-profiles.js';
import { placeOf } from '../ops/ops-events.js';
import { ThreadControls, type ControlResult, type ModelMenu } from './thread-controls.js';
import { StoredThreadRecords, type ThreadRecords } from './thread-records.js';
import { TurnDriver } from './turn-driver.js';
import { afterWindDown } from './turn-wind-down.js';
import { refusedFilesText, screenFiles, type DeliveryFileCaps } from '../files/delivery-caps.js';

export type { InputDisposition, SessionObserver } from './session-observer.js';
export type { BudgetGate, SessionOps } from './session-ops.js';
export type { SessionProfile, SessionProfiles } from './session-profiles.js';
export type { PromptChoice } from './prompt-replies.js';
export type { RecoveryReport } from './recovery.js';

export interface InboundMessage {
  text: string;
  userId: string;
  source?: MessageSource;
  /** The platform's event id, for de-duplication of retries and replays. */
  eventId?: string;
  /** The author belongs to another team or organisation than the installing one. */
  external?: boolean;
  /** Files shared with the message (not fetched yet: a turn fetches them when it takes the message). */
  attachments?: IncomingFile[];
}

export type DeliverResult =
  /** `filesRefused`: files of the message past a cap, not taken: tell the person who shared them, privately. */
  | { status: 'started' | 'queued' | 'answered'; sessionId: string; inputId: string; filesRefused?: string }
  | { status: 'duplicate' }
  | { status: 'refused'; reason: string };

export type { ControlResult, LookResult, ModelMenu, ThreadStatus } from './thread-controls.js';

export type ResolveOutcome = ResolveResult | { ok: false; reason: 'refused'; message: string } | { ok: false; reason: 'invalid_choice' };

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
  private readonly earlyStops = new EarlyStops();
  /** /retry, /model, /grants, /revoke, /forget, /status. */
  readonly controls: ThreadControls;
  /** What connectors may know of the stored threads (thread-records.ts): they never hold the store. */
  readonly records: ThreadRecords;
  private readonly fairUse: FairUse;
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
      onIdle: (live) => this.threadDone(live),
    });
    this.replies = new PromptReplies(options.inbox, options.access, reporter);
    this.controls = new ThreadControls({ ...options, sessions: this.sessions, driver: this.driver, closing: this.closing.signal });
    // A person's starts and working threads are counted through the coordinator: for the whole bot in cluster mode.
    this.fairUse = new FairUse(options.fairUse, options.coordinator.people);
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
        deliverHere: (key, message, inputId) => this.deliverHere(key, message, inputId),
        interruptHere: async (sessionId, userId) => this.interruptHere(sessionId, userId, await this.recordOf(sessionId)),
        resolvedHere: (sessionId, itemId, toolCallId) => this.resolvedHere(sessionId, itemId, toolCallId),
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

  /**
   * Whether a message (applied again after its owner died between applying and consuming
   * it) is already recorded: as a pending input, or in the transcript.
   */
  private async alreadyHas(live: LiveSession, inputId: string, message: InboundMessage): Promise<boolean> {
    if ((await this.options.store.getPendingInputs(live.record.id)).some((input) => input.id === inputId)) return true;
    const messageId = message.source?.messageId;
    return messageId !== undefined && live.engine.messages.some((m) => m.role === 'user' && m.source?.messageId === messageId);
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
        return this.resolvedHere(sessionId, command.itemId, command.toolCallId);
    }
  }

  /** A prompt was answered: a live engine waiting on it is woken by the inbox; otherwise the turn resumes. */
  private async resolvedHere(sessionId: string, itemId: string, toolCallId: string): Promise<void> {
    // Answered on another instance (cluster mode): this one's waiting engine learns it from
    // the store, and its card shows who decided (the next render would drop it otherwise).
    if (this.routing) {
      await this.options.inbox.refresh(itemId);
      const item = await this.options.inbox.get(itemId);
      const record = await this.recordOf(sessionId);
      if (item && record) await this.reporter.decided(record, item);
    }
    await this.options.coordinator.exclusive(sessionId, async () => {
      const resumable = await this.sessions.get(sessionId);
      if (isBusy(resumable)) return;
      if (resumable.engine.unansweredToolCalls().some((call) => call.id === toolCallId)) await this.driver.startResume(resumable);
    });
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

  async deliver(key: SessionKey, message: InboundMessage): Promise<DeliverResult> {
    if (this.closing.signal.aborted) return { status: 'refused', reason: 'The bot is restarting; send that again in a moment.' };
    const access = this.options.access.mayStartOrSteer(message.userId, { external: message.external }, await this.profileAt(key));
    if (!access.allowed) return { status: 'refused', reason: access.reason };
    // Files past a cap are refused here, to the person, and never fetched; a message of nothing else is refused whole.
    const screened = message.attachments?.length && this.options.fileCaps ? screenFiles(message.attachments, this.options.fileCaps) : undefined;
    if (screened && screened.refusals.length > 0) {
      const filesRefused = refusedFilesText(screened.refusals);
      if (screened.kept.length === 0 && message.text.trim() === '') return { status: 'refused', reason: filesRefused };
      const { attachments: _all, ...rest } = message;
      const result = await this.deliverChecked(key, screened.kept.length > 0 ? { ...rest, attachments: screened.kept } : rest);
      return 'sessionId' in result ? { ...result, filesRefused } : result;
    }
    return this.deliverChecked(key, message);
  }

  private async deliverChecked(key: SessionKey, message: InboundMessage): Promise<DeliverResult> {
    const sessionId = sessionIdOf(key);
    if (this.routing) {
      // Cluster mode: queued with its claim, applied by whichever instance owns the thread.
      const routed = await this.routing.deliver(key, message);
      if (routed === DUPLICATE) return { status: 'duplicate' };
      return (routed as DeliverResult | undefined) ?? { status: 'queued', sessionId, inputId: '' };
    }
    if (message.eventId !== undefined && !(await this.options.coordinator.claimEvent(message.eventId))) return { status: 'duplicate' };
    return this.deliverHere(key, message, randomUUID());
  }

  /**
   * A message, applied on the instance that owns its session. `inputId` names the pending
   * input it becomes: in cluster mode the command's id, so a command applied twice (its
   * owner died between applying and consuming it) is recorded once.
   */
  private async deliverHere(key: SessionKey, message: InboundMessage, inputId: string): Promise<DeliverResult> {
    const sessionId = sessionIdOf(key);
    const { store, coordinator } = this.options;
    return coordinator.exclusive(sessionId, async () => {
      const live = await this.sessions.get(sessionId, key, message.userId);
      if (this.routing && (await this.alreadyHas(live, inputId, message))) return { status: 'duplicate' };
      noteParticipant(live, message.userId);
      const input: PendingInput = { id: inputId, text: message.text, receivedAt: Date.now() };
      if (message.source) input.source = message.source;
      if (message.attachments?.length) input.attachments = message.attachments;

      const prompts = await this.options.inbox.pending(sessionId);
      // A reply while a question waits is its answer: consumed, not steering. Files shared with
      // it are not lost with the consumed text: they follow the answer as a message of their own.
      if (await this.replies.answerQuestion(live.record, prompts, message)) {
        if (input.attachments) {
          await store.markOpen(sessionId);
          await store.addPendingInput(sessionId, { ...input, text: '' });
          if (isBusy(live)) await coordinator.dispatch(sessionId, { kind: 'steer', inputId: input.id, text: '', attachments: input.attachments, ...(input.source ? { source: input.source } : {}) });
        }
        if (!isBusy(live)) await this.driver.startResume(live);
        await this.driver.notifyInput(live, input.id, 'answered', input.source);
        return { status: 'answered', sessionId, inputId: input.id };
      }

      // Fair use, checked before anything is recorded. A start it allows is counted at once
      // (check and count are one step, across instances in cluster mode); should the start not
      // happen after all, the count is undone below.
      const starts = !isBusy(live) && live.engine.unansweredToolCalls().length === 0;
      let counted: CountedStart | undefined;
      if (starts) {
        const verdict = await this.fairUse.start(message.userId, sessionId);
        if (!verdict.ok) return { status: 'refused', reason: verdict.reason };
        counted = verdict.counted;
      } else {
        const verdict = this.fairUse.mayQueue(await store.pendingLoad(sessionId), Buffer.byteLength(input.text, 'utf8'));
        if (!verdict.ok) return { status: 'refused', reason: verdict.reason };
      }
      let result: DeliverResult | undefined;
      try {
        result = await this.deliverCounted(live, message, input, prompts, counted);
        return result;
      } finally {
        // The start it counted did not happen (a spend limit, a reply queued after all, a failure).
        if (counted && result?.status !== 'started') await this.fairUse.undo(counted);
      }
    });
  }

  /** `deliver` past fair use: the spend limits, then the message recorded, queued or started. */
  private async deliverCounted(live: LiveSession, message: InboundMessage, input: PendingInput, prompts: InboxItem[], counted: CountedStart | undefined): Promise<DeliverResult> {
    const { store, coordinator } = this.options;
    const sessionId = live.record.id;
    // Spend limits: a request that would start a turn past one is refused, privately.
    if (counted && this.options.budget) {
      const budget = await this.options.budget.mayStart(placeOf(live.record), message.userId);
      if (!budget.ok) return { status: 'refused', reason: budget.reason };
    }

    // Recorded (and the session marked open) before the caller acknowledges the platform.
    await store.markOpen(sessionId);
    await store.addPendingInput(sessionId, input);
    await this.touch(live);
    if (isBusy(live)) {
      // Queued before any waiting approval is declined, so the turn that wakes up on the
      // decline finds the reply already there and takes it right after that tool round.
      await coordinator.dispatch(sessionId, {
        kind: 'steer',
        inputId: input.id,
        text: input.text,
        ...(input.source ? { source: input.source } : {}),
        ...(input.attachments ? { attachments: input.attachments } : {}),
      });
      await this.replies.decline(live.record, prompts, message);
      await this.driver.notifyInput(live, input.id, 'queued', input.source);
      return { status: 'queued', sessionId, inputId: input.id };
    }
    if (live.engine.unansweredToolCalls().length > 0) {
      // After a restart: the declined prompts are answered by resuming, and the reply steers.
      await this.replies.decline(live.record, prompts, message);
      await this.driver.startResume(live);
      await this.driver.notifyInput(live, input.id, 'queued', input.source);
      return { status: 'queued', sessionId, inputId: input.id };
    }
    // The thread works for this person until the session is idle again (threadDone).
    if (counted) {
      if (live.countedStart) this.threadDone(live);
      live.countedStart = counted;
    }
    try {
      await this.driver.startWithInputs(live, [input]);
    } catch (error) {
      // No turn began: nothing will report the session idle (the caller undoes the count).
      if (counted && live.countedStart === counted) live.countedStart = undefined;
      throw error;
    }
    await this.driver.notifyInput(live, input.id, 'started', input.source);
    // A 🛑 processed before this message was: it meant this turn.
    const early = this.earlyStops.take(sessionId);
    if (early && this.options.access.mayStop(early, live.record).allowed) await this.stopOwnedTurn(sessionId, early);
    return { status: 'started', sessionId, inputId: input.id };
  }

  /** The session is idle: the thread it worked on no longer counts among its person's working threads. */
  private threadDone(live: LiveSession): void {
    const counted = live.countedStart;
    if (!counted) return;
    live.countedStart = undefined;
    this.fairUse.threadDone(counted).catch((error: unknown) => this.logger.warn({ err: error, sessionId: counted.sessionId }, 'fair use: could not count a thread as done (in cluster mode it lapses with its lease)'));
  }

  /**
   * A stop, from a reaction or a command: ends the running turn, or closes a waiting prompt.
   * A turn that starts while the stop waits for the session's lock (a message delivered a
   * moment before, a turn resumed by recovery or a click) is stopped too.
   */
  async interrupt(sessionId: string, userId: string): Promise<ControlResult> {
    const known = await this.recordOf(sessionId);
    if (known) {
      const access = this.options.access.mayStop(userId, known);
      if (!access.allowed) return { status: 'refused', reason: access.reason };
      this.options.ops?.stopRequested(known, userId);
      if (this.routing) return ((await this.routing.stop(sessionId, userId)) as ControlResult | undefined) ?? { status: 'done', sessionId };
    }
    return this.interruptHere(sessionId, userId, known);
  }

  /** A stop, applied on the instance that owns the session (access was checked where it came in). */
  private async interruptHere(sessionId: string, userId: string, known?: SessionRecord): Promise<ControlResult> {
    // Told here, where the thread's turn runs and its note is shown (the stop may have come in on another instance).
    if (known && userId !== BOT_ITSELF) await this.reporter.stopBy(known, userId);
    if (known && (await this.stopOwnedTurn(sessionId, userId))) return { status: 'done', sessionId };
    return this.options.coordinator.exclusive(sessionId, async () => {
      // Unknown a moment ago: the thread's first message may have been delivering as the stop came.
      const record = known ?? (await this.recordOf(sessionId));
      if (!record) {
        this.earlyStops.remember(sessionId, userId);
        return { status: 'unknown_session' };
      }
      if (!known) {
        const access = this.options.access.mayStop(userId, record);
        if (!access.allowed) return { status: 'refused', reason: access.reason };
      }
      if (await this.stopOwnedTurn(sessionId, userId)) return { status: 'done', sessionId };
      const live = await this.sessions.get(sessionId);
      // Replies that arrived as the last turn ended are not run after this stop.
      markStopped(live, userId);
      // No turn runs, but something may wait to resume: a prompt (the process restarted
      // while it waited) or a call whose prompt was answered a moment ago. A stop closes
      // them all, so the resume that would follow finds nothing to run.
      const pending = await this.options.inbox.pending(sessionId);
      if (pending.length === 0 && live.engine.unansweredToolCalls().length === 0) return { status: 'idle' };
      for (const item of pending) await this.replies.close(record, item, { kind: 'interrupted' }, userId);
      const closed = await live.engine.closeUnansweredToolCalls(INTERRUPTED_BY_USER, { kind: 'interrupted', text: 'Stopped by the user.' });
      for (const call of closed) await this.replay.closed(record, call, INTERRUPTED_BY_USER);
      await this.driver.settleIfQuiet(live);
      return { status: 'done', sessionId };
    });
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
   * Close a turn's prompts that have waited since `since` (a scheduled run nobody answered,
   * src/schedules/): the turn stops as a 🛑 would stop it, by the bot itself. Resolves whether
   * something waited. Prompts opened before `since` (a person's own turn) are left alone.
   */
  async closeWaitingSince(sessionId: string, since: number): Promise<boolean> {
    const waiting = (await this.options.inbox.pending(sessionId)).filter((item) => item.createdAt >= since);
    if (waiting.length === 0) return false;
    const known = await this.recordOf(sessionId);
    if (!known) return false;
    if (this.routing) await this.routing.stop(sessionId, BOT_ITSELF);
    else await this.interruptHere(sessionId, BOT_ITSELF, known);
    return true;
  }

  private async stopOwnedTurn(sessionId: string, userId: string): Promise<boolean> {
    if (!this.options.coordinator.isTurnOwned(sessionId)) return false;
    await this.options.coordinator.dispatch(sessionId, { kind: 'stop', userId });
    return true;
  }

  /** A click on a prompt card. Resumes the turn when no engine waits for the answer (after a restart). */
  async resolve(itemId: string, choice: PromptChoice, userId: string): Promise<ResolveOutcome> {
    const item = await this.options.inbox.get(itemId);
    if (!item) return { ok: false, reason: 'unknown_item' };
    const record = await this.recordOf(item.sessionId);
    if (!record) return { ok: false, reason: 'unknown_item' };
    const access = this.options.access.mayResolve(userId, record, item.kind);
    if (!access.allowed) return { ok: false, reason: 'refused', message: access.reason };
    const resolution = resolutionOf(item, choice);
    if (!resolution) return { ok: false, reason: 'invalid_choice' };
    if (resolution.kind === 'approval') {
      // A grant for everyone's turns is an admin's to give; any grant records its giver.
      if (resolution.outcome.endsWith('_all') && !this.options.access.isAdmin(userId)) {
        return { ok: false, reason: 'refused', message: 'Only an admin can allow this for everyone; choose "for me" instead.' };
      }
      resolution.by = userId;
    }
    const result = await this.options.inbox.resolve(itemId, resolution, userId);
    if (!result.ok) return result;
    // Recorded here, where the click won (once across instances: inbox.resolve is the claim).
    this.options.ops?.decided(record, item, resolution, userId);
    // Cluster mode: recorded here (one click wins, across instances); the owner's turn is told.
    if (this.routing) await this.routing.resolved(item.sessionId, itemId, item.toolCallId);
    else await this.options.coordinator.dispatch(item.sessionId, { kind: 'resolved', itemId, toolCallId: item.toolCallId });
    return result;
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

  // ---- helpers -----------------------------------------------------------------------

  /** The profile a message here runs under: the thread's own, or its place's for a new thread. */
  private async profileAt(key: SessionKey): Promise<string | undefined> {
    const profiles = this.options.profiles;
    if (!profiles) return undefined;
    const record = await this.recordOf(sessionIdOf(key));
    return record ? record.profile : profiles.forPlace(key).name;
  }

  private async recordOf(sessionId: string): Promise<SessionRecord | undefined> {
    return this.sessions.peek(sessionId)?.record ?? (await this.options.store.getSession(sessionId));
  }

  private async touch(live: LiveSession): Promise<void> {
    live.lastUsed = Date.now();
    await this.options.store.saveSession(live.record);
  }
}

function noteParticipant(live: LiveSession, userId: string): void {
  if (userId === live.record.startedBy || live.record.steerers.includes(userId)) return;
  live.record = { ...live.record, steerers: [...live.record.steerers, userId] };
}
