// One playground thread as the thread presenter's surface (shared/thread-surface.ts). The
// playground's "platform" is its thread documents (page-threads.ts): posting a card is adding
// a message to the document, updating it is replacing that message, and the live stream
// shows each change on the page as it happens.
//
// What the other surfaces work around does not exist here: no message length (an answer is
// one message however long; every character of a call is on its card), no edit rate (each
// delta is pushed at once), no lost card between a post and its index (the post IS the write
// to the document, so `cards.find` reads the document and `posting` / `posted` have nothing
// to record).
//
// Answers (and, in compact mode, their tool calls as a checklist) are web-answer.ts's.
import type { SessionRecord } from '../../src/sessions/thread-records.js';
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
import { cardModel, noteModel, type NameOf } from './card-model.js';
import { newMessageId, type PageThreads } from './page-threads.js';
import { WebAnswer } from './web-answer.js';

export class WebSurface implements ThreadSurface {
  readonly platform = 'the playground';
  readonly cards: CardLocator;
  private status: 'thinking' | 'idle' = 'idle';

  constructor(
    private readonly threads: PageThreads,
    /** The thread's id on the page (its root message's). */
    private readonly threadId: string,
    private readonly nameOf: NameOf,
  ) {
    this.cards = {
      find: async (toolCallId) => threads.cardOf(threadId, toolCallId)?.id,
      posting: async () => undefined,
      posted: async () => undefined,
    };
  }

  /** The thread a session draws on: its key's thread is the root message's id. */
  static threadIdOf(session: Pick<SessionRecord, 'key'>): string {
    return session.key.thread;
  }

  messageKey(messageId: MessageId): string {
    return webMessageKey(messageId);
  }

  async postCard(view: CardView): Promise<MessageId | undefined> {
    const id = newMessageId();
    await this.threads.add(this.threadId, {
      kind: 'card',
      id,
      at: Date.now(),
      toolCallId: view.state.toolCallId,
      card: cardModel(view, this.nameOf),
    });
    return id;
  }

  async updateCard(messageId: MessageId, view: CardView): Promise<void> {
    await this.threads.change(this.threadId, messageId, (message) =>
      message.kind === 'card' ? { ...message, card: cardModel(view, this.nameOf) } : message,
    );
  }

  async postNote(note: ThreadNote): Promise<MessageId | undefined> {
    const id = newMessageId();
    await this.threads.add(this.threadId, { kind: 'note', id, at: Date.now(), ...noteModel(note, this.nameOf) });
    return id;
  }

  startAnswer(): AnswerDraft {
    return new WebAnswer(this.threads, this.threadId);
  }

  async react(messageId: MessageId, mark: InputMark): Promise<void> {
    await this.threads.change(this.threadId, messageId, (message) =>
      message.kind === 'input' && !message.marks.includes(mark)
        ? { ...message, marks: [...message.marks, mark] }
        : message,
    );
  }

  async unreact(messageId: MessageId, mark: InputMark): Promise<void> {
    await this.threads.change(this.threadId, messageId, (message) =>
      message.kind === 'input' ? { ...message, marks: message.marks.filter((other) => other !== mark) } : message,
    );
  }

  async setStatus(status: WorkStatus): Promise<void> {
    // The page shows whether the bot works; waiting for a person shows on the prompt's card.
    this.status = status === 'thinking' ? 'thinking' : 'idle';
    this.threads.setStatus(this.threadId, this.status, null);
    // 👀 says "the bot has it and works on it": once the thread is idle that is over, and a
    // mark left on a finished message would say the bot still works on it. (A reply that
    // arrives later is marked again when it is taken.)
    if (status === 'idle') await this.threads.clearMark(this.threadId, 'received');
  }

  async showWaiting(ahead: number | null): Promise<void> {
    this.threads.setStatus(this.threadId, this.status, ahead);
  }
}

/** The store key of a playground message: a click or a stop on it finds its session. */
export function webMessageKey(messageId: string): string {
  return `web:${messageId}`;
}
