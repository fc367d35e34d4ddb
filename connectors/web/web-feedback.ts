// 👍 / 👎 under the playground's final answers: a click and a 👎's reason, turned into calls of
// core's feedback book (src/feedback/feedback-book.ts). The click names only the message it
// was on; the answer, its session and its model are found by that message's store key
// (`webMessageKey`), never taken from the request, so a forged id finds nothing and is refused.
// The answer's message in the thread document then shows how the person voted (and that a
// reason was given); what counts is the book. Thanks and refusals are said to the person alone.
import type { FeedbackBook } from '../../src/feedback/feedback-book.js';
import type { ActionAnswer } from './http-server.js';
import type { LiveUpdates } from './live-updates.js';
import type { FeedbackMark, PageThreads } from './page-threads.js';
import type { FeedbackBody, FeedbackReasonBody } from './request-bodies.js';
import { webMessageKey } from './web-surface.js';
import type { z } from 'zod';

export interface WebFeedbackDeps {
  /** Absent when the core records no feedback: every click is then refused. */
  book?: Pick<FeedbackBook, 'vote' | 'giveReason'>;
  threads: PageThreads;
  live: Pick<LiveUpdates, 'broadcast'>;
  /** The person at the page. */
  userId: string;
}

/** What the person is told privately after a click. */
function thanks(status: 'recorded' | 'changed' | 'unchanged', value: 'up' | 'down'): string {
  const thumb = value === 'up' ? '👍' : '👎';
  if (status === 'unchanged') return `You already gave this answer a ${thumb}.`;
  const said =
    status === 'changed'
      ? `Changed to ${thumb}.`
      : value === 'up'
        ? `Thanks for the ${thumb}: noted for this answer.`
        : `Noted as ${thumb}.`;
  return value === 'down' ? `${said} If you like, say what was wrong in the field under the answer.` : said;
}

const NOT_AN_ANSWER =
  'There is no answer to rate there (only a finished turn’s final answer takes 👍 / 👎, and a forgotten thread has none).';

export class WebFeedback {
  constructor(private readonly deps: WebFeedbackDeps) {}

  async vote(body: z.infer<typeof FeedbackBody>): Promise<ActionAnswer> {
    const { book, userId } = this.deps;
    const result = book
      ? await book.vote(webMessageKey(body.message), userId, body.value)
      : { status: 'unknown_answer' as const };
    if (result.status === 'unknown_answer') return { ok: false, status: 404, message: NOT_AN_ANSWER };
    const threadId = await this.mark(body.message, (mark) => ({
      ...mark,
      vote: result.value,
      reason: result.value === 'down' && result.status === 'unchanged' ? mark.reason : undefined,
    }));
    this.say(threadId, thanks(result.status, result.value));
    return { ok: true, status: result.status, value: result.value };
  }

  async reason(body: z.infer<typeof FeedbackReasonBody>): Promise<ActionAnswer> {
    const { book, userId } = this.deps;
    const kept = book ? await book.giveReason(webMessageKey(body.message), userId, body.reason) : false;
    if (!kept)
      return {
        ok: false,
        status: 409,
        message: 'A reason goes with your 👎 on that answer: vote 👎 first (or the answer is gone).',
      };
    const threadId = await this.mark(body.message, (mark) => ({ ...mark, reason: true }));
    this.say(threadId, 'Thanks: your reason is recorded with the 👎.');
    return { ok: true };
  }

  /** Show the person's vote on the answer's message; the thread it is in (undefined: not shown any more). */
  private async mark(messageId: string, edit: (mark: FeedbackMark) => FeedbackMark): Promise<string | undefined> {
    const found = this.deps.threads.findMessage(messageId);
    if (!found) return undefined;
    await this.deps.threads.change(found.threadId, messageId, (message) => {
      if ((message.kind !== 'answer' && message.kind !== 'progress') || !message.feedback) return message;
      const next = edit(message.feedback);
      const clean: FeedbackMark = {
        ...(next.vote ? { vote: next.vote } : {}),
        ...(next.reason ? { reason: true } : {}),
      };
      return { ...message, feedback: clean };
    });
    return found.threadId;
  }

  private say(threadId: string | undefined, text: string): void {
    this.deps.live.broadcast({ type: 'whisper', ...(threadId ? { threadId } : {}), text, at: Date.now() });
  }
}
