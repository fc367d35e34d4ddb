// One Discord thread (or DM) as the thread presenter's surface (shared/thread-surface.ts):
// cards and notes as messages with button rows (thread-messages.ts), an answer posted and
// edited (answer-message.ts; in compact mode with its tool calls as one progress message, and
// 👍 / 👎 under a turn's final answer), marks as emoji reactions, the typing indicator for "working",
// ⏳ on the thread's starter message while its model call waits for a slot.
//
// Where a message lives: everything the bot posts is in the thread. A person's first message
// (the mention) is in the parent channel, and Discord gives the thread that message's id; so
// a message whose id is the thread's is looked for in the parent channel. A DM is its own
// thread (channel = thread = the DM channel's id).
//
// Discord's quirks, answered here: adding a reaction that is there already, or removing one
// that is not, succeeds (204) — no error to swallow; the typing indicator lasts about ten
// seconds, so it is renewed every eight while the thread works.
//
// A card is posted once, also across a crash between the locator's two marks: it goes out
// with a nonce of the session and the call and `enforce_nonce`, so posting it again (a
// restarted process that found only the "posting" mark) returns the card posted then, which
// is then edited to the card's current state. Discord remembers a nonce only "for a few
// minutes" (unspecified), and a fetched message carries no nonce, so there is nothing to
// search the thread for afterwards: a restart later than that posts a second card (the lesser
// harm than none). The arguments file before a card is posted once the same way.
import { createHash } from 'node:crypto';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionRecord, ThreadRecords } from '../../src/sessions/thread-records.js';
import type {
  AnswerDraft,
  CardLocator,
  CardView,
  InputMark,
  MessageId,
  ThreadNote,
  ThreadSurface,
  WorkStatus,
} from '../shared/thread-surface.js';
import { WriteAheadCards } from '../shared/write-ahead-cards.js';
import { AnswerMessage } from './answer-message.js';
import { NONCE_MAX, type DiscordOutbound } from './outbound.js';
import { cardMessage, fullArgumentsFile, noteMessage } from './thread-messages.js';

export interface DiscordSurfaceDeps {
  outbound: DiscordOutbound;
  records: Pick<ThreadRecords, 'cardPlace' | 'cardPosting' | 'cardPosted'>;
  logger: EngineLogger;
  /** Between two edits of a streamed answer (tests shorten it). */
  answerIntervalMs?: number;
}

const REACTION: Record<InputMark, string> = { received: '👀', taken: '✅', dropped: '❌' };
const WAITING_REACTION = '⏳';
const TYPING_RENEW_MS = 8_000;

