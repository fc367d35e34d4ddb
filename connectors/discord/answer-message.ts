// One answer segment in a Discord thread, posted and edited as it grows. Deltas are coalesced
// (shared/delta-coalescer.ts) so Discord sees at most one call per interval, the first text as
// soon as the first token arrives. Discord caps a message at 2,000 characters: the answer
// rolls over to a new message before that, cut by the shared fence-safe splitter, so every
// message as it finally stands has balanced code fences (a code block cut at a message's end
// is closed there and reopened in the next).
//
// A 429 is waited out by discord.js (outbound.ts); any other failure keeps the text here,
// marked dirty, and the next flush (or finish) sends the message as it should stand: an edit
// carries the whole message, so nothing is lost or doubled.
import type { EngineLogger } from '../../src/engine/index.js';
import { DeltaCoalescer, splitMarkdownPieces, withoutFenceRepair } from '../shared/index.js';
import type { AnswerDraft, AnswerEnding } from '../shared/thread-surface.js';
import type { DiscordOutbound } from './outbound.js';

/** Room left under Discord's 2,000 for the footer and the mention-neutralising word joiners. */
const ANSWER_LIMIT = 1_900;

export interface AnswerMessageOptions {
  logger: EngineLogger;
  /** Between two edits of the answer (Discord's edit bucket allows about one a second). */
  intervalMs?: number;
}

export class AnswerMessage implements AnswerDraft {
  private readonly coalescer: DeltaCoalescer;
  /** The message being written and the text it holds (with a reopened fence, not the closing one). */
  private messageId: string | undefined;
  private segment = '';
  private dirty = false;
  /** What the current message shows now, for the footer at finish. */
  private shown = '';
  readonly messages: string[] = [];

  constructor(
    private readonly outbound: DiscordOutbound,
    private readonly channelId: string,
    private readonly options: AnswerMessageOptions,
  ) {
    this.coalescer = new DeltaCoalescer({ flush: (chunk) => this.flush(chunk), minIntervalMs: options.intervalMs ?? 1_000 });
  }

  push(delta: string): void {
    if (delta) this.coalescer.push(delta);
  }

  async finish(ending?: AnswerEnding): Promise<void> {
    const footer = ending?.footer;
    await this.coalescer.close();
    if (this.dirty) await this.flush('');
    if (footer === undefined || !this.messageId) return;
    const line = `-# ${footer}`;
    if (this.shown.length + line.length + 1 <= ANSWER_LIMIT) {
      await this.outbound.edit(this.channelId, this.messageId, { content: `${this.shown}\n${line}` });
    } else {
      this.messages.push(await this.outbound.post(this.channelId, { content: line }));
    }
  }

  /** Never throws: a failed call leaves the text here, and the next flush sends it. */
  private async flush(chunk: string): Promise<void> {
    this.segment += chunk;
    this.dirty = true;
    try {
      await this.send();
      this.dirty = false;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not update the answer in Discord; will retry with the next text');
    }
  }

  private async send(): Promise<void> {
    if (!this.segment.trim()) return;
    const pieces = splitMarkdownPieces(this.segment, ANSWER_LIMIT);
    // The splitter drops trailing whitespace; the text still to come must follow it.
    const trailing = /\s*$/.exec(this.segment)?.[0] ?? '';
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (!this.messageId) {
        const id = await this.outbound.post(this.channelId, { content: piece.text });
        this.messageId = id;
        this.messages.push(id);
      } else {
        await this.outbound.edit(this.channelId, this.messageId, { content: piece.text });
      }
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
  }
}
