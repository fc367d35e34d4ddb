// One streamed answer in a thread. Slack's native streaming (chat.startStream /
// appendStream / stopStream) is used where the workspace has it; otherwise (GovSlack, an
// older Enterprise Grid, a test server that answers unknown_method) the answer is posted
// once and edited as it grows. Either way the deltas are coalesced, so Slack sees a call
// at most every interval, and the first text shows as soon as the first token arrives.
//
// Slack's streams have sharp edges, each handled here: `markdown_text` is capped at 12,000
// characters per message, a stream dies after about five minutes (even with traffic) and
// later calls fail with message_not_in_streaming_state, and a dead stream stays visibly
// broken until chat.update repairs it. So: roll over to a new message before either limit
// (splitting a burst bigger than one message, and closing a code block the cut falls in,
// to reopen it in the next message), repair and continue on that error, and never append
// after stop. The caller stops the stream before any wait for a human.
import type { WebClient } from '@slack/web-api';
import type { EngineLogger } from '../../src/engine/index.js';
import type { OpenAnswer } from '../../src/store/session-store.js';
import { DeltaCoalescer, scanFences, splitMarkdown, splitMarkdownPieces, toSlackMrkdwn, withoutFenceRepair } from '../shared/index.js';
import { closingLine, openingLine, type Fence } from '../shared/markdown-fences.js';
import type { AnswerDraft, AnswerEnding } from '../shared/thread-surface.js';
import { footerBlock, type SlackBlock } from './blocks.js';

export interface AnswerTarget {
  channel: string;
  threadTs: string;
  /** Required by chat.startStream outside DMs. */
  recipientUserId?: string;
  recipientTeamId?: string;
}

/** Shared by every stream of a connector: once a workspace says it has no native streaming, stop trying. */
export interface StreamingSupport {
  native: boolean;
}

export interface AnswerStreamOptions {
  logger: EngineLogger;
  support: StreamingSupport;
  /** Between Slack calls for one message (appendStream is Tier 4, chat.update Tier 3: 50/min). */
  nativeIntervalMs?: number;
  postIntervalMs?: number;
  /**
   * A native stream is about to open (`startingAt`), opened (its `messageId`), or was stopped
   * (undefined): recorded, for a takeover to close it. The mark is awaited before Slack is
   * asked, so the record never misses a stream Slack shows (it may name one already stopped,
   * which closing tolerates).
   */
  streaming?: (answer: OpenAnswer | undefined) => Promise<void>;
  /**
   * Where the thread is an agent session: the stop that ends a turn (`ending.turnEnded`) also
   * sets the session's status (chat.stopStream's `session_status`), and says so with `sent`.
   */
  turnEnd?: { sessionStatus: 'active'; sent: () => void };
}

const NATIVE_MESSAGE_LIMIT = 11_000; // markdown_text is capped at 12,000 per message
const NATIVE_MAX_AGE_MS = 4 * 60_000; // streams die after about five minutes
const POST_MESSAGE_LIMIT = 3_500; // keeps an edited mrkdwn message comfortably readable
const UNSUPPORTED = new Set(['unknown_method', 'method_deprecated', 'not_allowed_token_type', 'invalid_arguments', 'not_implemented']);

export class AnswerStream implements AnswerDraft {
  private readonly coalescer: DeltaCoalescer;
  /** The message being written: its ts, the text it holds, when the stream began. */
  private ts: string | undefined;
  private segment = '';
  private startedAt = 0;
  private streaming = false;
  private everText = false;
  /** Native streaming: text Slack has not accepted yet. */
  private unsent = '';
  /** Post-and-edit: the segment changed since Slack last accepted it. */
  private dirty = false;
  /** Every message this answer used, for the caller to record (reactions find their session). */
  readonly messages: string[] = [];

  constructor(
    private readonly client: WebClient,
    private readonly target: AnswerTarget,
    private readonly options: AnswerStreamOptions,
  ) {
    this.coalescer = new DeltaCoalescer({
      flush: (chunk) => this.flush(chunk),
      minIntervalMs: options.support.native ? (options.nativeIntervalMs ?? 400) : (options.postIntervalMs ?? 1_500),
    });
  }

  get hasText(): boolean {
    return this.everText;
  }

  push(delta: string): void {
    if (!delta) return;
    this.everText = true;
    this.coalescer.push(delta);
  }

