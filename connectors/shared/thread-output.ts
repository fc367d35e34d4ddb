// Every call the thread presenter makes on a surface goes through here: a call that fails is
// logged and the turn goes on, and every message the bot posts is recorded (the session layer's thread records).
//
// The records are the one thing the presenter writes: a reference per posted message (answer,
// tool card, note) naming its session, under the surface's `messageKey`, so a 🛑 on any of
// them finds the session and a Show all click on a card finds its call. Platform-neutral;
// only the key's spelling is the platform's.
import { isWritesFenced, type EngineLogger } from '../../src/engine/index.js';
import type { ThreadRecords } from '../../src/sessions/thread-records.js';
import type { MessageId, ThreadSurface } from './thread-surface.js';

/** What a record says of its message. */
export type MessageKind = 'answer' | 'tool_card' | 'note';

export interface ThreadOutputDeps {
  surface: ThreadSurface;
  records: Pick<ThreadRecords, 'rememberMessage'>;
  logger: EngineLogger;
  sessionId: string;
}

export class ThreadOutput {
  readonly surface: ThreadSurface;

  constructor(private readonly deps: ThreadOutputDeps) {
    this.surface = deps.surface;
  }

  /** Run one piece of work on the surface; a failure is logged, never thrown. */
  async safely(what: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      // Fenced: the bot is shutting down and may record nothing more; the post itself went out.
      if (isWritesFenced(error)) return;
      this.deps.logger.warn(
        { err: error, sessionId: this.deps.sessionId },
        `could not ${what} in ${this.surface.platform}`,
      );
    }
  }

  /** Record a message the bot posted in this thread, so a reaction or click on it finds its session. */
  async remember(messageId: MessageId, kind: MessageKind, toolCallId?: string): Promise<void> {
    await this.safely('index a message', () =>
      this.deps.records.rememberMessage(this.surface.messageKey(messageId), {
        sessionId: this.deps.sessionId,
        kind,
        ...(toolCallId ? { toolCallId } : {}),
      }),
    );
  }
}
