// The session layer: where a platform event becomes a turn. Connectors call four things,
// the same on every platform: `deliver` (a message), `interrupt` (a stop), `resolve` (a
// click on a prompt) and the thread commands (retry, switch model, grants, forget). The
// policy check happens here, for every transport alike.
//
// The one idea: one running turn per session, and nothing acknowledged that was not
// recorded. An inbound message is claimed (de-duplicated) and persisted as a pending
// input before `deliver` returns (so before the platform is acknowledged); a turn takes
// it from there, as a new turn when the session is idle or as steering when it runs.
// After a restart, `recover` repairs what the crash left: prompts still pending keep
// their buttons working, a tool call that was running gets an honest error result.
import { randomUUID } from 'node:crypto';
import {
  approvalChoices,
  interactionChoices,
  silentLogger,
  type EngineEvent,
  type EngineLogger,
  type GrantsSnapshot,
  type InboxItem,
  type InboxResolution,
  type MessageSource,
  type ResolveResult,
} from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import { sessionIdOf, type PendingInput, type SessionKey, type SessionRecord, type SessionStore } from '../store/session-store.js';
import type { AccessPolicy } from './access-policy.js';
import type { Coordinator, SessionCommand } from './coordination.js';
import { buildLiveSession, type EngineSetupFactory, type GrantScope, type LiveSession } from './live-session.js';

export type InputDisposition = 'started' | 'queued' | 'injected' | 'answered' | 'dropped';

/** What the connector renders. Called in order, per session; failures are logged, not fatal. */
export interface SessionObserver {
  /** Every engine event; `prompt` is the inbox item behind a permission or interaction card. */
  onEvent?(session: SessionRecord, event: EngineEvent, prompt?: InboxItem): void | Promise<void>;
  /** What became of an inbound message: a reaction in the thread, say. */
  onInput?(session: SessionRecord, inputId: string, disposition: InputDisposition, source?: MessageSource): void | Promise<void>;
  /** A prompt closed without a click (a stop, a reply, a restart): its card should say so. */
  onPromptClosed?(session: SessionRecord, item: InboxItem): void | Promise<void>;
}

export interface InboundMessage {
  text: string;
  userId: string;
  source?: MessageSource;
  /** The platform's event id, for de-duplication of retries and replays. */
  eventId?: string;
}

export type DeliverResult =
  | { status: 'started' | 'queued' | 'answered'; sessionId: string; inputId: string }
  | { status: 'duplicate' }
  | { status: 'refused'; reason: string };

export type ControlResult =
  | { status: 'done'; sessionId: string }
  | { status: 'idle' | 'busy' | 'nothing_to_do' | 'unknown_session' }
  | { status: 'refused'; reason: string };

/** A click: the choice as the button carries it, checked against the item's vocabulary. */
export type PromptChoice = { choice: string; text?: string };

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
}

export class SessionManager {
  private readonly live = new Map<string, LiveSession>();
  private readonly building = new Map<string, Promise<LiveSession>>();
  private readonly logger: EngineLogger;
  private readonly observer: SessionObserver;
  private readonly evictTimer: NodeJS.Timeout;
  private closing = false;

  constructor(private readonly options: SessionManagerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.observer = options.observer ?? {};
    const idleMs = options.idleEvictMs ?? 15 * 60 * 1000;
    this.evictTimer = setInterval(() => void this.evictIdle(idleMs), Math.max(1000, idleMs / 2));
    this.evictTimer.unref();
    options.coordinator.serve((sessionId, command) => this.applyCommand(sessionId, command));
  }

  /** The owner's side of the coordination seam: act on a command for a session we run. */
  private async applyCommand(sessionId: string, command: SessionCommand): Promise<void> {
    const live = this.live.get(sessionId);
    switch (command.kind) {
      case 'steer':
        live?.engine.queueSteering(command.text, command.source, command.inputId);
        return;
      case 'stop':
        if (live?.engine.isRunning) {
          live.stopped = true;
          live.engine.requestInterrupt();
        }
        return;
      case 'resolved':
        // A live engine waiting on this prompt is woken by the inbox; otherwise resume.
        await this.options.coordinator.exclusive(sessionId, async () => {
          const resumable = await this.liveSession(sessionId);
          if (resumable.engine.isRunning || resumable.turn) return;
          if (resumable.engine.unansweredToolCalls().some((call) => call.id === command.toolCallId)) this.startResume(resumable);
        });
        return;
    }
  }

