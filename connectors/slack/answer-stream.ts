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
//
// Compact mode (`step`): a tool call's step goes into the same flow as the text, in order,
// and leaves with it under the same interval: natively as a `task_update` chunk of the
// stream, else as a `plan` message edited in place, the text in messages of its own below it
// (task-chunks.ts holds Slack's rules for both). Text and steps share one pace and one order
// (outgoing-coalescer.ts).
import type { WebClient } from '@slack/web-api';
import type { EngineLogger } from '../../src/engine/index.js';
import type { OpenAnswer } from '../../src/sessions/thread-records.js';
import { splitMarkdownPieces, toSlackMrkdwn, withoutFenceRepair } from '../shared/index.js';
import { closingLine, openingLine } from '../shared/markdown-fences.js';
import type { AnswerDraft, AnswerEnding, ProgressStep } from '../shared/thread-surface.js';
import { footerBlock, type SlackBlock } from './blocks.js';
import { feedbackBlock } from './feedback-blocks.js';
import { OutgoingCoalescer, withoutStepMarks } from './outgoing-coalescer.js';
import { slackError } from './slack-errors.js';
import { streamingUnsupported, type StreamingSupport } from './streaming-support.js';
import {
  joinText,
  openFenceAtEnd,
  sectionsOf,
  streamBodyOf,
  takeWithin,
  textOf,
  type Outgoing,
} from './stream-pieces.js';
import { PlanMessage, TaskLedger } from './task-chunks.js';

export interface AnswerTarget {
  channel: string;
  threadTs: string;
  /** Required by chat.startStream outside DMs. */
  recipientUserId?: string;
  recipientTeamId?: string;
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
  /** An agent session's thread: the stop ending a turn sets its status too (`session_status`); `sent` says it did. */
  turnEnd?: { sessionStatus: 'active'; sent: () => void };
}

const NATIVE_MESSAGE_LIMIT = 11_000; // markdown_text is capped at 12,000 per message
const NATIVE_MAX_AGE_MS = 4 * 60_000; // streams die after about five minutes
const POST_MESSAGE_LIMIT = 3_500; // keeps an edited mrkdwn message comfortably readable

export class AnswerStream implements AnswerDraft {
  private readonly outgoing: OutgoingCoalescer;
  /** The message being written: its ts, the text it holds, when the stream began. */
  private ts: string | undefined;
  private segment = '';
  private startedAt = 0;
  private streaming = false;
  private everText = false;
  /** Text and steps Slack has not accepted yet, in order. */
  private unsent: Outgoing[] = [];
  /** This draft shows steps (compact mode). */
  private stepped = false;
  /** Native streaming: what the current message shows of its tasks. */
  private tasks = new TaskLedger();
  /** Post-and-edit: the plan message the steps are shown in. */
  private plan: PlanMessage | undefined;
  /** Post-and-edit: the segment changed since Slack last accepted it. */
  private dirty = false;
  /** Every message this answer used, for the caller to record (reactions find their session). */
  readonly messages: string[] = [];

  constructor(
    private readonly client: WebClient,
    private readonly target: AnswerTarget,
    private readonly options: AnswerStreamOptions,
  ) {
    this.outgoing = new OutgoingCoalescer({
      flush: (items) => this.flush(items),
      minIntervalMs: options.support.native ? (options.nativeIntervalMs ?? 400) : (options.postIntervalMs ?? 1_500),
    });
  }

  get hasText(): boolean {
    return this.everText;
  }

  push(delta: string): void {
    const text = withoutStepMarks(delta);
    if (!text) return;
    this.everText = true;
    this.outgoing.push(text);
  }

  /**
   * A tool call's step, new or changed: it goes out after the text pushed before it, with the
   * next flush. A step still waiting there is replaced in place (one update, not two).
   */
  step(step: ProgressStep): void {
    if (this.outgoing.closed) {
      this.options.logger.debug({ step: step.id }, 'a step came after the answer was finished; not shown');
      return;
    }
    this.stepped = true;
    this.outgoing.step(step);
  }

  /** Send what is pending and close the message, with an optional footer (the usage line) and 👍 / 👎 under it. */
  async finish(ending?: AnswerEnding): Promise<void> {
    const footerText = ending?.footer;
    const footer = [
      ...(footerText === undefined ? [] : [footerBlock(footerText)]),
      ...(ending?.feedback ? [feedbackBlock()] : []),
    ];
    await this.outgoing.close();
    // One last try for text (or steps) a failed call left behind.
    if (this.unsent.length > 0 || this.dirty || this.plan?.pending) await this.flush([]);
    if (!this.ts) return;
    if (this.streaming) {
      const turnEnd = ending?.turnEnded ? this.options.turnEnd : undefined;
      if ((await this.stopStream(footer, '', turnEnd?.sessionStatus)) && turnEnd) turnEnd.sent();
    } else if (footer.length > 0) {
      await this.repaint(this.ts, footer);
    }
  }

  /**
   * Never throws: what Slack has not accepted stays here (native: `unsent`; post-and-edit:
   * the segment, marked dirty) and goes out with the next flush or at finish. Handing a
   * failed chunk back to the coalescer instead would repeat text Slack had partly taken.
   */
  private async flush(items: readonly Outgoing[]): Promise<void> {
    this.unsent = joinText([...this.unsent, ...items]);
    try {
      if (this.options.support.native) {
        try {
          await this.flushNative();
          return;
        } catch (error) {
          if (slackError(error) === 'invalid_chunks' && this.unsent.some((item) => 'step' in item)) {
            // A step Slack will not take must not hold back the text behind it forever.
            this.options.logger.warn(
              { error: 'invalid_chunks' },
              'Slack refused a task update; the waiting steps are dropped, the text goes on',
            );
            this.unsent = joinText(this.unsent.filter((item) => 'text' in item));
            await this.flushNative();
            return;
          }
          if (!streamingUnsupported(error)) throw error;
          this.options.logger.info(
            { error: slackError(error) },
            'native streaming is not available here; posting and editing instead',
          );
          this.options.support.native = false;
          this.streaming = false;
        }
      }
      await this.flushPostedSteps();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not update the streamed answer; will retry with the next text');
    }
  }

