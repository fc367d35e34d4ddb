// A turn's answer as the thread presenter writes it: the text in segments, one message each
// (a segment closes when a card, a note or a person's decision must go below it), in compact
// mode the turn's tool calls as steps of the open segment, and at the turn's end the usage
// footer under the last segment. A completed turn's answer asks for 👍 / 👎, and what it
// answered (its turn and model) is recorded for the click to find (`feedback`).
//
// The idea to hold: only an answer that got text is one to give feedback on; a draft that
// showed steps alone closes without asking.
import type { Usage } from '../../src/engine/index.js';
import type { AnsweredTurn, AnswerRecorder } from '../../src/feedback/feedback-book.js';
import type { ModelPrices } from '../../src/ops/pricing.js';
import type { ThreadOutput } from './thread-output.js';
import type { AnswerDraft, ProgressStep } from './thread-surface.js';
import { formatUsage } from './usage-footer.js';

export interface TurnAnswerDeps {
  output: ThreadOutput;
  sessionId: string;
  /** Where a final answer that offers 👍 / 👎 is recorded, for the click to find (src/feedback/). */
  feedback?: AnswerRecorder;
  /** What model calls cost, for the usage footer (default: the built-in table alone). */
  prices?: ModelPrices;
}

export class TurnAnswer {
  /** The answer segment being written, if one is open. */
  private draft: AnswerDraft | undefined;
  /** The open segment got text (a draft of steps alone is no answer to give feedback on). */
  private hasText = false;
  /** The turn's model calls, for the usage footer under its last answer. */
  private usages: Usage[] = [];
  private turnStartedAt = 0;
  private requestId: string | undefined;

  constructor(private readonly deps: TurnAnswerDeps) {}

  /** A turn begins; `requestId` is the person's message it answers, if one started it. */
  startTurn(requestId: string | undefined): void {
    this.usages = [];
    this.turnStartedAt = Date.now();
    this.requestId = requestId;
  }

  /** One model call of the turn, counted in the footer. */
  used(usage: Usage): void {
    this.usages.push(usage);
  }

  /** Whether a segment is being written now. */
  get open(): boolean {
    return this.draft !== undefined;
  }

  push(text: string): void {
    this.draft ??= this.deps.output.surface.startAnswer();
    this.draft.push(text);
    this.hasText = true;
  }

  /** Whether the surface draws tool calls as steps of the reply (the segment it would go in is opened to ask). */
  drawsSteps(): boolean {
    this.draft ??= this.deps.output.surface.startAnswer();
    return this.draft.step !== undefined;
  }

  step(step: ProgressStep): void {
    this.draft ??= this.deps.output.surface.startAnswer();
    this.draft.step?.(step);
  }

  /** Close the open segment and record its messages: something goes below it. */
  async close(): Promise<void> {
    await this.end();
  }

  /** The turn ended: the usage footer goes under the last segment, and a completed turn's answer offers 👍 / 👎. */
  async endTurn(completed: boolean): Promise<void> {
    await this.end(this.usages.length > 0 ? formatUsage(this.usages, this.deps.prices) : undefined, completed, true);
  }

  private async end(footer?: string, final = false, turnEnded = false): Promise<void> {
    const answer = this.draft;
    const hasText = this.hasText;
    this.draft = undefined;
    this.hasText = false;
    if (!answer) return;
    const output = this.deps.output;
    const feedback = final && hasText && this.deps.feedback !== undefined;
    await output.safely('finish the answer', () =>
      answer.finish({
        ...(footer !== undefined ? { footer } : {}),
        ...(feedback ? { feedback: true } : {}),
        ...(turnEnded ? { turnEnded: true } : {}),
      }),
    );
    for (const messageId of answer.messages) await output.remember(messageId, 'answer');
    const last = answer.messages.at(-1);
    if (feedback && last !== undefined) {
      const turn: AnsweredTurn = {
        sessionId: this.deps.sessionId,
        messageKey: output.surface.messageKey(last),
        turnStartedAt: this.turnStartedAt,
      };
      const model = this.usages.at(-1)?.model;
      if (model) turn.model = model;
      if (this.requestId) turn.requestId = this.requestId;
      await output.safely('record the answer for feedback', () => this.deps.feedback!.answered(turn));
    }
  }
}