  // ---- inbound -----------------------------------------------------------------------

  async deliver(key: SessionKey, message: InboundMessage): Promise<DeliverResult> {
    if (this.closing) return { status: 'refused', reason: 'The bot is restarting; send that again in a moment.' };
    const access = this.options.access.mayStartOrSteer(message.userId);
    if (!access.allowed) return { status: 'refused', reason: access.reason };
    if (message.eventId !== undefined && !(await this.options.coordinator.claimEvent(message.eventId))) return { status: 'duplicate' };
    const sessionId = sessionIdOf(key);
    return this.options.coordinator.exclusive(sessionId, async () => {
      const live = await this.liveSession(sessionId, key, message.userId);
      this.noteParticipant(live, message.userId);
      const input: PendingInput = { id: randomUUID(), text: message.text, receivedAt: Date.now() };
      if (message.source) input.source = message.source;

      const prompts = await this.options.inbox.pending(sessionId);
      // A reply while a question waits is its answer: consumed, not steering.
      if (await this.answerQuestionWithReply(live, prompts, message)) {
        await this.notifyInput(live, input.id, 'answered', input.source);
        return { status: 'answered', sessionId, inputId: input.id };
      }

      // Recorded before the caller acknowledges the platform.
      await this.options.store.setPendingInputs(sessionId, [...(await this.options.store.getPendingInputs(sessionId)), input]);
      await this.touch(live);
      if (live.engine.isRunning || live.turn) {
        // Queued before any waiting approval is declined, so the turn that wakes up on the
        // decline finds the reply already there and takes it right after that tool round.
        await this.options.coordinator.dispatch(sessionId, { kind: 'steer', inputId: input.id, text: input.text, ...(input.source ? { source: input.source } : {}) });
        await this.declinePromptsWithReply(live, prompts, message);
        await this.notifyInput(live, input.id, 'queued', input.source);
        return { status: 'queued', sessionId, inputId: input.id };
      }
      if (live.engine.unansweredToolCalls().length > 0) {
        // After a restart: the declined prompts are answered by resuming, and the reply steers.
        await this.declinePromptsWithReply(live, prompts, message);
        live.engine.queueSteering(input.text, input.source, input.id);
        this.startResume(live);
        await this.notifyInput(live, input.id, 'queued', input.source);
        return { status: 'queued', sessionId, inputId: input.id };
      }
      this.startWithInputs(live, [input]);
      await this.notifyInput(live, input.id, 'started', input.source);
      return { status: 'started', sessionId, inputId: input.id };
    });
  }

  /** A stop, from a reaction or a command. Ends the running turn, or closes a waiting prompt. */
  async interrupt(sessionId: string, userId: string): Promise<ControlResult> {
    const record = this.live.get(sessionId)?.record ?? (await this.options.store.getSession(sessionId));
    if (!record) return { status: 'unknown_session' };
    const access = this.options.access.mayStop(userId, record);
    if (!access.allowed) return { status: 'refused', reason: access.reason };
    if (this.options.coordinator.isTurnOwned(sessionId)) {
      await this.options.coordinator.dispatch(sessionId, { kind: 'stop', userId });
      return { status: 'done', sessionId };
    }
    // No turn runs, but a prompt may wait (the process restarted while it did).
    return this.options.coordinator.exclusive(sessionId, async () => {
      const pending = await this.options.inbox.pending(sessionId);
      if (pending.length === 0) return { status: 'idle' };
      for (const item of pending) await this.closePrompt(record, item, { kind: 'interrupted' }, userId);
      const live = await this.liveSession(sessionId);
      await live.engine.closeUnansweredToolCalls('interrupted by user', { kind: 'interrupted', text: 'Stopped by the user.' });
      return { status: 'done', sessionId };
    });
  }