  private async flushNative(): Promise<void> {
    // A code block open where a message ends is closed there and reopened in the next one.
    let reopen = '';
    while (this.unsent.length > 0) {
      const rest = this.unsent;
      const tooOld = this.ts !== undefined && Date.now() - this.startedAt > NATIVE_MAX_AGE_MS;
      const tooLong = this.segment.length + textOf(rest).length > NATIVE_MESSAGE_LIMIT;
      if (this.ts && this.streaming && (tooOld || tooLong)) {
        const fence = openFenceAtEnd(this.segment);
        await this.stopStream([], fence ? `${this.segment.endsWith('\n') ? '' : '\n'}${closingLine(fence)}` : '');
        this.ts = undefined;
        if (fence) reopen = `${openingLine(fence)}\n`;
      }
      if (!this.ts) {
        // More than one message holds (a burst that piled up while Slack was slow): split it.
        const [part, after] = takeWithin(rest, NATIVE_MESSAGE_LIMIT - reopen.length);
        await this.startStream(reopen ? joinText([{ text: reopen }, ...part]) : part);
        reopen = '';
        this.unsent = after;
        continue;
      }
      try {
        const body = streamBodyOf(rest, this.tasks);
        await this.client.chat.appendStream({ channel: this.target.channel, ts: this.ts, ...body });
        this.tasks.sent(body.chunks ?? []);
        this.segment += textOf(rest);
        this.unsent = [];
      } catch (error) {
        if (slackError(error) !== 'message_not_in_streaming_state') throw error;
        // The stream died under us: repair the stuck message, continue in a new one (which
        // shows its tasks afresh, details and all).
        const fence = openFenceAtEnd(this.segment);
        await this.repaint(this.ts);
        this.streaming = false;
        this.ts = undefined;
        if (fence) reopen = `${openingLine(fence)}\n`;
      }
    }
  }

  private async startStream(items: readonly Outgoing[]): Promise<void> {
    // A new message: it shows none of the tasks yet.
    this.tasks = new TaskLedger();
    const body = streamBodyOf(items, this.tasks);
    const args = {
      channel: this.target.channel,
      thread_ts: this.target.threadTs,
      ...body,
      // Task cards between the text, where they happened (Slack's default, said once).
      ...(this.stepped ? { task_display_mode: 'timeline' } : {}),
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
    this.tasks.sent(body.chunks ?? []);
    this.segment = textOf(items);
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

  /** Close the stream, with optional last text (a closing fence), blocks (a footer), session status; true if stopStream took them. */
  private async stopStream(footer: SlackBlock[], last = '', sessionStatus?: string): Promise<boolean> {
    if (!this.ts || !this.streaming) return false;
    this.streaming = false;
    this.segment += last;
    let stopped = true;
    try {
      const status = sessionStatus ? { session_status: sessionStatus } : {};
      await this.client.chat.stopStream({
        channel: this.target.channel,
        ts: this.ts,
        ...(last ? { markdown_text: last } : {}),
        ...(footer.length > 0 ? { blocks: footer } : {}),
        ...status,
      });
    } catch (error) {
      if (slackError(error) !== 'message_not_in_streaming_state') throw error;
      stopped = false;
      await this.repaint(this.ts, footer);
    }
    await this.recordStreaming(undefined);
    return stopped;
  }

  /** The message shows the segment as plain posted text (a stream repaired or done), with the footer blocks if any. */
  private async repaint(ts: string, footer: readonly SlackBlock[] = []): Promise<void> {
    const blocks = footer.length > 0 ? { blocks: [...sectionsOf(this.segment), ...footer] } : {};
    await this.client.chat.update({ channel: this.target.channel, ts, text: toSlackMrkdwn(this.segment), ...blocks });
  }

  /**
   * Post-and-edit with steps: the text before the first step in its message(s), the steps in
   * a plan message below it (posted once, then edited), the text after in new messages below
   * the plan. At most one plan edit per flush, after the text.
   */
  private async flushPostedSteps(): Promise<void> {
    while (this.unsent.length > 0) {
      const item = this.unsent[0]!;
      if ('text' in item) {
        this.unsent.shift();
        this.dirty = true;
        await this.flushPosted(item.text);
        this.dirty = false;
        continue;
      }
      if (!this.plan || this.plan.fullFor(item.step)) {
        // The plan goes below what is written so far: that message is complete.
        if (this.dirty) await this.flushPosted('');
        this.dirty = false;
        if (this.plan) await this.plan.sync();
        this.plan = new PlanMessage(this.client, this.target);
        this.ts = undefined;
        this.segment = '';
      }
      this.plan.set(item.step);
      this.unsent.shift();
      // A new plan is posted at once (its place in the thread is now); edits wait for the end of the flush.
      if (this.plan.messageId === undefined) await this.syncPlan();
    }
    if (this.dirty) {
      await this.flushPosted('');
      this.dirty = false;
    }
    await this.syncPlan();
  }

  private async syncPlan(): Promise<void> {
    if (!this.plan) return;
    const before = this.plan.messageId;
    await this.plan.sync();
    const posted = this.plan.messageId;
    if (posted !== undefined && posted !== before) this.messages.push(posted);
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
        const posted = await this.client.chat.postMessage({
          channel: this.target.channel,
          thread_ts: this.target.threadTs,
          text: toSlackMrkdwn(piece),
        });
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
