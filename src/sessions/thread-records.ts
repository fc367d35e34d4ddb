// What a connector may know of the stored threads, asked in its own words: is this thread
// ours, which session a posted message belongs to, the prompt behind a click, where a card was
// posted, the answer a thread is streaming. Connectors hold this interface and never the store:
// the store's keys and records can change under it without a connector noticing.
//
// The types a connector needs about a thread (its key, its record, a message's reference, an
// open answer) are re-exported from here, so `connectors/` imports nothing from `src/store/`.
import type Keyv from 'keyv';
import type { InboxItem, Message } from '../engine/index.js';
import {
  sessionIdOf,
  type MessageRef,
  type OpenAnswer,
  type SessionKey,
  type SessionRecord,
  type SessionStore,
} from '../store/session-store.js';

export { sessionIdOf, type MessageRef, type OpenAnswer, type SessionKey, type SessionRecord };

/**
 * Where a tool call's card is, written ahead of the post: `postingAt` (epoch ms) right before
 * the platform is asked to post it, its `messageId` once the platform answered. A process that
 * died between the two leaves only `postingAt`, and the next one looks for the card.
 */
export type CardPlace = { messageId: string; postingAt?: undefined } | { messageId?: undefined; postingAt: number };

export interface ThreadRecords {
  /** Whether the bot keeps a session for this thread (it was mentioned there before). */
  isOurs(key: SessionKey): Promise<boolean>;
  /** A thread's record, by its session id. */
  session(sessionId: string): Promise<SessionRecord | undefined>;
  /** The prompt a click on its buttons answers. */
  prompt(itemId: string): Promise<InboxItem | undefined>;
  /** The prompt a tool call opened, if it opened one. */
  promptOfCall(sessionId: string, toolCallId: string): Promise<InboxItem | undefined>;
  /** What a message the bot posted or marked belongs to (its session, its tool call), by the surface's message key. */
  messageAt(messageKey: string): Promise<MessageRef | undefined>;
  /** Remember what a message belongs to, so a reaction or a click on it finds its session. */
  rememberMessage(messageKey: string, ref: MessageRef): Promise<void>;
  /** Where a tool call's card is (see CardPlace), under the surface's card key. */
  cardPlace(cardKey: string): Promise<CardPlace | undefined>;
  /** Right before a card is posted: a process that dies before `cardPosted` leaves this mark. */
  cardPosting(cardKey: string, sessionId: string, toolCallId: string): Promise<void>;
  /** Once the card is posted: the message it lives in. */
  cardPosted(cardKey: string, sessionId: string, toolCallId: string, messageId: string): Promise<void>;
  /** The thread's conversation as stored (Show all after a restart reads a call's text from it). */
  transcript(sessionId: string): Promise<Message[]>;
  /** The answer the thread is streaming now (written ahead, see OpenAnswer). */
  openAnswer(sessionId: string): Promise<OpenAnswer | undefined>;
  /** Set, or with undefined clear, the answer the thread is streaming now. */
  setOpenAnswer(sessionId: string, answer: OpenAnswer | undefined): Promise<void>;
  /**
   * Where a connector keeps documents of its own (the playground's pages), under a key prefix
   * nothing else uses: the bot's store, so they survive a restart with the threads they draw.
   */
  readonly documents: Keyv;
}

/** The thread records, read from and written to the session store. */
export class StoredThreadRecords implements ThreadRecords {
  constructor(private readonly store: SessionStore) {}

  get documents(): Keyv {
    return this.store.keyv;
  }

  async isOurs(key: SessionKey): Promise<boolean> {
    return (await this.store.getSession(sessionIdOf(key))) !== undefined;
  }

  session(sessionId: string): Promise<SessionRecord | undefined> {
    return this.store.getSession(sessionId);
  }

  prompt(itemId: string): Promise<InboxItem | undefined> {
    return this.store.getItem(itemId);
  }

  async promptOfCall(sessionId: string, toolCallId: string): Promise<InboxItem | undefined> {
    const itemId = await this.store.itemIdForCall(sessionId, toolCallId);
    return itemId ? this.store.getItem(itemId) : undefined;
  }

  messageAt(messageKey: string): Promise<MessageRef | undefined> {
    return this.store.getMessageRef(messageKey);
  }

  rememberMessage(messageKey: string, ref: MessageRef): Promise<void> {
    return this.store.putMessageRef(messageKey, ref);
  }

  async cardPlace(cardKey: string): Promise<CardPlace | undefined> {
    const ref = await this.store.getMessageRef(cardKey);
    if (ref?.platformMessageId) return { messageId: ref.platformMessageId };
    return ref?.postingAt === undefined ? undefined : { postingAt: ref.postingAt };
  }

  cardPosting(cardKey: string, sessionId: string, toolCallId: string): Promise<void> {
    return this.store.putMessageRef(cardKey, { sessionId, toolCallId, kind: 'tool_card_index', postingAt: Date.now() });
  }

  cardPosted(cardKey: string, sessionId: string, toolCallId: string, messageId: string): Promise<void> {
    // Listed for deletion with the session by `cardPosting` already: rewritten in place.
    return this.store.updateMessageRef(cardKey, {
      sessionId,
      toolCallId,
      kind: 'tool_card_index',
      platformMessageId: messageId,
    });
  }

  transcript(sessionId: string): Promise<Message[]> {
    return this.store.loadTranscript(sessionId);
  }

  openAnswer(sessionId: string): Promise<OpenAnswer | undefined> {
    return this.store.getOpenAnswer(sessionId);
  }

  setOpenAnswer(sessionId: string, answer: OpenAnswer | undefined): Promise<void> {
    return this.store.setOpenAnswer(sessionId, answer);
  }
}