  /** A click on a prompt card. Resumes the turn when no engine waits for the answer (after a restart). */
  async resolve(itemId: string, choice: PromptChoice, userId: string): Promise<ResolveOutcome> {
    const item = await this.options.inbox.get(itemId);
    if (!item) return { ok: false, reason: 'unknown_item' };
    const record = this.live.get(item.sessionId)?.record ?? (await this.options.store.getSession(item.sessionId));
    if (!record) return { ok: false, reason: 'unknown_item' };
    const access = this.options.access.mayResolve(userId, record, item.kind);
    if (!access.allowed) return { ok: false, reason: 'refused', message: access.reason };
    const resolution = resolutionOf(item, choice);
    if (!resolution) return { ok: false, reason: 'invalid_choice' };
    const result = await this.options.inbox.resolve(itemId, resolution, userId);
    if (!result.ok) return result;
    await this.options.coordinator.dispatch(item.sessionId, { kind: 'resolved', itemId, toolCallId: item.toolCallId });
    return result;
  }

  /** The Retry button after a provider error, or Continue after the iteration limit. */
  async retry(sessionId: string, userId: string): Promise<ControlResult> {
    return this.control(sessionId, userId, async (live) => {
      if (!live.engine.canRetry()) return { status: 'nothing_to_do' };
      this.startTurn(live, live.engine.retry());
      return { status: 'done', sessionId };
    });
  }

  async switchModel(sessionId: string, model: string, userId: string): Promise<ControlResult & { notice?: string | null }> {
    return this.control(sessionId, userId, async (live) => {
      const notice = await live.engine.switchModel(model);
      live.record = { ...live.record, model: live.engine.model };
      await this.options.store.saveSession(live.record);
      return { status: 'done', sessionId, notice };
    });
  }

  async listGrants(sessionId: string): Promise<{ thread: GrantsSnapshot; channel: GrantsSnapshot } | undefined> {
    const record = this.live.get(sessionId)?.record ?? (await this.options.store.getSession(sessionId));
    if (!record) return undefined;
    return { thread: record.grants, channel: await this.options.store.getChannelGrants(record.key) };
  }

  /** Revoke an "always" grant (a tool name, or a command of a tool). Takes effect from the next turn. */
  async revokeGrant(sessionId: string, grant: { tool: string; command?: string }, userId: string): Promise<ControlResult> {
    return this.control(sessionId, userId, async (live) => {
      const without = (grants: GrantsSnapshot): GrantsSnapshot =>
        grant.command === undefined
          ? { tools: grants.tools.filter((t) => t !== grant.tool), commands: grants.commands }
          : { tools: grants.tools, commands: grants.commands.filter((c) => !(c.tool === grant.tool && c.command === grant.command)) };
      live.record = { ...live.record, grants: without(live.record.grants) };
      await this.options.store.saveSession(live.record);
      await this.options.store.setChannelGrants(live.record.key, without(await this.options.store.getChannelGrants(live.record.key)));
      await this.evict(sessionId); // rebuilt with the remaining grants on next use
      return { status: 'done', sessionId };
    });
  }

  /** Delete everything stored for this thread. */
  async forget(sessionId: string, userId: string): Promise<ControlResult> {
    return this.control(sessionId, userId, async () => {
      await this.evict(sessionId);
      await this.options.store.deleteSession(sessionId);
      return { status: 'done', sessionId };
    });
  }

  /** What a status command shows: the model, whether a turn runs, how many prompts wait. */
  async describe(sessionId: string): Promise<{ model: string; running: boolean; pendingPrompts: number } | undefined> {
    const live = this.live.get(sessionId);
    const record = live?.record ?? (await this.options.store.getSession(sessionId));
    if (!record) return undefined;
    const pending = await this.options.inbox.pending(sessionId);
    return { model: live?.engine.model ?? record.model, running: Boolean(live?.engine.isRunning || live?.turn), pendingPrompts: pending.length };
  }

