// What a chat platform must offer the thread presenter (thread-presenter.ts) to show one
// thread: post and edit a tool card, post a note with an optional button, react to a message,
// stream or edit an answer, show that the bot is working or waiting. One surface per thread.
//
// The idea to hold: the presenter decides WHAT the thread shows and WHEN (which events open
// or close an answer, one card per tool call, which note ends a turn, which mark a person's
// message gets); the surface decides HOW (Block Kit or Discord components, which emoji, how
// a mention is written, whether an answer streams natively or is posted and edited). A new
// platform writes a surface and its rendering, never a copy of the presenter.
//
// Rules every surface follows:
// - A method may throw: the presenter logs the failure and goes on (the conversation is the
//   source of truth, the thread its rendering). Swallow only what is not a failure on your
//   platform (Slack's `already_reacted`, say).
// - Text in the models below is as the model, a tool or a person wrote it: escape it for
//   your markup, show what an approver reads as the shared rule says (approval-view.ts:
//   hidden characters revealed, blank runs counted, misleading words flagged, which choices
//   the card or the full view may offer), and let nothing you post mass-mention (mentions.ts).
// - Message ids are yours (Slack: a ts; Discord: a snowflake). The presenter only hands
//   them back to you and records them under `messageKey`.
import type { InboxItem } from '../../src/engine/index.js';
import type { SchedulePaused } from '../../src/sessions/session-observer.js';
import type { ToolCardState } from './tool-card.js';

/** A platform's id of one message it posted or received (Slack: its ts). */
export type MessageId = string;

/** What a card's prompt needs besides the card: the item, its words, and where a grant applies. */
export interface CardPrompt {
  /** The pending (or just resolved) prompt: its id and `choices` are what the buttons carry. */
  item: InboxItem;
  /** A question's text, shown in full on the card. */
  question?: string;
  /** A plan's text: approved like a call, so shown in full (or in full on demand). */
  plan?: string;
  /** GRANT_SCOPE: where an "always" answer applies (default the thread), for the buttons' words. */
  grantScope?: 'thread' | 'channel';
}

/**
 * One tool call's card as it should look now. Render all of it each time: the presenter
 * posts a card once and then updates that same message in place, one call at a time, each
 * with the card's latest state. Buttons are shown only while `prompt?.item.state` is
 * `'pending'`; a decided card shows `state.decision` ("Approved by @x") instead.
 */
export interface CardView {
  state: ToolCardState;
  prompt?: CardPrompt;
}

/** A button under a note: each runs the thread's last request again (the session's `retry`). */
export interface NoteAction {
  /**
   * `retry` after a failure; `continue` after the step limit; `continue_past_limit` after a
   * spend limit paused the turn (only an admin's click counts: the session layer refuses
   * anyone else's). Word the label for your platform.
   */
  kind: 'retry' | 'continue' | 'continue_past_limit';
  /** What the button must carry, for the connector to call `controls.retry(sessionId, …)` on a click. */
  sessionId: string;
}

/**
 * A note that says how a turn went, posted as its own message in the thread. The words are
 * the surface's (Slack's: `noteMessage` in slack/blocks.ts); the facts are these.
 */
export type ThreadNote =
  /** The model asked for more tool calls in one response than MAX_TOOL_CALLS_PER_RESPONSE allows. */
  | { kind: 'tool_calls_limited'; requested: number; allowed: number }
  /** The turn failed; `message` is the engine's error text (untrusted: escape it). */
  | { kind: 'failed'; message: string; action: NoteAction }
  /** The turn was stopped, by this person's 🛑 when known. */
  | { kind: 'stopped'; by?: string }
  /** The turn used every model call one request may make (MAX_ITERATIONS). */
  | { kind: 'step_limit'; iterations: number; action: NoteAction }
  /** A spend limit paused the turn before its next model call; `message` names the limit and its reset (escape it). */
  | { kind: 'budget_paused'; message: string; action: NoteAction }
  /** A spend limit this thread spends against passed 80 % (the bot's own words; escape them anyway). */
  | { kind: 'budget_warning'; text: string }
  /** Scheduled work: a run starts (and when the next is), was skipped or closed (the bot's own words, with a task a person wrote: escape them). */
  | { kind: 'schedule'; text: string }
  /** A schedule paused (or a one-off not run) because its creator lost access: its approvers are mentioned. Words: card-words.ts schedulePausedText. */
  | ({ kind: 'schedule_paused' } & SchedulePaused)
  /** The bot is shutting down mid-turn (a deploy): the turn carries on after the restart. Words: card-words.ts RESTARTING_NOTE. */
  | { kind: 'restarting' }
  /** Cluster mode: another instance took the thread over after its owner died. Words: card-words.ts TAKEN_OVER_NOTE. */
  | { kind: 'taken_over' }
  /** Replies queued when a stop landed were dropped with the stopped turn. Words: card-words.ts DROPPED_AT_STOP_NOTE. */
  | { kind: 'dropped_at_stop' }
  /** Files shared with a message that the model does not get, each with why (untrusted names: escape them). Words: card-words.ts filesNoteText. */
  | { kind: 'files'; problems: string[] };

