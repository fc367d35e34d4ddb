// What one thread shows while the bot works in it, on any platform. The presenter consumes the
// session layer's reports (engine events, message dispositions, closed prompts, waits for a
// model slot, clicks) and draws them on the thread's surface (thread-surface.ts): the answer
// as one message per text segment, every tool call its own card updated in place
// (thread-cards.ts), a prompt's buttons on its tool's card, and a note when a turn was
// stopped, failed or ran out of steps. In compact mode (TOOL_DISPLAY=compact) tool calls are
// steps of the reply instead (progress-steps.ts; the surface's `AnswerDraft.step`), and only a
// call that asks a person gets a card, for its buttons. The answer's segments, its usage
// footer and the 👍 / 👎 under a completed turn's answer are turn-answer.ts's.
//
// It also tells the surface where the conversation stands (WorkStatus: thinking, waiting for
// a person, idle).
//
// The idea to hold: the presenter decides what the thread shows and when; the surface only
// how. A surface call that fails is logged and the turn goes on (thread-output.ts): the
// conversation is the source of truth, the thread is its rendering.
import {
  textOf,
  type EngineEvent,
  type EngineLogger,
  type InboxItem,
  type MessageSource,
} from '../../src/engine/index.js';
import type { InputDisposition, SessionObserver } from '../../src/sessions/session-manager.js';
import type { ThreadNotice } from '../../src/sessions/session-observer.js';
import { choiceOf } from '../../src/sessions/prompt-replies.js';
import type { AnswerRecorder } from '../../src/feedback/feedback-book.js';
import type { ModelPrices } from '../../src/ops/pricing.js';
import type { SessionRecord, ThreadRecords } from '../../src/sessions/thread-records.js';
import type { CallText } from './call-arguments.js';
import { ProgressSteps } from './progress-steps.js';
import { ThreadCards } from './thread-cards.js';
import { ThreadOutput } from './thread-output.js';
import type {
  InputMark,
  MessageId,
  ProgressStep,
  StatusDetails,
  ThreadNote,
  ThreadSurface,
  WorkStatus,
} from './thread-surface.js';
import { TurnAnswer } from './turn-answer.js';

export interface ThreadPresenterDeps {
  surface: ThreadSurface;
  /** Where the presenter records the messages it posts (thread-output.ts). */
  records: Pick<ThreadRecords, 'rememberMessage'>;
  logger: EngineLogger;
  /** GRANT_SCOPE, for the words of "always" buttons. */
  grantScope?: 'thread' | 'channel';
  /** TOOL_DISPLAY: a card per tool call (default), or the calls as steps of one reply. */
  toolDisplay?: 'cards' | 'compact';
  /** Where a final answer that offers 👍 / 👎 is recorded, for the click to find (src/feedback/). */
  feedback?: AnswerRecorder;
  /** Masks secrets in what the presenter hands on from a person's text (a session title). */
  mask?: (text: string) => string;
  /** What model calls cost, for the usage footer (default: the built-in table alone). */
  prices?: ModelPrices;
}

export class ThreadPresenter {
  private readonly output: ThreadOutput;
  private readonly cards: ThreadCards;
  private readonly answer: TurnAnswer;
  private stoppedBy: string | undefined;
  /** The note about replies dropped with a stopped turn was posted (once per turn, however many). */
  private droppedNoted = false;
  /** What the surface was last told (a change is told once). */
  private status: WorkStatus | undefined;
  /** Compact mode: the turn's tool calls as steps. */
  private readonly steps = new ProgressSteps();

  constructor(
    private readonly deps: ThreadPresenterDeps,
    private readonly session: Pick<SessionRecord, 'id'> & Partial<Pick<SessionRecord, 'startedBy'>>,
  ) {
    this.output = new ThreadOutput({
      surface: deps.surface,
      records: deps.records,
      logger: deps.logger,
      sessionId: session.id,
    });
    this.cards = new ThreadCards(this.output, deps.grantScope);
    this.answer = new TurnAnswer({
      output: this.output,
      sessionId: session.id,
      feedback: deps.feedback,
      prices: deps.prices,
    });
  }

  private get compact(): boolean {
    return this.deps.toolDisplay === 'compact';
  }

  /** Who reacted with 🛑, so the note can say it. */
  noteStoppedBy(userId: string): void {
    this.stoppedBy = userId;
  }

  /** The full text of a card's call as this thread drew it (for Show all), if it has it. */
  fullTextOf(toolCallId: string): CallText | undefined {
    return this.cards.fullTextOf(toolCallId);
  }

