// One answer segment in a Discord thread, posted and edited as it grows. Deltas are coalesced
// (shared/delta-coalescer.ts) so Discord sees at most one round of calls per interval, the first
// text as soon as the first token arrives. Discord caps a message at 2,000 characters: the answer
// rolls over to a new message before that, cut by the shared fence-safe splitter, so every
// message as it finally stands has balanced code fences (a code block cut at a message's end
// is closed there and reopened in the next).
//
// Compact mode (TOOL_DISPLAY=compact) adds steps: the draft's tool calls as one progress
// message (progress-message.ts), posted at the first step and edited in place under the same
// pace as the text. Text pushed before the first step stays in its message(s) above it; text
// pushed after goes into a new message below it. The draft's messages are kept in the order
// they were posted, so the last one is the one at the bottom of the thread: the usage footer
// and the 👍 / 👎 buttons of a final answer go there.
//
// A 429 is waited out by discord.js (outbound.ts); any other failure keeps the text here,
// marked dirty, and the next flush (or finish) sends the message as it should stand: an edit
// carries the whole message, so nothing is lost or doubled. The parts are sent top to bottom,
// and a part that fails stops the round, so nothing is ever posted above a part still missing.
import type { EngineLogger } from '../../src/engine/index.js';
import { DeltaCoalescer, splitMarkdownPieces, withoutFenceRepair } from '../shared/index.js';
import type { AnswerDraft, AnswerEnding, ProgressStep } from '../shared/thread-surface.js';
import { feedbackRow } from './answer-feedback.js';
import type { ApiActionRow, DiscordOutbound } from './outbound.js';
import { progressContent } from './progress-message.js';

/** Room left under Discord's 2,000 for the footer and the mention-neutralising word joiners. */
const ANSWER_LIMIT = 1_900;

export interface AnswerMessageOptions {
  logger: EngineLogger;
  /** Between two edits of the answer (Discord's edit bucket allows about one a second). */
  intervalMs?: number;
}

/** What a part of the draft posts and edits with (the draft's own order of messages). */
interface Sender {
  post(content: string): Promise<string>;
  edit(messageId: string, content: string): Promise<void>;
}

/** A run of the answer's text: the message being written, rolling over to new ones past the limit. */
class TextRun {
  /** Text pushed and not yet taken by a send (a send in flight must not lose it). */
  private pending = '';
  /** The message being written and the text it holds (with a reopened fence, not the closing one). */
  messageId: string | undefined;
  private segment = '';
  private dirty = false;
  /** What the current message shows now, for the footer at finish. */
  shown = '';

  append(text: string): void {
    this.pending += text;
  }

  /** Send what changed; throws on a failure, keeping the text for the next try. */
  async send(sender: Sender): Promise<void> {
    if (this.pending) {
      this.segment += this.pending;
      this.pending = '';
      this.dirty = true;
    }
    if (!this.dirty) return;
    if (!this.segment.trim()) {
      this.dirty = false;
      return;
    }
    const pieces = splitMarkdownPieces(this.segment, ANSWER_LIMIT);
    // The splitter drops trailing whitespace; the text still to come must follow it.
    const trailing = /\s*$/.exec(this.segment)?.[0] ?? '';
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (!this.messageId) this.messageId = await sender.post(piece.text);
      else await sender.edit(this.messageId, piece.text);
      this.shown = piece.text;
      if (i < pieces.length - 1) {
        this.messageId = undefined;
        // What is left to send starts after this piece: a failure below resends only that.
        const rest = pieces.slice(i + 1);
        this.segment = `${rest[0]!.reopened}${rest.map(withoutFenceRepair).join('\n')}${trailing}`;
      }
    }
    const last = pieces.at(-1);
    if (last) this.segment = `${last.reopened}${withoutFenceRepair(last)}${trailing}`;
    this.dirty = false;
  }
}