export class DiscordSurface implements ThreadSurface {
  readonly platform = 'Discord';
  readonly cards: CardLocator;
  private readonly unsure = new UnsurePosts();
  private readonly sessionId: string;
  private readonly channel: string;
  private readonly thread: string;
  /** Tool calls whose full arguments were posted as a file by this process. */
  private readonly attached = new Set<string>();
  private typing: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: DiscordSurfaceDeps,
    session: SessionRecord,
  ) {
    this.channel = session.key.channel;
    this.thread = session.key.thread;
    this.sessionId = session.id;
    this.cards = new WriteAheadCards({
      records: deps.records,
      sessionId: session.id,
      keyPrefix: 'discord-card',
      recover: this.unsure.recover,
    });
  }

  messageKey(messageId: MessageId): string {
    return discordMessageKey(this.channelOf(messageId), messageId);
  }

  async postCard(card: CardView): Promise<MessageId | undefined> {
    await this.attachArguments(card);
    const toolCallId = card.state.toolCallId;
    const message = cardMessage(card.state, card.prompt);
    const messageId = await this.deps.outbound.post(this.thread, {
      ...message,
      nonce: messageNonce('c', this.sessionId, toolCallId),
    });
    // A process before this one may have posted it (the nonce returned that card, as it was then).
    if (this.unsure.mayBePosted(toolCallId)) await this.deps.outbound.edit(this.thread, messageId, message);
    return messageId;
  }

  async updateCard(messageId: MessageId, card: CardView): Promise<void> {
    await this.attachArguments(card);
    await this.deps.outbound.edit(this.thread, messageId, cardMessage(card.state, card.prompt));
  }

  async postNote(note: ThreadNote): Promise<MessageId | undefined> {
    return this.deps.outbound.post(this.thread, noteMessage(note));
  }

  startAnswer(): AnswerDraft {
    return new AnswerMessage(this.deps.outbound, this.thread, {
      logger: this.deps.logger,
      ...(this.deps.answerIntervalMs !== undefined ? { intervalMs: this.deps.answerIntervalMs } : {}),
    });
  }

  async react(messageId: MessageId, mark: InputMark): Promise<void> {
    await this.deps.outbound.react(this.channelOf(messageId), messageId, REACTION[mark]);
  }

  async unreact(messageId: MessageId, mark: InputMark): Promise<void> {
    await this.deps.outbound.unreact(this.channelOf(messageId), messageId, REACTION[mark]);
  }

  async setStatus(status: WorkStatus): Promise<void> {
    clearInterval(this.typing);
    this.typing = undefined;
    // Discord has one sign of work, typing: shown while a turn thinks, not while it waits for a person.
    if (status !== 'thinking') return;
    const renew = (): Promise<void> =>
      this.deps.outbound
        .typing(this.thread)
        .catch((error: unknown) => this.deps.logger.debug({ err: error }, 'could not renew the typing indicator'));
    this.typing = setInterval(() => void renew(), TYPING_RENEW_MS);
    this.typing.unref();
    await this.deps.outbound.typing(this.thread);
  }

  async showWaiting(ahead: number | null): Promise<void> {
    if (ahead === null) await this.deps.outbound.unreact(this.channelOf(this.thread), this.thread, WAITING_REACTION);
    else await this.deps.outbound.react(this.channelOf(this.thread), this.thread, WAITING_REACTION);
  }

  /** Stop renewing the typing indicator (the presenter is dropped). */
  dispose(): void {
    clearInterval(this.typing);
    this.typing = undefined;
  }

  /**
   * A card whose arguments do not fit on it: every character goes out first, as a text file in
   * the thread, so it is there before the card shows its buttons.
   */
  private async attachArguments(card: CardView): Promise<void> {
    const file = fullArgumentsFile(card.state);
    if (!file || this.attached.has(card.state.toolCallId)) return;
    await this.deps.outbound.post(this.thread, {
      content: `📎 Every character of the **${card.state.name}** call below, in full:`,
      files: [file],
      nonce: messageNonce('a', this.sessionId, card.state.toolCallId),
    });
    this.attached.add(card.state.toolCallId);
  }

  private channelOf(messageId: MessageId): string {
    return messageId === this.thread ? this.channel : this.thread;
  }
}

/** The store key of a Discord message: a reaction or a click on it finds its session. */
export function discordMessageKey(channelId: string, messageId: string): string {
  return `discord:${channelId}:${messageId}`;
}

/**
 * The nonce of one of a call's messages (`kind`: c the card, a its arguments file): the same
 * in every process, unique per session and call, within Discord's 25 characters.
 */
function messageNonce(kind: 'c' | 'a', sessionId: string, toolCallId: string): string {
  const digest = createHash('sha256').update(`${sessionId}\n${toolCallId}`).digest('base64url');
  return `${kind}${digest}`.slice(0, NONCE_MAX);
}

/**
 * Unsure posts: a card a crash left between the write-ahead marks (shared/write-ahead-cards.ts)
 * cannot be searched for in Discord (no metadata, no nonce on fetched messages). `find` reports
 * it as not posted and it is remembered here as one that may have been; the surface posts it
 * again under the same nonce, which returns that card (see the header).
 */
class UnsurePosts {
  /** Calls whose "posting" mark a process before this one left without "posted". */
  private readonly calls = new Set<string>();

  /** The recovery the index runs for such a card: none possible, so remembered, and not found. */
  readonly recover = async (toolCallId: string): Promise<undefined> => {
    this.calls.add(toolCallId);
    return undefined;
  };

  /** Whether a post for this call may have found a card posted before (asked once per post). */
  mayBePosted(toolCallId: string): boolean {
    return this.calls.delete(toolCallId);
  }
}
