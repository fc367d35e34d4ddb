// What a streamed answer holds between flushes (answer-stream.ts): text and compact-mode steps
// in the order they came, how much of it one Slack message takes, and the text as Slack
// blocks or stream content. Pure functions.
import type { AnyChunk } from '@slack/web-api';
import { scanFences, splitMarkdown, toSlackMrkdwn } from '../shared/index.js';
import type { Fence } from '../shared/markdown-fences.js';
import type { ProgressStep } from '../shared/thread-surface.js';
import type { SlackBlock } from './blocks.js';
import type { TaskLedger } from './task-chunks.js';

/** What waits to go out, in order: text, and steps between it. */
export type Outgoing = { text: string } | { step: ProgressStep };

/** The text of what waits, steps left out. */
export function textOf(items: readonly Outgoing[]): string {
  return items.map((item) => ('text' in item ? item.text : '')).join('');
}

/** Neighbouring texts as one (fewer chunks, and a message's text measured whole). */
export function joinText(items: readonly Outgoing[]): Outgoing[] {
  const out: Outgoing[] = [];
  for (const item of items) {
    const last = out.at(-1);
    if ('text' in item && last && 'text' in last) out[out.length - 1] = { text: last.text + item.text };
    else out.push(item);
  }
  return out;
}

/**
 * What of `items` one message holds (`room` characters of text; steps take none), and the
 * rest. Text is cut as `cutWithin` does; at least something is taken, so a loop progresses.
 */
export function takeWithin(items: readonly Outgoing[], room: number): [Outgoing[], Outgoing[]] {
  const part: Outgoing[] = [];
  let left = room;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if ('step' in item || item.text.length <= left) {
      part.push(item);
      if ('text' in item) left -= item.text.length;
      continue;
    }
    if (left <= 0 && part.length > 0) return [part, items.slice(i)];
    const cut = cutWithin(item.text, Math.max(left, 1));
    part.push({ text: item.text.slice(0, cut) });
    return [part, [{ text: item.text.slice(cut) }, ...items.slice(i + 1)]];
  }
  return [part, []];
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

/**
 * What a native stream call carries: text alone goes as `markdown_text`; with steps, everything
 * goes as chunks in order (text first where it came first), each task bringing only what the
 * message lacks of it (`tasks`, what it shows so far).
 */
export function streamBodyOf(
  items: readonly Outgoing[],
  tasks: TaskLedger,
): { markdown_text?: string; chunks?: AnyChunk[] } {
  if (!items.some((item) => 'step' in item)) return { markdown_text: textOf(items) };
  return {
    chunks: items.map((item): AnyChunk =>
      'step' in item ? tasks.chunkOf(item.step) : { type: 'markdown_text', text: item.text },
    ),
  };
}

/** Markdown as mrkdwn section blocks (3,000 characters each), for a message that also carries a footer. */
export function sectionsOf(markdown: string): SlackBlock[] {
  if (!markdown) return [];
  return splitMarkdown(markdown, 2_900)
    .slice(0, 45)
    .map((piece) => ({ type: 'section', text: { type: 'mrkdwn', text: toSlackMrkdwn(piece) } }));
}

/** The code block a text ends inside of (opened and not closed yet), if any. */
export function openFenceAtEnd(text: string): Fence | undefined {
  const span = scanFences(text).at(-1);
  return span && !span.closed ? span.fence : undefined;
}