  /** One engine event of this thread's turn; `prompt` is the inbox item behind a permission or interaction. */
  async onEvent(event: EngineEvent, prompt?: InboxItem): Promise<void> {
    switch (event.type) {
      case 'turn_start':
        this.answer.startTurn(event.source?.messageId);
        this.stoppedBy = undefined;
        this.droppedNoted = false;
        this.steps.clear();
        this.status = undefined;
        await this.setStatus('thinking', event.kind === 'run' ? this.titleOf(event.input) : undefined);
        return;
      case 'assistant_delta':
        await this.workAgain();
        this.answer.push(event.text);
        return;
      case 'assistant_message':
        if (event.usage) this.answer.used(event.usage);
        // Tool calls follow: the text before them is a segment of its own, above their cards.
        // In compact mode the reply goes on: the calls are its steps.
        if (event.toolCalls.length > 0 && !this.stepsShown()) await this.answer.close();
        return;
      case 'tool_proposed':
        if (this.stepsShown()) return this.showStep(this.steps.proposed(event));
        await this.cards.proposed(event);
        return;
      case 'permission_required':
      case 'interaction_required':
        // An answer must not stay open while a human decides: a Slack stream dies after ~5 minutes.
        await this.answer.close();
        // Compact mode too: a call that asks a person gets its own card, for the buttons.
        if (this.steps.has(event.toolCallId)) {
          const proposal = this.steps.proposal(event.toolCallId);
          if (proposal) await this.cards.adopt(proposal);
          // Not drawn now: that would open a reply again while the person decides. The step
          // shows its outcome when the call runs or is denied.
          this.steps.changed(event);
        }
        await this.cards.asked(event, prompt);
        await this.setStatus('waiting');
        return;
      case 'tool_started':
      case 'tool_finished':
        await this.workAgain();
        if (this.steps.has(event.toolCallId)) {
          // A call that asked has a card: it shows the outcome there too, under the decision.
          if (this.cards.has(event.toolCallId)) await this.cards.progressed(event);
          return this.showStep(this.steps.changed(event));
        }
        await this.cards.progressed(event);
        return;
      case 'tool_calls_limited':
        await this.note({ kind: 'tool_calls_limited', requested: event.requested, allowed: event.allowed });
        return;
      case 'error':
        await this.answer.close();
        if (event.errorKind === 'budget') {
          await this.note({
            kind: 'budget_paused',
            message: event.message,
            action: { kind: 'continue_past_limit', sessionId: this.session.id },
          });
          return;
        }
        await this.note({
          kind: 'failed',
          message: event.message,
          action: { kind: 'retry', sessionId: this.session.id },
        });
        return;
      case 'interrupted':
        await this.answer.close();
        await this.note({ kind: 'stopped', ...(this.stoppedBy ? { by: this.stoppedBy } : {}) });
        return;
      case 'turn_end':
        await this.answer.endTurn(event.status === 'completed');
        if (event.status === 'max_iterations_exceeded') {
          await this.note({
            kind: 'step_limit',
            iterations: event.iterations,
            action: { kind: 'continue', sessionId: this.session.id },
          });
        }
        await this.setStatus('idle');
        return;
      case 'steering_injected':
        // A reply was taken in and the model answers it next. That answer belongs below the
        // reply, so the segment written before it closes here; otherwise the new text would be
        // glued onto the earlier message, above the reply that caused it.
        await this.answer.close();
        return;
      case 'input_files':
        await this.note({ kind: 'files', problems: event.problems });
        return;
      case 'reasoning_delta':
      case 'iteration_end':
      case 'compacting':
      case 'compacted':
        return;
      default:
        return assertNever(event);
    }
  }

  /**
   * The bot is shutting down while this thread works (a deploy). The open answer is closed
   * (a Slack stream must not be left open), and unless the turn only waits for a person's
   * answer (its buttons keep working after the restart), a note says the turn carries on
   * after the restart.
   */
  async onSuspend(waitingForAnswer: boolean): Promise<void> {
    const streaming = this.answer.open;
    await this.answer.close();
    if (streaming || !waitingForAnswer) await this.note({ kind: 'restarting' });
    await this.setStatus('idle');
  }

  /** Cluster mode: this instance took the thread over after its owner died; say so. */
  async onTakeover(): Promise<void> {
    await this.answer.close();
    const surface = this.output.surface;
    if (surface.closeStaleAnswer)
      await this.output.safely('close the answer the stopped instance left open', () => surface.closeStaleAnswer!());
    await this.note({ kind: 'taken_over' });
  }

  /** A click resolved a prompt: show the decision and who made it; the buttons go. */
  async onDecision(item: InboxItem, userId: string, choice: string): Promise<void> {
    await this.cards.decided(item, userId, choice);
    // The turn goes on (a resumed turn after a restart says so itself, with its turn_start).
    await this.workAgain();
  }