/**
 * What became of a person's message, shown as a reaction on it:
 * `received` (a turn started or it is queued: Slack 👀), `taken` (it steered the running turn
 * or answered a prompt: ✅), `dropped` (it will not be acted on: ❌, after `received` is taken off).
 */
export type InputMark = 'received' | 'taken' | 'dropped';

/**
 * Where the thread's conversation stands: `thinking` while a turn works, `waiting` while it
 * waits for a person (an approval, an answer), `idle` between turns, `closed` once /forget
 * deleted it. Slack shows these as its agent session's status (processing, suspended,
 * active, closed) with a native Stop button while it works; Discord types while thinking.
 */
export type WorkStatus = 'thinking' | 'waiting' | 'idle' | 'closed';

/**
 * Sent with a turn's `thinking` status when the turn answers a new request: what a platform
 * that names its conversations (Slack's agent session title) may use when it creates one.
 * The title is the request as the person wrote it (untrusted, not yet shortened: neutralise
 * its mentions and cap it for your platform); secrets are already masked.
 */
export interface StatusDetails {
  title?: string;
  /** Who started the conversation (the session's starter). */
  initiator?: string;
}

/**
 * Compact progress (TOOL_DISPLAY=compact): one tool call as a step of the reply's progress,
 * instead of a card of its own. `details` (what the call does: its arguments, short) is
 * set on the step's first appearance and never changes; `output` (a short preview of its
 * result) once it finished. Slack draws steps as task cards (`task_update` chunks of the
 * streamed reply, or a `plan` block updated in place); Discord and the playground as one
 * progress message edited in place.
 */
export interface ProgressStep {
  /** The tool call id. */
  id: string;
  /** What the step is, in a few words ("run_shell: git status"). Untrusted: escape it. */
  title: string;
  status: 'pending' | 'in_progress' | 'complete' | 'error';
  details?: string;
  output?: string;
}

/** What `finish` adds under a turn's last answer. */
export interface AnswerEnding {
  /** The usage line (plain text), smaller, under the answer. */
  footer?: string;
  /**
   * Offer 👍 / 👎 on this answer (it is the turn's final answer). The click's handler finds
   * the answer by the clicked message (its key), never by what the button carries.
   */
  feedback?: boolean;
  /**
   * The turn ends with this answer (`setStatus('idle')` follows at once): a platform that can
   * say so in the same call may (Slack: `chat.stopStream`'s `session_status`).
   */
  turnEnded?: boolean;
}

/**
 * One answer segment: the model's text between two tool rounds (or up to the end of the
 * turn). Stream it natively, or post it and edit it as it grows, or post it whole at
 * `finish`; split it over several messages when it outgrows one (keep code fences balanced:
 * chunk-markdown.ts), and coalesce deltas under your edit rate (delta-coalescer.ts).
 */
