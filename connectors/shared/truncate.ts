// Shortening text for a field with a hard size (a Slack `section` holds 3,000 characters, a
// task card's `details` 256, a Discord text display 4,000) without hiding that we did.
//
// The idea to hold: a cut is always visible. A one-line summary ends in "…"; anything longer
// says how many characters were left out, and a cut inside a code block closes the block so
// the rest of the message is not swallowed into it.
import { closingLine, scanFences, spanAround } from './markdown-fences.js';
import { thousands } from '../../src/text/thousands.js';

/**
 * At most `max` characters of `text`. When it is longer, the kept part ends at a line break or
 * a space near the limit, any code block it cuts is closed, and a note says how much is missing:
 * "… (1,234 more characters)". Throws when `max` cannot hold even the note: that is a bug in
 * the caller's field size, not something to paper over.
 */
export function truncateForDisplay(text: string, max: number): string {
  if (text.length <= max) return text;
  // The note about the whole text is the longest the note can get: reserve that much.
  let room = max - note(text.length).length - 1;
  if (room < 1) throw new RangeError(`truncateForDisplay: ${max} characters cannot hold the truncation note`);
  const spans = scanFences(text);
  for (;;) {
    let cut = naturalCut(text, room);
    let span = spanAround(spans, cut);
    // A cut that keeps nothing of a block's body ends before the block instead of showing an empty one.
    if (span && cut <= span.bodyStart) {
      cut = span.start;
      span = undefined;
    }
    const kept = text.slice(0, cut).replace(/\s+$/, '');
    const close = span ? `\n${closingLine(span.fence)}` : '';
    const separator = kept === '' ? '' : close || text[cut] === '\n' ? '\n' : ' ';
    const shown = `${kept}${close}${separator}${note(text.length - kept.length)}`;
    if (shown.length <= max) return shown;
    // Only a closing fence can overflow the reservation: make room for it and cut again.
    room -= shown.length - max;
  }
}

/** One line of at most `max` characters: newlines shown as "\n", a cut marked with "…". */
export function ellipsize(text: string, max: number): string {
  const flat = text.replace(/\r?\n/g, '\\n').replace(/\t/g, ' ');
  if (flat.length <= max) return flat;
  if (max < 1) return '';
  return `${flat.slice(0, avoidSplittingPair(flat, max - 1)).replace(/\s+$/, '')}…`;
}

function note(missing: number): string {
  return `… (${thousands(missing)} more character${missing === 1 ? '' : 's'})`;
}

/** A cut at most `room` characters in: a line break in the last fifth if there is one, else a space, else exactly there. */
function naturalCut(text: string, room: number): number {
  const limit = Math.max(0, room);
  const floor = Math.floor(limit * 0.8);
  const newline = text.lastIndexOf('\n', limit);
  if (newline > floor) return newline;
  const space = text.lastIndexOf(' ', limit);
  if (space > floor) return space;
  return avoidSplittingPair(text, limit);
}

function avoidSplittingPair(text: string, cut: number): number {
  const before = text.charCodeAt(cut - 1);
  return before >= 0xd800 && before <= 0xdbff ? cut - 1 : cut;
}