  /** A prompt closed without a click (a reply declined it, a stop closed it). */
  async onPromptClosed(item: InboxItem): Promise<void> {
    await this.cards.closed(item);
  }

  /** A mark on the person's message says what became of it. */
  async onInput(disposition: InputDisposition, source: MessageSource | undefined): Promise<void> {
    const messageId = source?.messageId;
    if (!messageId) return;
    switch (disposition) {
      case 'started':
      case 'queued':
        await this.react(messageId, 'received');
        return;
      case 'injected':
      case 'answered':
        await this.react(messageId, 'taken');
        return;
      case 'dropped':
        await this.unreact(messageId, 'received');
        await this.react(messageId, 'dropped');
        // A mark alone reads as an error; the thread says in words why nothing will happen.
        if (!this.droppedNoted) {
          this.droppedNoted = true;
          await this.note({ kind: 'dropped_at_stop' });
        }
        return;
      default:
        return assertNever(disposition);
    }
  }

  /** Something the bot tells the thread outside a turn's events: a spend limit's 80 % warning. */
  async onNotice(notice: ThreadNotice): Promise<void> {
    switch (notice.kind) {
      case 'budget_warning':
        await this.note({ kind: 'budget_warning', text: notice.text });
        return;
      case 'schedule':
        await this.note({ kind: 'schedule', text: notice.text });
        return;
      case 'schedule_paused':
        await this.note(notice);
        return;
      default:
        return assertNever(notice);
    }
  }

  /** The model call waits for a free slot (MAX_CONCURRENT_MODEL_CALLS), `ahead` in front of it, or got one (null). */
  async onWaiting(ahead: number | null): Promise<void> {
    await this.output.safely('show the wait for a model slot', () => this.output.surface.showWaiting(ahead));
  }

  // ---- pieces ------------------------------------------------------------------------

  /** Compact mode, on a surface that draws steps: tool calls go into the reply. */
  private stepsShown(): boolean {
    return this.compact && this.answer.drawsSteps();
  }

  private async showStep(step: ProgressStep): Promise<void> {
    await this.workAgain();
    this.answer.step(step);
  }

  /** A new request's words, for a platform that titles its conversations (Slack's agent session). */
  private titleOf(input: Parameters<typeof textOf>[0]): StatusDetails {
    const details: StatusDetails = {};
    const title = (this.deps.mask ?? ((text: string) => text))(textOf(input)).trim();
    if (title) details.title = title;
    if (this.session.startedBy) details.initiator = this.session.startedBy;
    return details;
  }

  private async note(note: ThreadNote): Promise<void> {
    await this.output.safely('post a note', async () => {
      const messageId = await this.output.surface.postNote(note);
      if (messageId) await this.output.remember(messageId, 'note');
    });
  }

  /** The person answered (or the wait ended otherwise): the turn works again. */
  private async workAgain(): Promise<void> {
    if (this.status === 'waiting') await this.setStatus('thinking');
  }

  /** Tell the surface where the conversation stands, once per change. */
  private async setStatus(status: WorkStatus, details?: StatusDetails): Promise<void> {
    if (this.status === status) return;
    this.status = status;
    await this.output.safely('set the thread status', () => this.output.surface.setStatus(status, details));
  }

  private async react(messageId: MessageId, mark: InputMark): Promise<void> {
    await this.output.safely('add a reaction', () => this.output.surface.react(messageId, mark));
  }

  private async unreact(messageId: MessageId, mark: InputMark): Promise<void> {
    await this.output.safely('remove a reaction', () => this.output.surface.unreact(messageId, mark));
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}

/** The session layer's observer for a platform: each report goes to its thread's presenter. */
export function presenterObserver(presenterFor: (session: SessionRecord) => ThreadPresenter): SessionObserver {
  return {
    onEvent: (session, event, prompt) => presenterFor(session).onEvent(event, prompt),
    onWaiting: (session, ahead) => presenterFor(session).onWaiting(ahead),
    onInput: (session, _inputId, disposition, source) => presenterFor(session).onInput(disposition, source),
    onPromptClosed: (session, item) => presenterFor(session).onPromptClosed(item),
    onSuspend: (session, waitingForAnswer) => presenterFor(session).onSuspend(waitingForAnswer),
    onTakeover: (session) => presenterFor(session).onTakeover(),
    onStopBy: (session, userId) => presenterFor(session).noteStoppedBy(userId),
    onNotice: (session, notice) => presenterFor(session).onNotice(notice),
    onDecision: async (session, item) => {
      const choice = item.resolution ? choiceOf(item.resolution) : undefined;
      if (choice !== undefined && item.resolvedBy)
        await presenterFor(session).onDecision(item, item.resolvedBy, choice);
    },
  };
}