  /** Wait until no turn runs (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const turns = [...this.live.values()].map((live) => live.turn).filter((turn): turn is Promise<void> => turn !== null);
      if (turns.length === 0) return;
      await Promise.allSettled(turns);
    }
  }

  /** Stop taking work; stop running turns through the usual interrupt path; release everything. */
  async shutdown(graceMs = 5_000): Promise<void> {
    this.closing = true;
    clearInterval(this.evictTimer);
    const settled = Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    await settled;
    for (const live of this.live.values()) if (live.engine.isRunning) live.engine.requestInterrupt();
    await this.idle();
    for (const id of [...this.live.keys()]) await this.evict(id);
  }

  // ---- recovery ----------------------------------------------------------------------

  /**
   * Repair what a crash left, before anything else touches a session: a call with a
   * pending prompt stays pending (its buttons still work); a call answered while we were
   * down is resumed; a call that was running when the process died gets an error result,
   * unless its tool is idempotent, in which case it simply runs again. Inputs that were
   * recorded but never taken start their turn now.
   */
  async recover(): Promise<{ sessions: number; repaired: string[]; resumed: string[]; started: string[] }> {
    const report = { sessions: 0, repaired: [] as string[], resumed: [] as string[], started: [] as string[] };
    for (const sessionId of await this.options.store.listSessionIds()) {
      report.sessions++;
      await this.options.coordinator.exclusive(sessionId, async () => {
        const live = await this.liveSession(sessionId);
        const calls = live.engine.unansweredToolCalls();
        let resume = false;
        let rerun = false;
        const orphans: string[] = [];
        for (const call of calls) {
          const item = await this.options.inbox.findByCall(sessionId, call.id);
          if (item?.state === 'pending') continue;
          if (item?.state === 'resolved') resume = true;
          else if (live.engine.tools.get(call.function.name)?.metadata?.idempotent) rerun = true;
          else orphans.push(call.id);
        }
        if (orphans.length > 0 && !resume && !rerun) {
          await live.engine.closeUnansweredToolCalls('interrupted by a restart: the bot stopped while this call ran; it was not run again', {
            kind: 'interrupted',
            text: 'The bot restarted during this turn.',
          });
          report.repaired.push(sessionId);
        } else if (resume || rerun) {
          this.startResume(live);
          report.resumed.push(sessionId);
          return;
        }
        const pending = await this.options.store.getPendingInputs(sessionId);
        if (pending.length > 0 && calls.length === orphans.length) {
          this.startWithInputs(live, pending);
          report.started.push(sessionId);
        }
      });
    }
    return report;
  }

  // ---- turns -------------------------------------------------------------------------

  private startWithInputs(live: LiveSession, inputs: PendingInput[]): void {
    const [first, ...rest] = inputs;
    if (!first) return;
    live.stopped = false;
    live.startedWith = first.id;
    const events = live.engine.run(first.text, first.source ? { source: first.source } : {});
    for (const input of rest) live.engine.queueSteering(input.text, input.source, input.id);
    this.startTurn(live, events);
  }

  private startResume(live: LiveSession): void {
    live.stopped = false;
    this.startTurn(live, live.engine.resume());
  }

  private startTurn(live: LiveSession, events: AsyncIterable<EngineEvent>): void {
    const lease = this.options.coordinator.acquireTurn(live.record.id);
    if (!lease) throw new Error(`session ${live.record.id} already has a running turn`);
    live.turn = (async () => {
      try {
        for await (const event of events) await this.handleEvent(live, event);
      } catch (error) {
        this.logger.error({ err: error, sessionId: live.record.id }, 'turn failed');
      } finally {
        lease.release();
        live.lastUsed = Date.now();
      }
      await this.afterTurn(live);
    })();
  }

