// Where each tool call's card is on the platform, so a card is updated in place across
// restarts and never posted twice: the presenter's card locator (thread-surface.ts
// `CardLocator`) for a platform whose posts the bot cannot name before they are made.
//
// The index is written ahead: "posting" right before the card is posted, its message id
// after. A process killed between the two leaves a card on the platform that the index
// cannot name; the next process finds only the "posting" mark and asks the platform's
// `recover` what became of that post (Slack looks for the card in the thread; Discord posts
// again under the same nonce, which returns the card posted then). Without the mark there is
// nothing to recover. The marks are kept by the session layer's thread records.
import type { ThreadRecords } from '../../src/sessions/thread-records.js';
import type { CardLocator, MessageId } from './thread-surface.js';

/** What a platform does with a card whose post began (at `postingAt`, epoch ms) and was never recorded as done: its message, if it can find it. */
type RecoverCardPost = (toolCallId: string, postingAt: number) => Promise<MessageId | undefined>;

export interface WriteAheadCardsDeps {
  records: Pick<ThreadRecords, 'cardPlace' | 'cardPosting' | 'cardPosted'>;
  sessionId: string;
  /** The platform's prefix of a card's key (`slack-card`, `discord-card`): the records of two platforms never meet. */
  keyPrefix: string;
  recover: RecoverCardPost;
}

export class WriteAheadCards implements CardLocator {
  constructor(private readonly deps: WriteAheadCardsDeps) {}

  /** The call's card, if one was posted (here or in a process before this one). */
  async find(toolCallId: string): Promise<MessageId | undefined> {
    const place = await this.deps.records.cardPlace(this.key(toolCallId));
    if (place?.messageId !== undefined) return place.messageId;
    if (place === undefined) return undefined;
    const found = await this.deps.recover(toolCallId, place.postingAt);
    if (found) await this.posted(toolCallId, found);
    return found;
  }

  async posting(toolCallId: string): Promise<void> {
    await this.deps.records.cardPosting(this.key(toolCallId), this.deps.sessionId, toolCallId);
  }

  async posted(toolCallId: string, messageId: MessageId): Promise<void> {
    await this.deps.records.cardPosted(this.key(toolCallId), this.deps.sessionId, toolCallId, messageId);
  }

  private key(toolCallId: string): string {
    return `${this.deps.keyPrefix}:${this.deps.sessionId}:${toolCallId}`;
  }
}
