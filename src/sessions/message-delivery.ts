// A person's message on its way to a turn: access and file caps checked, the event claimed
// (de-duplicated), fair use and the spend limits held to it, and the message recorded as a
// pending input before `deliver` returns, so before the platform is acknowledged. It becomes
// a new turn when the session is idle, steering when a turn runs, or the answer to a waiting
// question. In cluster mode the message goes through the session's command list and is
// applied here by the instance that owns the thread (`deliverHere`).
import { randomUUID } from 'node:crypto';
import type { EngineLogger, IncomingFile, InboxItem, MessageSource } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import { sessionIdOf, type PendingInput, type SessionKey, type SessionStore } from '../store/session-store.js';
import { refusedFilesText, screenFiles, type DeliveryFileCaps } from '../files/delivery-caps.js';
import { placeOf } from '../ops/ops-events.js';
import type { AccessPolicy } from './access-policy.js';
import { DUPLICATE, type ClusterRouting } from './cluster-routing.js';
import type { Coordinator } from './coordination.js';
import type { CountedStart, FairUse } from './fair-use.js';
import type { LiveSession } from './live-session.js';
import { isBusy, type LiveSessions } from './live-sessions.js';
import type { PromptReplies } from './prompt-replies.js';
import type { BudgetGate } from './session-ops.js';
import type { SessionProfiles } from './session-profiles.js';
import type { ThreadStops } from './thread-stops.js';
import type { TurnDriver } from './turn-driver.js';

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

export interface MessageDeliveryDeps {
  store: SessionStore;
  inbox: PersistentInbox;
  coordinator: Coordinator;
  access: AccessPolicy;
  sessions: LiveSessions;
  driver: TurnDriver;
  replies: PromptReplies;
  fairUse: FairUse;
  stops: ThreadStops;
  logger: EngineLogger;
  /** Aborted as the bot shuts down: no message is taken from then on. */
  closing: AbortSignal;
  /** Cluster mode only (made after this, from its `deliverHere`): read at each message. */
  routing: () => ClusterRouting | undefined;
  fileCaps?: DeliveryFileCaps;
  budget?: BudgetGate;
  profiles?: SessionProfiles;
}

export class MessageDelivery {
  constructor(private readonly deps: MessageDeliveryDeps) {}

  async deliver(key: SessionKey, message: InboundMessage): Promise<DeliverResult> {
    if (this.deps.closing.aborted)
      return { status: 'refused', reason: 'The bot is restarting; send that again in a moment.' };
    const access = this.deps.access.mayStartOrSteer(
      message.userId,
      { external: message.external },
      await this.profileAt(key),
    );
    if (!access.allowed) return { status: 'refused', reason: access.reason };
    // Files past a cap are refused here, to the person, and never fetched; a message of nothing else is refused whole.
    const screened =
      message.attachments?.length && this.deps.fileCaps
        ? screenFiles(message.attachments, this.deps.fileCaps)
        : undefined;
    if (screened && screened.refusals.length > 0) {
      const filesRefused = refusedFilesText(screened.refusals);
      if (screened.kept.length === 0 && message.text.trim() === '') return { status: 'refused', reason: filesRefused };
      const { attachments: _all, ...rest } = message;
      const result = await this.deliverChecked(
        key,
        screened.kept.length > 0 ? { ...rest, attachments: screened.kept } : rest,
      );
      return 'sessionId' in result ? { ...result, filesRefused } : result;
    }
    return this.deliverChecked(key, message);
  }

  private async deliverChecked(key: SessionKey, message: InboundMessage): Promise<DeliverResult> {
    const sessionId = sessionIdOf(key);
    const routing = this.deps.routing();
    if (routing) {
      // Cluster mode: queued with its claim, applied by whichever instance owns the thread.
      const routed = await routing.deliver(key, message);
      if (routed === DUPLICATE) return { status: 'duplicate' };
      return (routed as DeliverResult | undefined) ?? { status: 'queued', sessionId, inputId: '' };
    }
    if (message.eventId !== undefined && !(await this.deps.coordinator.claimEvent(message.eventId)))
      return { status: 'duplicate' };
    return this.deliverHere(key, message, randomUUID());
  }