export interface AnswerDraft {
  /** The next piece of text. Must not block or throw: queue it and send it when you can. */
  push(delta: string): void;
  /**
   * Compact mode only (TOOL_DISPLAY=compact; a surface without it gets cards): show a tool
   * call's step as part of this reply, new or changed. Must not block or throw, like `push`;
   * a step pushed again with the same id replaces the earlier one. Text pushed after a step
   * goes below it.
   */
  step?(step: ProgressStep): void;
  /**
   * Send what is pending and close the answer. `ending.footer` (the usage line, plain text)
   * goes under it, smaller, when given; `ending.feedback` asks for 👍 / 👎 under it. The
   * presenter awaits this before anything else is posted (a card, a note), and always before
   * a human is asked to decide: a stream must not stay open while someone thinks (Slack
   * kills a stream after about five minutes).
   */
  finish(ending?: AnswerEnding): Promise<void>;
  /** Every message this answer posted, so far: read after `finish`, also when it threw. */
  readonly messages: readonly MessageId[];
}

/**
 * Where each tool call's card is, across restarts: so a card is updated in place, never
 * posted twice. The presenter calls `posting` right before `postCard` and `posted` right
 * after it (a write-ahead), and `find` for a call it has no card for in memory (a resumed
 * turn after a restart). Slack's and Discord's (shared/write-ahead-cards.ts) store both marks
 * and, when a process died between them, ask the platform what became of the post (Slack
 * finds the card by the call id in its message metadata; Discord posts it again under its nonce).
 */
export interface CardLocator {
  /** The card's message, if one was posted for this call (here or in a process before this one). */
  find(toolCallId: string): Promise<MessageId | undefined>;
  /** Right before the card is posted. */
  posting(toolCallId: string): Promise<void>;
  /** Once it is posted. */
  posted(toolCallId: string, messageId: MessageId): Promise<void>;
}

/** One thread on one platform, as the presenter draws on it. */
export interface ThreadSurface {
  /** The platform's name, for log lines ("could not post a note in Slack"). */
  readonly platform: string;
  /** Where this thread's cards are (see CardLocator). */
  readonly cards: CardLocator;
  /**
   * The store key of one of this thread's messages. The presenter records every message it
   * posts under it (session, kind, tool call), so a reaction or a click on any of them finds
   * its session: it must be the key the connector's inbound side looks up (Slack:
   * `slack:<channel>:<ts>`).
   */
  messageKey(messageId: MessageId): string;

  /**
   * Post a new card (the presenter has called `cards.posting` first). Return its message id,
   * or undefined when the platform gave none (the card is then posted again next time).
   * Make it findable by `cards.find` if your platform can (Slack: message metadata).
   */
  postCard(card: CardView): Promise<MessageId | undefined>;
  /** Show the card's new state in the message `postCard` returned (or `cards.find` found). */
  updateCard(messageId: MessageId, card: CardView): Promise<void>;
  /** Post a note; a button for `note.action` when it has one. Return its message id. */
  postNote(note: ThreadNote): Promise<MessageId | undefined>;
  /**
   * Begin an answer segment. Synchronous and free: nothing is sent before the first `push`
   * (the presenter begins one on the first delta of a segment).
   */
  startAnswer(): AnswerDraft;
  /**
   * Cluster mode, optional: this instance took the thread over from one that died, possibly
   * mid-answer. Close the answer it left open, if the platform leaves such a message visibly
   * unfinished (Slack: a stream still "streaming"); a platform that edits plain messages
   * needs nothing.
   */
  closeStaleAnswer?(): Promise<void>;

  /** Mark a person's message with what became of it (see InputMark). Marking twice is no failure. */
  react(messageId: MessageId, mark: InputMark): Promise<void>;
  /** Take a mark off again. Removing a mark that is not there is no failure. */
  unreact(messageId: MessageId, mark: InputMark): Promise<void>;
  /**
   * Where the conversation stands (see WorkStatus), told on each change: a turn began
   * (`thinking`, with `details` when it answers a new request), waits for a person
   * (`waiting`), goes on (`thinking`), ended (`idle`), was forgotten (`closed`). Show it
   * where the platform has a place for it (Slack: the agent session's status, else the
   * "is thinking…" status of a DM thread; Discord: the typing indicator), or do nothing.
   */
  setStatus(status: WorkStatus, details?: StatusDetails): Promise<void>;
  /**
   * The thread's model call waits for a free slot (MAX_CONCURRENT_MODEL_CALLS), `ahead` calls
   * in front of it, or got one (null): show the wait until told it is over (Slack: the DM
   * status line, else an hourglass on the thread's first message).
   */
  showWaiting(ahead: number | null): Promise<void>;
}