  /** Send what is pending and close the message, with an optional footer (the usage line) under it. */
  async finish(ending?: AnswerEnding): Promise<void> {
    const footerText = ending?.footer;
    const footer = footerText === undefined ? [] : [footerBlock(footerText)];
    await this.coalescer.close();
    // One last try for text a failed call left behind.
    if (this.unsent || this.dirty) await this.flush('');
    if (!this.ts) return;
    if (this.streaming) {
      const turnEnd = ending?.turnEnded ? this.options.turnEnd : undefined;
      if ((await this.stopStream(footer, '', turnEnd?.sessionStatus)) && turnEnd) turnEnd.sent();
    } else if (footer.length > 0) {
      await this.client.chat.update({ channel: this.target.channel, ts: this.ts, text: toSlackMrkdwn(this.segment), blocks: [...sectionsOf(this.segment), ...footer] });
    }
  }

  /**
   * Never throws: what Slack has not accepted stays here (native: `unsent`; post-and-edit:
   * the segment, marked dirty) and goes out with the next flush or at finish. Handing a
   * failed chunk back to the coalescer instead would repeat text Slack had partly taken.
   */
  private async flush(chunk: string): Promise<void> {
    this.unsent += chunk;
    try {
      if (this.options.support.native) {
        try {
          await this.flushNative();
          return;
        } catch (error) {
          if (!UNSUPPORTED.has(slackError(error) ?? '')) throw error;
          this.options.logger.info({ error: slackError(error) }, 'native streaming is not available here; posting and editing instead');
          this.options.support.native = false;
          this.streaming = false;
        }
      }
      const text = this.unsent;
      this.unsent = '';
      this.dirty = true;
      await this.flushPosted(text);
      this.dirty = false;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not update the streamed answer; will retry with the next text');
    }
  }

  private async flushNative(): Promise<void> {
    // A code block open where a message ends is closed there and reopened in the next one.
    let reopen = '';
    while (this.unsent) {
      const rest = this.unsent;
      const tooOld = this.ts !== undefined && Date.now() - this.startedAt > NATIVE_MAX_AGE_MS;
      const tooLong = this.segment.length + rest.length > NATIVE_MESSAGE_LIMIT;
      if (this.ts && this.streaming && (tooOld || tooLong)) {
        const fence = openFenceAtEnd(this.segment);
        await this.stopStream([], fence ? `${this.segment.endsWith('\n') ? '' : '\n'}${closingLine(fence)}` : '');
        this.ts = undefined;
        if (fence) reopen = `${openingLine(fence)}\n`;
      }
      if (!this.ts) {
        // More than one message holds (a burst that piled up while Slack was slow): split it.
        const part = rest.slice(0, cutWithin(rest, NATIVE_MESSAGE_LIMIT - reopen.length));
        await this.startStream(reopen + part);
        reopen = '';
        this.unsent = rest.slice(part.length);
        continue;
      }
      try {
        await this.client.chat.appendStream({ channel: this.target.channel, ts: this.ts, markdown_text: rest });
        this.segment += rest;
        this.unsent = '';
      } catch (error) {
        if (slackError(error) !== 'message_not_in_streaming_state') throw error;
        // The stream died under us: repair the stuck message, continue in a new one.
        const fence = openFenceAtEnd(this.segment);
        await this.client.chat.update({ channel: this.target.channel, ts: this.ts, text: toSlackMrkdwn(this.segment) });
        this.streaming = false;
        this.ts = undefined;
        if (fence) reopen = `${openingLine(fence)}\n`;
      }
    }
  }

  private async startStream(chunk: string): Promise<void> {
    const args = {
      channel: this.target.channel,
      thread_ts: this.target.threadTs,
      markdown_text: chunk,
      ...(this.target.recipientUserId ? { recipient_user_id: this.target.recipientUserId } : {}),
      ...(this.target.recipientTeamId ? { recipient_team_id: this.target.recipientTeamId } : {}),
    };
    // Written ahead: Slack shows the stream as soon as it opens it, and a process killed before
    // it records the ts (or before the answer even reaches it) would leave a stream nobody can
    // name. The mark lets the instance that takes over find it (stale-stream.ts).
    await this.recordStreaming({ startingAt: Date.now() });
    let started: Awaited<ReturnType<WebClient['chat']['startStream']>>;
    try {
      started = await this.client.chat.startStream(args);
    } catch (error) {
      // Refused by Slack: no stream opened, nothing for a takeover to look for.
      if (slackError(error) !== undefined) await this.recordStreaming(undefined);
      throw error;
    }
    if (!started.ts) throw new Error('chat.startStream answered without a ts');
    this.ts = started.ts;
    this.messages.push(started.ts);
    this.segment = chunk;
    this.startedAt = Date.now();
    this.streaming = true;
    await this.recordStreaming({ messageId: started.ts });
  }

