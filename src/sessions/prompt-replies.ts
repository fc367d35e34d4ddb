// What a click or a reply does to a prompt that waits for a human. A click must carry one of
// the choices the prompt offered; a reply answers a waiting question, and declines anything
// else that waits (an approval, a plan, a directory request), quoting the reply: a reply is a
// redirection, never an approval, and free text never mints a grant.
import { APPROVAL_OUTCOMES, type ApprovalOutcome, type InboxItem, type InboxResolution } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { SessionRecord } from '../store/session-store.js';
import type { AccessPolicy } from './access-policy.js';
import type { Reporter } from './session-observer.js';

/** Who a stop the bot makes itself is by (a scheduled run closed after waiting too long). */
export const BOT_ITSELF = 'bot';

/** How the note of an approval a reply declined begins (the reply's text follows). */
const REPLIED_INSTEAD = 'the user replied instead of approving: ';

/** A click: the choice as the button carries it, checked against the item's vocabulary. */
export type PromptChoice = { choice: string; text?: string };

export interface Reply {
  text: string;
  userId: string;
}

export class PromptReplies {
  constructor(
    private readonly inbox: PersistentInbox,
    private readonly access: AccessPolicy,
    private readonly reporter: Reporter,
  ) {}

  /** A reply while a question waits is its answer. True when the reply was consumed so. */
  async answerQuestion(record: SessionRecord, prompts: InboxItem[], reply: Reply): Promise<boolean> {
    const question = prompts.find((item) => item.kind === 'question');
    if (!question || !this.access.mayResolve(reply.userId, record, 'question').allowed) return false;
    return (await this.inbox.resolve(question.id, { kind: 'question', answer: reply.text }, reply.userId)).ok;
  }

  /**
   * Decline what the reply's author may decline: a reply only redirects a prompt its author
   * could have answered. Anyone else's reply waits as steering until the prompt is answered.
   */
  async decline(record: SessionRecord, prompts: InboxItem[], reply: Reply): Promise<void> {
    for (const item of prompts) {
      if (item.kind === 'question') continue;
      if (!this.access.mayResolve(reply.userId, record, item.kind).allowed) continue;
      const note = `${REPLIED_INSTEAD}${JSON.stringify(reply.text)}`;
      const resolution: InboxResolution =
        item.kind === 'approval'
          ? { kind: 'approval', outcome: 'deny', note }
          : item.kind === 'plan'
            ? { kind: 'plan', approved: false, feedback: reply.text }
            : { kind: 'directory', granted: false };
      await this.close(record, item, resolution, reply.userId);
    }
  }

  /** Resolve a prompt without a click, and tell the view so its card loses its buttons. */
  async close(record: SessionRecord, item: InboxItem, resolution: InboxResolution, userId?: string): Promise<void> {
    const result = await this.inbox.resolve(item.id, resolution, userId);
    if (result.ok) await this.reporter.promptClosed(record, result.item);
  }
}

/** Whether a person's reply, not a click, declined this approval. */
export function declinedByReply(resolution: InboxResolution): boolean {
  return (
    resolution.kind === 'approval' &&
    resolution.outcome === 'deny' &&
    (resolution.note?.startsWith(REPLIED_INSTEAD) ?? false)
  );
}

/** The button a resolution came from (the inverse of `resolutionOf`); none for a stop's closing. */
export function choiceOf(resolution: InboxResolution): string | undefined {
  switch (resolution.kind) {
    case 'approval':
      return resolution.outcome;
    case 'plan':
      return resolution.approved ? 'approve' : 'reject';
    case 'directory':
      return resolution.granted ? 'grant' : 'deny';
    case 'question':
      return resolution.answer;
    case 'interrupted':
      return undefined;
  }
}

/** A button's choice, checked against the kind of prompt it answers. */
export function resolutionOf(item: InboxItem, { choice, text }: PromptChoice): InboxResolution | undefined {
  switch (item.kind) {
    case 'approval':
      return (APPROVAL_OUTCOMES as readonly string[]).includes(choice)
        ? { kind: 'approval', outcome: choice as ApprovalOutcome }
        : undefined;
    case 'plan':
      return choice === 'approve'
        ? { kind: 'plan', approved: true }
        : choice === 'reject'
          ? { kind: 'plan', approved: false, ...(text ? { feedback: text } : {}) }
          : undefined;
    case 'directory':
      return choice === 'grant'
        ? { kind: 'directory', granted: true }
        : choice === 'deny'
          ? { kind: 'directory', granted: false }
          : undefined;
    case 'question':
      return { kind: 'question', answer: text ?? choice };
  }
}
