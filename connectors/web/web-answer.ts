// One answer segment of a playground thread (shared/thread-surface.ts AnswerDraft), as
// messages of its thread document (page-threads.ts): the text is an `answer` message, added
// on the first delta and grown in place (each delta pushed to the page at once: no edit rate
// to respect); the usage footer and 👍 / 👎 go on the last message at `finish`.
//
// Compact mode (TOOL_DISPLAY=compact) adds `step`: the reply's tool calls are one `progress`
// message, a checklist updated in place. Text written before the first step stays above it;
// text after a step goes into a second answer message below it. A step already shown by an
// earlier reply of the thread (the call that asked a person closes the reply, and the
// presenter opens a new one after the decision; a restarted bot resumes with a new one) is
// updated where it is, so each call stays one line of one checklist, before and after a
// restart (the thread document is the playground's only copy of what was shown).
import type { AnswerDraft, AnswerEnding, MessageId, ProgressStep } from '../shared/thread-surface.js';
import { newMessageId, type MessageOf, type PageMessage, type PageThreads } from './page-threads.js';

export class WebAnswer implements AnswerDraft {
  /** The text before this reply's first step (the whole text when it has none). */
  private before: string | undefined;
  /** This reply's checklist, once it showed a step of its own. */
  private progress: string | undefined;
  /** The text after its steps. */
  private after: string | undefined;
  private readonly writes: Promise<void>[] = [];
  private failure: Error | undefined;

  constructor(
    private readonly threads: PageThreads,
    private readonly threadId: string,
  ) {}

  /** In the order the page shows them: the last one carries the footer and the buttons. */
  get messages(): readonly MessageId[] {
    return [this.before, this.progress, this.after].filter((id): id is string => id !== undefined);
  }

  push(delta: string): void {
    if (!delta) return;
    const growing = this.progress === undefined ? this.before : this.after;
    if (growing) {
      try {
        this.threads.appendAnswer(this.threadId, growing, delta);
      } catch (error) {
        this.failure ??= asError(error);
      }
      return;
    }
    const id = newMessageId();
    if (this.progress === undefined) this.before = id;
    else this.after = id;
    // Added to memory (and shown) synchronously; only the write is awaited, at `finish`.
    this.track(this.threads.add(this.threadId, { kind: 'answer', id, at: Date.now(), text: delta, streaming: true }));
  }

  step(step: ProgressStep): void {
    const shown = this.threads.progressOf(this.threadId, step.id);
    if (shown && shown.id !== this.progress) {
      this.track(this.threads.change(this.threadId, shown.id, withStep(step)));
      return;
    }
    if (this.progress !== undefined) {
      this.track(this.threads.change(this.threadId, this.progress, withStep(step)));
      return;
    }
    // The text above is complete: no caret on it while the steps run below.
    if (this.before)
      this.track(
        this.threads.change(this.threadId, this.before, (message) =>
          message.kind === 'answer' ? { ...message, streaming: false } : message,
        ),
      );
    const id = newMessageId();
    this.progress = id;
    this.track(this.threads.add(this.threadId, { kind: 'progress', id, at: Date.now(), steps: [step] }));
  }

  async finish(ending?: AnswerEnding): Promise<void> {
    await Promise.all(this.writes);
    if (this.failure !== undefined) throw this.failure;
    const last = this.messages.at(-1);
    const extras = {
      ...(ending?.footer ? { footer: ending.footer } : {}),
      ...(ending?.feedback ? { feedback: {} } : {}),
    };
    for (const id of this.messages) {
      await this.threads.change(this.threadId, id, (message) => {
        if (message.kind === 'answer') return { ...message, streaming: false, ...(id === last ? extras : {}) };
        if (message.kind === 'progress' && id === last) return { ...message, ...extras };
        return message;
      });
    }
  }

  /** A write of the document: awaited at `finish`; a failure is thrown there (push and step must not throw). */
  private track(write: Promise<void>): void {
    this.writes.push(
      write.catch((error: unknown) => {
        this.failure ??= asError(error);
      }),
    );
  }
}

/** The checklist with this step in it: replaced where it was, else added at the end. */
function withStep(step: ProgressStep): (message: PageMessage) => PageMessage {
  return (message) => {
    if (message.kind !== 'progress') return message;
    const steps: MessageOf<'progress'>['steps'] = message.steps.some((known) => known.id === step.id)
      ? message.steps.map((known) => (known.id === step.id ? { ...step } : known))
      : [...message.steps, { ...step }];
    return { ...message, steps };
  };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
