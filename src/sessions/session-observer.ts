// What the session layer reports to the connectors that render it. A report a view fails to
// render is logged and the turn goes on: the conversation is the source of truth, the
// thread is its rendering.
import type { EngineEvent, EngineLogger, InboxItem, MessageSource } from '../engine/index.js';
import type { SessionRecord } from '../store/session-store.js';

export type InputDisposition = 'started' | 'queued' | 'injected' | 'answered' | 'dropped';

/**
 * Something the bot tells a thread that no engine event carries. `budget_warning`: a spend
 * limit the thread spends against passed 80 % (told once per limit and period); `text` is the
 * bot's own words (src/ops/budget-words.ts), safe to show as they are.
 */
export type ThreadNotice =
  | { kind: 'budget_warning'; text: string }
  /** Scheduled work (src/schedules/): a run starts (with when the next one is), was skipped, or was closed after waiting too long. */
  | { kind: 'schedule'; text: string }
  | ({ kind: 'schedule_paused' } & SchedulePaused);

/**
 * A schedule's run was refused because its creator may no longer use the bot in its thread
 * (src/schedules/access-pauses.ts): the one note its thread gets about it, addressed to the
 * people who approve there. The words are the surface's (connectors/shared/card-words.ts).
 */
export interface SchedulePaused {
  scheduleId: string;
  /** The task as its creator wrote it: a person's words, escaped wherever shown. */
  task: string;
  /** Who set it (a platform user id). */
  creator: string;
  /** Who approves in the thread (ADMINS and its profile's approvers, else its starter): the note mentions them. */
  approvers: string[];
  /** Refused runs left before it ends by itself; 0: it has ended (that was its last run). */
  runsLeft: number;
  /** When it is next due, in words in its time zone; absent once it has ended. */
  next?: string;
}

/** What the connector renders. Called in order, per session; failures are logged, not fatal. */
export interface SessionObserver {
  /** Every engine event; `prompt` is the inbox item behind a permission or interaction card. */
  onEvent?(session: SessionRecord, event: EngineEvent, prompt?: InboxItem): void | Promise<void>;
  /** What became of an inbound message: a reaction in the thread, say. */
  onInput?(
    session: SessionRecord,
    inputId: string,
    disposition: InputDisposition,
    source?: MessageSource,
  ): void | Promise<void>;
  /** A prompt closed without a click (a stop, a reply, a restart): its card should say so. */
  onPromptClosed?(session: SessionRecord, item: InboxItem): void | Promise<void>;
  /** The thread's model call waits for a free slot (`ahead` calls in front), or got one (null). */
  onWaiting?(session: SessionRecord, ahead: number | null): void | Promise<void>;
  /**
   * The bot is shutting down while this session's turn is in flight; the turn carries on
   * after the restart. `waitingForAnswer`: it only waits for a person's click.
   */
  onSuspend?(session: SessionRecord, waitingForAnswer: boolean): void | Promise<void>;
  /**
   * Cluster mode: a prompt of a turn this instance runs was answered on another instance. Its
   * card here must show the decision too, or the next render of the card would drop it.
   */
  onDecision?(session: SessionRecord, item: InboxItem): void | Promise<void>;
  /**
   * A person's stop reached the instance that runs the thread (the one that shows its
   * "Stopped by …" note): in cluster mode it may have come in on another instance.
   */
  onStopBy?(session: SessionRecord, userId: string): void | Promise<void>;
  /** Cluster mode: this instance took the session over from one that died. */
  onTakeover?(session: SessionRecord): void | Promise<void>;
  /** A notice for the thread from outside its turn's events (a spend limit's 80 % warning). */
  onNotice?(session: SessionRecord, notice: ThreadNotice): void | Promise<void>;
}

/** The observer as the session layer calls it: never throws. */
export class Reporter {
  constructor(
    private readonly observer: SessionObserver,
    private readonly logger: EngineLogger,
  ) {}

  async event(session: SessionRecord, event: EngineEvent, prompt?: InboxItem): Promise<void> {
    try {
      await this.observer.onEvent?.(session, event, prompt);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id, event: event.type }, 'the view failed to render an event');
    }
  }

  async input(
    session: SessionRecord,
    inputId: string,
    disposition: InputDisposition,
    source?: MessageSource,
  ): Promise<void> {
    try {
      await this.observer.onInput?.(session, inputId, disposition, source);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id }, 'the view failed to show a message disposition');
    }
  }

  async decided(session: SessionRecord, item: InboxItem): Promise<void> {
    try {
      await this.observer.onDecision?.(session, item);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id }, 'the view failed to show a decision');
    }
  }

  async stopBy(session: SessionRecord, userId: string): Promise<void> {
    try {
      await this.observer.onStopBy?.(session, userId);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id }, 'the view failed to note who stopped');
    }
  }

  async takenOver(session: SessionRecord): Promise<void> {
    try {
      await this.observer.onTakeover?.(session);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id }, 'the view failed to say the thread was taken over');
    }
  }

  async promptClosed(session: SessionRecord, item: InboxItem): Promise<void> {
    try {
      await this.observer.onPromptClosed?.(session, item);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id }, 'the view failed to close a prompt');
    }
  }
}