  /** Replies that arrived as the turn finished start the next turn (unless it was stopped). */
  private async afterTurn(live: LiveSession): Promise<void> {
    await this.options.coordinator.exclusive(live.record.id, async () => {
      live.turn = null;
      const leftover = live.engine.takePendingSteering();
      if (leftover.length === 0) return;
      const stored = await this.options.store.getPendingInputs(live.record.id);
      const inputs = leftover.map((steer) => stored.find((input) => input.id === steer.id) ?? { id: steer.id, text: steer.text, receivedAt: Date.now() });
      if (live.stopped) {
        // The user stopped the turn: running their queued replies now would undo the stop.
        await this.options.store.setPendingInputs(live.record.id, stored.filter((input) => !leftover.some((s) => s.id === input.id)));
        for (const input of inputs) await this.notifyInput(live, input.id, 'dropped', input.source);
        return;
      }
      this.startWithInputs(live, inputs);
    });
  }

  private async handleEvent(live: LiveSession, event: EngineEvent): Promise<void> {
    let prompt: InboxItem | undefined;
    switch (event.type) {
      case 'turn_start':
        if (event.kind === 'run' && live.startedWith) await this.removePending(live, live.startedWith);
        live.startedWith = undefined;
        break;
      case 'steering_injected':
        await this.removePending(live, event.id);
        await this.notifyInput(live, event.id, 'injected', event.source);
        break;
      case 'permission_required':
        // Opened (persisted) before the card is shown, so a click always finds its item.
        prompt = await this.options.inbox.open({
          sessionId: live.record.id,
          toolCallId: event.toolCallId,
          kind: 'approval',
          choices: approvalChoices(event.command),
        });
        break;
      case 'interaction_required': {
        const options = event.kind === 'question' ? ((event.arguments as { options?: string[] }).options ?? []) : [];
        prompt = await this.options.inbox.open({
          sessionId: live.record.id,
          toolCallId: event.toolCallId,
          kind: event.kind,
          choices: interactionChoices(event.kind, options),
        });
        break;
      }
      case 'turn_end':
        await this.touch(live);
        break;
      default:
        break;
    }
    try {
      await this.observer.onEvent?.(live.record, event, prompt);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: live.record.id, event: event.type }, 'the view failed to render an event');
    }
  }

  /** A reply while a question waits is its answer (returns true: the reply is consumed). */
  private async answerQuestionWithReply(live: LiveSession, prompts: InboxItem[], message: InboundMessage): Promise<boolean> {
    const question = prompts.find((item) => item.kind === 'question');
    if (!question || !this.options.access.mayResolve(message.userId, live.record, 'question').allowed) return false;
    const answered = (await this.options.inbox.resolve(question.id, { kind: 'question', answer: message.text }, message.userId)).ok;
    if (answered && !live.engine.isRunning && !live.turn) this.startResume(live);
    return answered;
  }

  /**
   * A reply while an approval, plan or directory request waits declines it, quoting the
   * reply (a reply is a redirection, never an approval); the reply then steers.
   */
  private async declinePromptsWithReply(live: LiveSession, prompts: InboxItem[], message: InboundMessage): Promise<void> {
    for (const item of prompts) {
      if (item.kind === 'question') continue;
      const note = `the user replied instead of approving: ${JSON.stringify(message.text)}`;
      const resolution: InboxResolution =
        item.kind === 'approval'
          ? { kind: 'approval', outcome: 'deny', note }
          : item.kind === 'plan'
            ? { kind: 'plan', approved: false, feedback: message.text }
            : { kind: 'directory', granted: false };
      await this.closePrompt(live.record, item, resolution, message.userId);
    }
  }

  private async closePrompt(record: SessionRecord, item: InboxItem, resolution: InboxResolution, userId: string): Promise<void> {
    const result = await this.options.inbox.resolve(item.id, resolution, userId);
    if (!result.ok) return;
    try {
      await this.observer.onPromptClosed?.(record, result.item);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: record.id }, 'the view failed to close a prompt');
    }
  }

  // ---- sessions in memory --------------------------------------------------------------

  private async liveSession(sessionId: string, key?: SessionKey, starter?: string): Promise<LiveSession> {
    const existing = this.live.get(sessionId);
    if (existing) return existing;
    let building = this.building.get(sessionId);
    if (!building) {
      building = (async () => {
        let record = await this.options.store.getSession(sessionId);
        if (!record) {
          if (!key) throw new Error(`unknown session ${sessionId}`);
          const now = Date.now();
          record = { id: sessionId, key, model: this.options.defaultModel, grants: { tools: [], commands: [] }, compaction: null, steerers: [], directories: [], createdAt: now, updatedAt: now };
          if (starter !== undefined) record.startedBy = starter;
          await this.options.store.saveSession(record);
        }
        const live = await buildLiveSession({
          record,
          store: this.options.store,
          inbox: this.options.inbox,
          setup: await this.options.engineSetup(record),
          grantScope: this.options.grantScope ?? 'thread',
        });
        this.live.set(sessionId, live);
        return live;
      })().finally(() => this.building.delete(sessionId));
      this.building.set(sessionId, building);
    }
    return building;
  }

  private noteParticipant(live: LiveSession, userId: string): void {
    if (userId === live.record.startedBy || live.record.steerers.includes(userId)) return;
    live.record = { ...live.record, steerers: [...live.record.steerers, userId] };
  }

  private async touch(live: LiveSession): Promise<void> {
    live.lastUsed = Date.now();
    await this.options.store.saveSession(live.record);
  }

  private async removePending(live: LiveSession, inputId: string): Promise<void> {
    const pending = await this.options.store.getPendingInputs(live.record.id);
    if (pending.some((input) => input.id === inputId)) {
      await this.options.store.setPendingInputs(live.record.id, pending.filter((input) => input.id !== inputId));
    }
  }

  private async notifyInput(live: LiveSession, inputId: string, disposition: InputDisposition, source?: MessageSource): Promise<void> {
    try {
      await this.observer.onInput?.(live.record, inputId, disposition, source);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: live.record.id }, 'the view failed to show a message disposition');
    }
  }

  private async control(sessionId: string, userId: string, work: (live: LiveSession) => Promise<ControlResult & { notice?: string | null }>): Promise<ControlResult & { notice?: string | null }> {
    const record = this.live.get(sessionId)?.record ?? (await this.options.store.getSession(sessionId));
    if (!record) return { status: 'unknown_session' };
    const access = this.options.access.mayStop(userId, record);
    if (!access.allowed) return { status: 'refused', reason: access.reason };
    return this.options.coordinator.exclusive(sessionId, async () => {
      const live = await this.liveSession(sessionId);
      if (live.engine.isRunning || live.turn) return { status: 'busy' };
      return work(live);
    });
  }

  private async evict(sessionId: string): Promise<void> {
    const live = this.live.get(sessionId);
    if (!live || live.engine.isRunning || live.turn) return;
    this.live.delete(sessionId);
    try {
      await live.setup.dispose?.();
    } catch (error) {
      this.logger.warn({ err: error, sessionId }, 'disposing a session failed');
    }
  }

  private async evictIdle(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const [id, live] of this.live) {
      if (!live.turn && !live.engine.isRunning && now - live.lastUsed > idleMs) await this.evict(id);
    }
  }

  /** How many engines are in memory (tests, metrics). */
  get liveCount(): number {
    return this.live.size;
  }
}

/** A button's choice, checked against the kind of prompt it answers. */
function resolutionOf(item: InboxItem, { choice, text }: PromptChoice): InboxResolution | undefined {
  switch (item.kind) {
    case 'approval':
      return choice === 'once' || choice === 'always_tool' || choice === 'always_command' || choice === 'deny'
        ? { kind: 'approval', outcome: choice }
        : undefined;
    case 'plan':
      return choice === 'approve' ? { kind: 'plan', approved: true } : choice === 'reject' ? { kind: 'plan', approved: false, ...(text ? { feedback: text } : {}) } : undefined;
    case 'directory':
      return choice === 'grant' ? { kind: 'directory', granted: true } : choice === 'deny' ? { kind: 'directory', granted: false } : undefined;
    case 'question':
      return { kind: 'question', answer: text ?? choice };
  }
}