export class AnswerMessage implements AnswerDraft {
  /** Paces the rounds of calls: what it is handed only says "something changed" (the parts hold the text). */
  private readonly pacer: DeltaCoalescer;
  private readonly above = new TextRun();
  private readonly below = new TextRun();
  /** Compact mode: the steps by tool call id, in the order they first came. */
  private readonly steps = new Map<string, ProgressStep>();
  private progressId: string | undefined;
  private progressShown = '';
  private progressDirty = false;
  private closed = false;
  readonly messages: string[] = [];
  private readonly sender: Sender;

  constructor(
    private readonly outbound: DiscordOutbound,
    private readonly channelId: string,
    private readonly options: AnswerMessageOptions,
  ) {
    this.pacer = new DeltaCoalescer({ flush: () => this.flush(), minIntervalMs: options.intervalMs ?? 1_000 });
    this.sender = {
      post: async (content) => {
        const id = await this.outbound.post(this.channelId, { content });
        this.messages.push(id);
        return id;
      },
      edit: (messageId, content) => this.outbound.edit(this.channelId, messageId, { content }),
    };
  }

  push(delta: string): void {
    if (!delta || this.closed) return;
    (this.steps.size > 0 ? this.below : this.above).append(delta);
    this.pacer.push(delta);
  }

  step(step: ProgressStep): void {
    if (this.closed) return;
    this.steps.set(step.id, { ...step });
    this.progressDirty = true;
    this.pacer.push('·');
  }

  async finish(ending?: AnswerEnding): Promise<void> {
    // Closed first: a step or text arriving while the last round drains is dropped, not thrown.
    this.closed = true;
    await this.pacer.close();
    // A closed checklist shows no step as still running (its outcome follows below).
    if (this.steps.size > 0 && this.renderProgress() !== this.progressShown) this.progressDirty = true;
    await this.flush();
    const footer = ending?.footer;
    const components = ending?.feedback ? [feedbackRow()] : undefined;
    if (footer === undefined && !components) return;
    const last = this.lastMessage();
    if (!last) return;
    const line = footer === undefined ? undefined : `-# ${footer}`;
    if (line === undefined || last.shown.length + line.length + 1 <= ANSWER_LIMIT) {
      await this.outbound.edit(this.channelId, last.id, {
        content: line === undefined ? last.shown : `${last.shown}\n${line}`,
        ...withComponents(components),
      });
    } else {
      this.messages.push(await this.outbound.post(this.channelId, { content: line, ...withComponents(components) }));
    }
  }

  /** Never throws: a failed call leaves its part dirty, and the next flush sends it. */
  private async flush(): Promise<void> {
    try {
      await this.above.send(this.sender);
      if (this.progressDirty) await this.sendProgress();
      await this.below.send(this.sender);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not update the answer in Discord; will retry with the next text');
    }
  }

  private async sendProgress(): Promise<void> {
    this.progressDirty = false;
    const content = this.renderProgress();
    try {
      if (!this.progressId) this.progressId = await this.sender.post(content);
      else if (content !== this.progressShown) await this.sender.edit(this.progressId, content);
      this.progressShown = content;
    } catch (error) {
      this.progressDirty = true;
      throw error;
    }
  }

  private renderProgress(): string {
    return progressContent([...this.steps.values()], { limit: ANSWER_LIMIT, closed: this.closed });
  }

  /** The draft's bottom message and what it shows. */
  private lastMessage(): { id: string; shown: string } | undefined {
    const id = this.messages.at(-1);
    if (id === undefined) return undefined;
    if (id === this.progressId) return { id, shown: this.progressShown };
    if (id === this.below.messageId) return { id, shown: this.below.shown };
    if (id === this.above.messageId) return { id, shown: this.above.shown };
    return undefined;
  }
}

function withComponents(components: ApiActionRow[] | undefined): { components?: ApiActionRow[] } {
  return components ? { components } : {};
}
