// Compact progress on Slack (TOOL_DISPLAY=compact): a tool call's step (shared/progress-steps.ts)
// in Slack's words. Two shapes, one per way an answer reaches Slack (answer-stream.ts):
// - a `task_update` chunk of the streamed reply (chat.startStream / appendStream, timeline
//   display), with what Slack holds of each task in one streamed message (`TaskLedger`);
// - a `plan` block of `task_card`s in a message of its own, posted once and edited in place
//   where native streaming is off (`PlanMessage`).
//
// Slack's rules, each kept here: a status is one of pending, in_progress, complete, error;
// `details` and `output` are at most 256 characters; a repeated task_update carrying `details`
// APPENDS them to what the task shows, so they go once per task per message (and again in a
// new message after a rollover, which shows the task afresh); a plan holds at most 50 task
// cards, and `plan` and `task_card` are never mixed in one message (a plan's cards live inside it).
import type { types } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { neutraliseBroadcasts } from '../shared/mentions.js';
import type { ProgressStep } from '../shared/thread-surface.js';

// @slack/types, as Bolt re-exports it (not a dependency of ours by itself).
type TaskUpdateChunk = types.TaskUpdateChunk;
type TaskCardBlock = types.TaskCardBlock;
type PlanBlock = types.PlanBlock;
type RichTextBlock = types.RichTextBlock;

/** Slack's cap on a task's `details` and `output`. */
const TASK_TEXT_MAX = 256;
/** Reported cap on the task cards one plan block holds. */
const PLAN_TASKS_MAX = 50;

/**
 * What one streamed message shows of its tasks, as far as this stream told Slack: the details
 * and output each task already carries there. A new message (a rollover) starts a new ledger.
 */
export class TaskLedger {
  private readonly details = new Set<string>();
  private readonly outputs = new Map<string, string>();

  /** The chunk that brings the task to `step` in this message, without what it already shows. */
  chunkOf(step: ProgressStep): TaskUpdateChunk {
    const chunk: TaskUpdateChunk = {
      type: 'task_update',
      id: step.id,
      title: step.title || step.id,
      status: step.status,
    };
    if (step.details && !this.details.has(step.id)) chunk.details = clip(step.details);
    if (step.output && this.outputs.get(step.id) !== step.output) chunk.output = clip(step.output);
    return chunk;
  }

  /** Slack accepted these chunks: what they carried is now on the message. */
  sent(chunks: readonly { type: string }[]): void {
    for (const chunk of chunks) {
      if (chunk.type !== 'task_update') continue;
      const task = chunk as TaskUpdateChunk;
      if (task.details !== undefined) this.details.add(task.id);
      if (task.output !== undefined) this.outputs.set(task.id, task.output);
    }
  }
}

/** Where a plan message goes. */
export interface PlanTarget {
  channel: string;
  threadTs: string;
}

/**
 * The steps of an answer as one `plan` message (native streaming off): posted at the first
 * step, then edited in place with every change, at most once per `sync`. The caller syncs
 * under its edit interval, so Slack sees at most one chat.update per interval for it.
 */
export class PlanMessage {
  private readonly tasks = new Map<string, ProgressStep>();
  private changed = false;
  private ts: string | undefined;

  constructor(
    private readonly client: WebClient,
    private readonly target: PlanTarget,
  ) {}

  /** Its message, once posted. */
  get messageId(): string | undefined {
    return this.ts;
  }

  /** A change Slack has not shown yet (a failed sync leaves it for the next). */
  get pending(): boolean {
    return this.changed;
  }

  /** Holds as many tasks as one plan may: a new step goes to a new plan message. */
  fullFor(step: ProgressStep): boolean {
    return !this.tasks.has(step.id) && this.tasks.size >= PLAN_TASKS_MAX;
  }

  /** A step, new or changed; shown at the next `sync`. */
  set(step: ProgressStep): void {
    const known = this.tasks.get(step.id);
    this.tasks.set(step.id, known?.details && !step.details ? { ...step, details: known.details } : step);
    this.changed = true;
  }

  /** Post the plan, or edit it to show its latest state; nothing when nothing changed. Throws what Slack throws (it is tried again at the next sync). */
  async sync(): Promise<void> {
    if (!this.changed) return;
    const message = planMessage([...this.tasks.values()]);
    if (this.ts === undefined) {
      const posted = await this.client.chat.postMessage({
        channel: this.target.channel,
        thread_ts: this.target.threadTs,
        ...message,
      });
      if (!posted.ts) throw new Error('chat.postMessage answered without a ts');
      this.ts = posted.ts;
    } else {
      await this.client.chat.update({ channel: this.target.channel, ts: this.ts, ...message });
    }
    this.changed = false;
  }
}

/** A plan message's text (for notifications and clients without blocks) and its one plan block. */
function planMessage(steps: readonly ProgressStep[]): { text: string; blocks: PlanBlock[] } {
  const title = planTitle(steps);
  return { text: title, blocks: [{ type: 'plan', title, tasks: steps.map(taskCard) }] };
}

/** What the plan says of itself: working while a step is open, else how many are done. */
function planTitle(steps: readonly ProgressStep[]): string {
  if (steps.some((step) => step.status === 'pending' || step.status === 'in_progress')) return 'Working…';
  const failed = steps.filter((step) => step.status === 'error').length;
  const done = `${steps.length} ${steps.length === 1 ? 'step' : 'steps'} done`;
  return failed > 0 ? `${done}, ${failed} not completed` : done;
}

/** A step as a `task_card` block (inside a plan). */
function taskCard(step: ProgressStep): TaskCardBlock {
  const card: TaskCardBlock = {
    type: 'task_card',
    task_id: step.id,
    title: step.title || step.id,
    status: step.status,
  };
  if (step.details) card.details = richText(clip(step.details));
  if (step.output) card.output = richText(clip(step.output));
  return card;
}

function richText(text: string): RichTextBlock {
  return { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }] };
}

/**
 * At most TASK_TEXT_MAX characters, never between the halves of a surrogate pair. Broadcasts
 * are made inert first: the outbound guard would otherwise add its word joiners after the cut
 * and push the text past Slack's cap (it finds nothing left to change here).
 */
function clip(raw: string): string {
  const text = neutraliseBroadcasts(raw, 'slack-plain');
  const chars = Array.from(text);
  if (text.length <= TASK_TEXT_MAX) return text;
  let out = '';
  for (const char of chars) {
    if (out.length + char.length > TASK_TEXT_MAX - 1) break;
    out += char;
  }
  return `${out}…`;
}