  /** Best effort: losing the record only means a takeover cannot close this stream early. */
  private async recordStreaming(answer: OpenAnswer | undefined): Promise<void> {
    try {
      await this.options.streaming?.(answer);
    } catch (error) {
      this.options.logger.debug({ err: error }, 'could not record the open stream');
    }
  }

  /**
   * Close the stream, with optional last text (a closing fence), blocks (a footer) and the
   * session's new status. True when chat.stopStream itself took it (so `sessionStatus` too).
   */
  private async stopStream(footer: SlackBlock[], last = '', sessionStatus?: string): Promise<boolean> {
    if (!this.ts || !this.streaming) return false;
    this.streaming = false;
    this.segment += last;
    let stopped = true;
    try {
      await this.client.chat.stopStream({
        channel: this.target.channel,
        ts: this.ts,
        ...(last ? { markdown_text: last } : {}),
        ...(footer.length > 0 ? { blocks: footer } : {}),
        ...(sessionStatus ? { session_status: sessionStatus } : {}),
      });
    } catch (error) {
      if (slackError(error) !== 'message_not_in_streaming_state') throw error;
      stopped = false;
      await this.client.chat.update({ channel: this.target.channel, ts: this.ts, text: toSlackMrkdwn(this.segment), ...(footer.length > 0 ? { blocks: [...sectionsOf(this.segment), ...footer] } : {}) });
    }
    await this.recordStreaming(undefined);
    return stopped;
  }

  /** Post, then edit; roll over to a new message (split safely) when the text grows too long. */
  private async flushPosted(chunk: string): Promise<void> {
    this.segment += chunk;
    const pieces = splitMarkdownPieces(this.segment, POST_MESSAGE_LIMIT);
    // The splitter drops the text's trailing whitespace; the text still to come must follow it.
    const trailing = /\s*$/.exec(this.segment)?.[0] ?? '';
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!.text;
      const last = i === pieces.length - 1;
      if (!this.ts) {
        const posted = await this.client.chat.postMessage({ channel: this.target.channel, thread_ts: this.target.threadTs, text: toSlackMrkdwn(piece) });
        if (!posted.ts) throw new Error('chat.postMessage answered without a ts');
        this.ts = posted.ts;
        this.messages.push(posted.ts);
      } else {
        await this.client.chat.update({ channel: this.target.channel, ts: this.ts, text: toSlackMrkdwn(piece) });
      }
      if (!last) this.ts = undefined;
    }
    // What the next flush builds on: the last message's own text, with the fence line that
    // reopened a cut code block but without the one that closed it for display (it goes on).
    const last = pieces.at(-1);
    if (last) this.segment = `${last.reopened}${withoutFenceRepair(last)}${trailing}`;
  }
}

/** Markdown as mrkdwn section blocks (3,000 characters each), for a message that also carries a footer. */
function sectionsOf(markdown: string): SlackBlock[] {
  if (!markdown) return [];
  return splitMarkdown(markdown, 2_900)
    .slice(0, 45)
    .map((piece) => ({ type: 'section', text: { type: 'mrkdwn', text: toSlackMrkdwn(piece) } }));
}

/** The code block a text ends inside of (opened and not closed yet), if any. */
function openFenceAtEnd(text: string): Fence | undefined {
  const span = scanFences(text).at(-1);
  return span && !span.closed ? span.fence : undefined;
}

/**
 * Where to cut `text` to keep at most `room` characters: after a line, else a word, in the
 * second half; else at `room`. Always at least one character, so a caller's loop progresses.
 */
function cutWithin(text: string, room: number): number {
  if (text.length <= room) return text.length;
  if (room <= 1) return 1;
  const window = text.slice(0, room);
  for (const boundary of ['\n', ' ']) {
    const at = window.lastIndexOf(boundary);
    if (at >= room / 2) return at + 1;
  }
  // Never between the two halves of a surrogate pair.
  return /[\uD800-\uDBFF]/.test(window.charAt(room - 1)) ? room - 1 : room;
}

/** The `error` code of a Slack platform error (`channel_not_found`, …), if it is one. */
export function slackError(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  return typeof data?.error === 'string' ? data.error : undefined;
}
