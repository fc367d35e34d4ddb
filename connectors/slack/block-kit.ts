// Block Kit's limits in one table, and the text pieces the cards and the modal are built from:
// mrkdwn and plain-text objects cut to their limits, and code blocks that show a text exactly
// as typed, split to fit Slack's section limit.
//
// The idea to hold: text we did not write goes into a code block with `&`, `<`, `>` escaped
// (Slack reads them as markup, and `<!channel>` as a broadcast) and with no three backticks
// left in it (they would close the block and let the rest render as formatting). Backticks
// are kept apart by a zero-width space: the reader still sees ``` and nothing else. That
// space is only ever ours, because hidden characters are revealed (⟨U+200B⟩) before a text
// gets here.
import { escapeSlackText } from '../shared/markdown-format.js';
import { truncateForDisplay } from '../shared/truncate.js';
import { safeCutIndex } from '../shared/visible-text.js';

/** Block Kit limits (docs.slack.dev: Block Kit overview, text object, button element, modal view). */
export const LIMITS = {
  messageBlocks: 50,
  modalBlocks: 100,
  sectionText: 3000,
  buttonText: 75,
  buttonValue: 2000,
  actionId: 255,
  blockId: 255,
  /** A modal's title, close and submit texts. */
  viewTitle: 24,
} as const;

export interface SlackBlock {
  type: string;
  [field: string]: unknown;
}

export type MrkdwnText = { type: 'mrkdwn'; text: string };
export type PlainText = { type: 'plain_text'; text: string; emoji: true };

/** A mrkdwn text object, never over the section limit (a longer text says what it lost). */
export function mrkdwn(text: string, max: number = LIMITS.sectionText): MrkdwnText {
  return { type: 'mrkdwn', text: truncateForDisplay(text, max) };
}

/** A plain-text object cut with "…" to `max` characters (button text by default). */
export function plain(text: string, max: number = LIMITS.buttonText): PlainText {
  return { type: 'plain_text', text: text.length > max ? `${text.slice(0, max - 1)}…` : text, emoji: true };
}

/** A section holding one mrkdwn text. */
export function section(text: string): SlackBlock {
  return { type: 'section', text: mrkdwn(text) };
}

/** A context line holding one mrkdwn text. */
export function context(text: string): SlackBlock {
  return { type: 'context', elements: [mrkdwn(text)] };
}

const FENCE_OPEN = '```\n';
const FENCE_CLOSE = '\n```';
const FENCE_COST = FENCE_OPEN.length + FENCE_CLOSE.length;
const ZERO_WIDTH_SPACE = '\u200B';

/** `text` as a mrkdwn code block that shows it as typed (an empty text says so instead). */
export function codeBlock(text: string): string {
  if (text === '') return '_(empty)_';
  return `${FENCE_OPEN}${codeBody(text)}${FENCE_CLOSE}`;
}

/**
 * `text` as consecutive code blocks, each (fences included) at most `limit` characters: in
 * order, every character in exactly one of them. A block ends after a line break when one is
 * near its end, and never inside a surrogate pair or a ⟨U+XXXX⟩ mark.
 * @internal
 */
export function codeSections(text: string, limit: number = LIMITS.sectionText): string[] {
  return splitForCode(text, limit).map(codeBlock);
}

/**
 * The pieces `codeSections` puts in its blocks, at most `maxPieces` of them (the first ones:
 * a caller with room for so many blocks learns how much of the text they hold).
 */
export function splitForCode(text: string, limit: number = LIMITS.sectionText, maxPieces = Infinity): string[] {
  const budget = limit - FENCE_COST;
  if (budget < 8) throw new RangeError(`splitForCode: ${limit} characters cannot hold a code block`);
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length && pieces.length < maxPieces) {
    let end = start;
    let cost = 0;
    while (end < text.length) {
      const next = renderedCost(text, end);
      if (cost + next > budget) break;
      cost += next;
      end += 1;
    }
    if (end < text.length) {
      const newline = text.lastIndexOf('\n', end - 1);
      if (newline >= start && newline + 1 - start > (end - start) * 0.8) end = newline + 1;
      const safe = safeCutIndex(text, end);
      if (safe > start) end = safe;
    }
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** Characters the code unit at `i` takes once escaped (a backtick followed by one gains a zero-width space). */
function renderedCost(text: string, i: number): number {
  switch (text[i]) {
    case '&':
      return 5;
    case '<':
    case '>':
      return 4;
    case '`':
      return text[i + 1] === '`' ? 2 : 1;
    default:
      return 1;
  }
}

function codeBody(text: string): string {
  return escapeSlackText(text).replace(/`(?=`)/g, `\`${ZERO_WIDTH_SPACE}`);
}
