// Compact progress on Discord (TOOL_DISPLAY=compact): a draft's tool calls as one checklist
// message, edited in place (answer-message.ts sends it). One line per step: a status mark, the
// title in bold, its details once, and, once it finished, a short output in small print under
// it. Everything the model or a tool wrote is untrusted: it is put on one line and its
// markdown escaped (a title cannot open a code block, a heading, a masked link or a quote);
// mass mentions are made inert where every message passes (outbound.ts).
//
// The message stays within the answer's budget (under Discord's 2,000 characters): when the
// steps outgrow it, the oldest steps lose their output first, then their details, and at last
// the oldest are folded into one line that counts them. The newest step is always shown.
import { escapeMarkdown } from 'discord.js';
import type { ProgressStep } from '../shared/thread-surface.js';

/** How each status is marked; a step the draft closed on unfinished shows `paused` (its outcome is told below). */
const STEP_MARK = { pending: '⬜', in_progress: '⏳', complete: '✅', error: '❌', paused: '⏸️' } as const;

/** One line each: the longest a title, details or output may be on it. */
const TITLE_MAX = 100;
const DETAILS_MAX = 160;
const OUTPUT_MAX = 160;

/** How much of a step is drawn: all of it, without its output, or its mark and title only. */
type Detail = 'full' | 'no_output' | 'title';

/**
 * The checklist's content for these steps (in the order they first appeared), within `limit`
 * characters. `closed`: the draft is finished, so a step still pending or running is shown
 * paused, never as running (its outcome follows in a card or the next progress message).
 */
export function progressContent(steps: readonly ProgressStep[], options: { limit: number; closed: boolean }): string {
  // Each step's line at each level of detail, drawn once: shrinking only picks among them.
  const drawn = steps.map((step) => ({
    full: stepLines(step, 'full', options.closed),
    no_output: stepLines(step, 'no_output', options.closed),
    title: stepLines(step, 'title', options.closed),
  }));
  const levels: Detail[] = steps.map(() => 'full');
  const render = (folded: number): string => {
    const lines = drawn.slice(folded).map((lines, index) => lines[levels[folded + index]!]);
    if (folded > 0) lines.unshift(foldedLine(steps.slice(0, folded)));
    return lines.join('\n');
  };
  let text = render(0);
  if (text.length <= options.limit) return text;
  // Oldest first: lose outputs, then details, keeping the newest step whole.
  for (const level of ['no_output', 'title'] as const) {
    for (let index = 0; index < steps.length - 1; index++) {
      levels[index] = level;
      text = render(0);
      if (text.length <= options.limit) return text;
    }
  }
  for (let folded = 1; folded < steps.length; folded++) {
    text = render(folded);
    if (text.length <= options.limit) return text;
  }
  return text.slice(0, options.limit - 1) + '…';
}

function stepLines(step: ProgressStep, detail: Detail, closed: boolean): string {
  const unfinished = step.status === 'pending' || step.status === 'in_progress';
  const mark = closed && unfinished ? STEP_MARK.paused : STEP_MARK[step.status];
  let line = `${mark} **${inline(step.title, TITLE_MAX)}**`;
  if (detail !== 'title' && step.details) line += ` · ${inline(step.details, DETAILS_MAX)}`;
  if (detail === 'full' && step.output && !unfinished) line += `\n-# ↳ ${inline(step.output, OUTPUT_MAX)}`;
  return line;
}

function foldedLine(steps: readonly ProgressStep[]): string {
  const count = (status: ProgressStep['status']): number => steps.filter((step) => step.status === status).length;
  const parts = [`${count('complete')} ${STEP_MARK.complete}`];
  if (count('error') > 0) parts.push(`${count('error')} ${STEP_MARK.error}`);
  return `-# … ${steps.length} earlier step${steps.length === 1 ? '' : 's'} (${parts.join(', ')})`;
}

/** Untrusted text on one line, shortened, its markdown escaped. */
function inline(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  const short = chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
  return escapeMarkdown(short, { heading: true, bulletedList: true, numberedList: true, maskedLink: true });
}