  /**
   * A message, applied on the instance that owns its session. `inputId` names the pending
   * input it becomes: in cluster mode the command's id, so a command applied twice (its
   * owner died between applying and consuming it) is recorded once.
   */
  async deliverHere(key: SessionKey, message: InboundMessage, inputId: string): Promise<DeliverResult> {
    const sessionId = sessionIdOf(key);
    const { store, coordinator } = this.deps;
    return coordinator.exclusive(sessionId, async () => {
      const live = await this.deps.sessions.get(sessionId, key, message.userId);
      if (this.deps.routing() && (await this.alreadyHas(live, inputId, message))) return { status: 'duplicate' };
      noteParticipant(live, message.userId);
      const input: PendingInput = { id: inputId, text: message.text, receivedAt: Date.now() };
      if (message.source) input.source = message.source;
      if (message.attachments?.length) input.attachments = message.attachments;

      const prompts = await this.deps.inbox.pending(sessionId);
      // A reply while a question waits is its answer: consumed, not steering. Files shared with
      // it are not lost with the consumed text: they follow the answer as a message of their own.
      if (await this.deps.replies.answerQuestion(live.record, prompts, message)) {
        if (input.attachments) {
          await store.markOpen(sessionId);
          await store.addPendingInput(sessionId, { ...input, text: '' });
          if (isBusy(live))
            await coordinator.dispatch(sessionId, {
              kind: 'steer',
              inputId: input.id,
              text: '',
              attachments: input.attachments,
              ...(input.source ? { source: input.source } : {}),
            });
        }
        if (!isBusy(live)) await this.deps.driver.startResume(live);
        await this.deps.driver.notifyInput(live, input.id, 'answered', input.source);
        return { status: 'answered', sessionId, inputId: input.id };
      }

      // Fair use, checked before anything is recorded. A start it allows is counted at once
      // (check and count are one step, across instances in cluster mode); should the start not
      // happen after all, the count is undone below.
      const starts = !isBusy(live) && live.engine.unansweredToolCalls().length === 0;
      let counted: CountedStart | undefined;
      if (starts) {
        const verdict = await this.deps.fairUse.start(message.userId, sessionId);
        if (!verdict.ok) return { status: 'refused', reason: verdict.reason };
        counted = verdict.counted;
      } else {
        const verdict = this.deps.fairUse.mayQueue(
          await store.pendingLoad(sessionId),
          Buffer.byteLength(input.text, 'utf8'),
        );
        if (!verdict.ok) return { status: 'refused', reason: verdict.reason };
      }
      let result: DeliverResult | undefined;
      try {
        result = await this.deliverCounted(live, message, input, prompts, counted);
        return result;
      } finally {
        // The start it counted did not happen (a spend limit, a reply queued after all, a failure).
        if (counted && result?.status !== 'started') await this.deps.fairUse.undo(counted);
      }
    });
  }

  /** `deliver` past fair use: the spend limits, then the message recorded, queued or started. */
  private async deliverCounted(
    live: LiveSession,
    message: InboundMessage,
    input: PendingInput,
    prompts: InboxItem[],
    counted: CountedStart | undefined,
  ): Promise<DeliverResult> {
    const { store, coordinator, driver, replies } = this.deps;
    const sessionId = live.record.id;
    // Spend limits: a request that would start a turn past one is refused, privately.
    if (counted && this.deps.budget) {
      const budget = await this.deps.budget.mayStart(placeOf(live.record), message.userId);
      if (!budget.ok) return { status: 'refused', reason: budget.reason };
    }

    // Recorded (and the session marked open) before the caller acknowledges the platform.
    await store.markOpen(sessionId);
    await store.addPendingInput(sessionId, input);
    live.lastUsed = Date.now();
    await store.saveSession(live.record);
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
      await replies.decline(live.record, prompts, message);
      await driver.notifyInput(live, input.id, 'queued', input.source);
      return { status: 'queued', sessionId, inputId: input.id };
    }
    if (live.engine.unansweredToolCalls().length > 0) {
      // After a restart: the declined prompts are answered by resuming, and the reply steers.
      await replies.decline(live.record, prompts, message);
      await driver.startResume(live);
      await driver.notifyInput(live, input.id, 'queued', input.source);
      return { status: 'queued', sessionId, inputId: input.id };
    }
    // The thread works for this person until the session is idle again (threadDone).
    if (counted) {
      if (live.countedStart) this.threadDone(live);
      live.countedStart = counted;
    }
    try {
      await driver.startWithInputs(live, [input]);
    } catch (error) {
      // No turn began: nothing will report the session idle (the caller undoes the count).
      if (counted && live.countedStart === counted) live.countedStart = undefined;
      throw error;
    }
    await driver.notifyInput(live, input.id, 'started', input.source);
    await this.deps.stops.applyEarlyStop(live.record);
    return { status: 'started', sessionId, inputId: input.id };
  }

  /** The session is idle: the thread it worked on no longer counts among its person's working threads. */
  threadDone(live: LiveSession): void {
    const counted = live.countedStart;
    if (!counted) return;
    live.countedStart = undefined;
    this.deps.fairUse
      .threadDone(counted)
      .catch((error: unknown) =>
        this.deps.logger.warn(
          { err: error, sessionId: counted.sessionId },
          'fair use: could not count a thread as done (in cluster mode it lapses with its lease)',
        ),
      );
  }

  /**
   * Whether a message (applied again after its owner died between applying and consuming
   * it) is already recorded: as a pending input, or in the transcript.
   */
  private async alreadyHas(live: LiveSession, inputId: string, message: InboundMessage): Promise<boolean> {
    if ((await this.deps.store.getPendingInputs(live.record.id)).some((input) => input.id === inputId)) return true;
    const messageId = message.source?.messageId;
    return (
      messageId !== undefined &&
      live.engine.messages.some((m) => m.role === 'user' && m.source?.messageId === messageId)
    );
  }

  /** The profile a message here runs under: the thread's own, or its place's for a new thread. */
  private async profileAt(key: SessionKey): Promise<string | undefined> {
    const profiles = this.deps.profiles;
    if (!profiles) return undefined;
    const record = await this.deps.sessions.record(sessionIdOf(key));
    return record ? record.profile : profiles.forPlace(key).name;
  }
}

function noteParticipant(live: LiveSession, userId: string): void {
  if (userId === live.record.startedBy || live.record.steerers.includes(userId)) return;
  live.record = { ...live.record, steerers: [...live.record.steerers, userId] };
}
