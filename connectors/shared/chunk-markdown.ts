// Splitting a long markdown answer into messages a platform will accept (Discord: 2,000
// characters of `content`; Slack: 3,000 per `section`, 12,000 per `markdown` block).
//
// The idea to hold: every piece renders on its own. A cut never lands inside a fenced code
// block unless the block alone is longer than a piece; then the piece closes the fence and the
// next one reopens it with the same info string, and those added lines count against the
// limit. Split code fences are one of the loudest complaints about chat bots (broken
// highlighting, the rest of the answer swallowed into a code block), so this is the invariant
// tests guard hardest. Nothing is dropped but whitespace at a cut; nothing is ever truncated.
//
// Lengths are UTF-16 code units (`string.length`). Slack and Discord count characters, and a
// string's length is never smaller than its character count, so the limit is safe on both.
import { closingLine, openingLine, scanFences, spanAround, type Fence, type FenceSpan } from './markdown-fences.js';

/** One message of a split answer, with the fence lines the splitter added to keep it balanced. */
export interface MarkdownPiece {
  /** What to send: at most `limit` characters. */
  text: string;
  /** The fence line (and its newline) prepended to reopen a code block cut by the previous piece; "" if none. */
  reopened: string;
  /** The closing fence (with the newline before it, when needed) appended to close a code block cut here; "" if none. */
  closed: string;
}

/**
 * Below this, a piece could not hold a reopened fence, a closing fence and some code. Real
 * limits are 2,000 (Discord) and up; a tiny limit is a programming error, so it throws.
 * @internal
 */
export const MIN_SPLIT_LIMIT = 32;

/**
 * A cut at a preferred boundary (paragraph, then line, sentence, word) is taken only if it
 * keeps at least this share of the room; otherwise the next kind of boundary is tried. Without
 * it, one early blank line would produce a message of a few words followed by a full one.
 */
const MIN_FILL = 0.5;

/**
 * Split markdown into pieces of at most `limit` characters that each render correctly on their
 * own. Blank text gives no pieces. Throws a RangeError (never truncates) for a limit below
 * `MIN_SPLIT_LIMIT`, or when a code fence's own opening line leaves no room for code.
 */
export function splitMarkdown(text: string, limit: number): string[] {
  return splitMarkdownPieces(text, limit).map((piece) => piece.text);
}

/** The original text of a piece: its text without the fence lines the splitter added. */
export function withoutFenceRepair(piece: MarkdownPiece): string {
  return piece.text.slice(piece.reopened.length, piece.text.length - piece.closed.length);
}

/**
 * `splitMarkdown`, keeping track of the fence lines each piece gained. Joining the pieces'
 * `withoutFenceRepair` gives back the text, except for whitespace at the cuts.
 */
export function splitMarkdownPieces(text: string, limit: number): MarkdownPiece[] {
  if (!Number.isInteger(limit) || limit < MIN_SPLIT_LIMIT) {
    throw new RangeError(`splitMarkdown: limit must be an integer of at least ${MIN_SPLIT_LIMIT}, got ${limit}`);
  }
  // Trailing whitespace is never worth a message of its own.
  const source = text.replace(/\s+$/, '');
  const spans = scanFences(source);
  const pieces: MarkdownPiece[] = [];
  let pos = 0;
  // The code block `pos` is inside of, because the previous piece cut it.
  let carry: FenceSpan | undefined;
  // A fence the text never closes runs to the end: the last piece must close it.
  const openAtEnd = spans.find((span) => !span.closed);
  const finalClose = openAtEnd ? `\n${closingLine(openAtEnd.fence)}` : '';

  while (true) {
    if (!carry) pos = skipSeparator(source, pos);
    if (pos >= source.length) break;
    const reopened = carry ? `${reopeningLine(carry.fence, limit)}\n` : '';
    const budget = limit - reopened.length;

    // The rest fits: the last piece (closing a fence the text left open, if it did).
    const rest = source.slice(pos);
    if (rest.length + finalClose.length <= budget) {
      pieces.push({ text: reopened + rest + finalClose, reopened, closed: finalClose });
      break;
    }

    // Never past the end: when the rest fits but for the fence that closes an unclosed block,
    // the window must end inside that block.
    const maxEnd = Math.min(pos + budget, source.length - 1);
    const cutFence = spanAround(spans, maxEnd);
    if (cutFence && shouldSplitInside(cutFence, pos, budget, limit, carry)) {
      const cut = cutInsideFence(source, cutFence, pos, budget);
      if (cut !== undefined) {
        const body = source.slice(pos, cut);
        const closed = `${body.endsWith('\n') ? '' : '\n'}${closingLine(cutFence.fence)}`;
        pieces.push({ text: reopened + body + closed, reopened, closed });
        pos = cut;
        carry = cutFence;
        continue;
      }
      if (cutFence.start <= pos) {
        throw new RangeError(
          `splitMarkdown: a code fence's opening line (${openingLine(cutFence.fence).length} characters) leaves no room for code within ${limit}`,
        );
      }
    }
    // A cut outside code: at the block before the fence, or the best boundary in the window.
    const cut = cutFence && cutFence.start > pos ? cutFence.start : bestProseCut(source, spans, pos, maxEnd, budget);
    pieces.push({ text: reopened + source.slice(pos, cut).replace(/\s+$/, ''), reopened, closed: '' });
    pos = cut;
    carry = undefined;
  }
  return pieces;
}

/**
 * The window ends inside a code block. Cut inside it only when it cannot travel whole to the
 * next piece: it was already cut (carried) or begins this piece, or it is longer than a piece
 * anyway and begins in the first half of this one. A block that fits a piece, or a long one that
 * begins late, starts the next piece instead.
 */
function shouldSplitInside(
  span: FenceSpan,
  pos: number,
  budget: number,
  limit: number,
  carry: FenceSpan | undefined,
): boolean {
  if (span === carry || span.start <= pos) return true;
  const wholeLength = span.end - span.start + (span.closed ? 0 : 1 + closingLine(span.fence).length);
  if (wholeLength <= limit) return false;
  return span.start - pos < MIN_FILL * budget;
}

/**
 * Where to cut inside a code block so that the piece plus its closing fence fits: the last line
 * break that fits, else (one line longer than a piece) as far into the line as fits. Returns
 * undefined when not even one character of code fits after the opening line.
 */
function cutInsideFence(text: string, span: FenceSpan, pos: number, budget: number): number | undefined {
  const closeLength = closingLine(span.fence).length;
  // At least one character of code in this piece: never a piece that is only an opening line.
  const lower = Math.max(pos, span.bodyStart);
  // A cut at a line start appends just the closing line; mid-line it needs a newline first.
  const lineRoom = Math.min(pos + budget - closeLength, span.bodyEnd - 1);
  const lastBreak = text.lastIndexOf('\n', lineRoom - 1);
  if (lastBreak >= 0 && lastBreak + 1 > lower) return lastBreak + 1;
  const hard = avoidSplittingPair(text, Math.min(pos + budget - closeLength - 1, span.bodyEnd - 1));
  return hard > lower ? hard : undefined;
}

/**
 * The best cut in prose between `from` and `maxEnd`, never inside a code block: a blank line or
 * block boundary, then a line break, then a sentence end, then a space, then (one very long
 * word, a URL, base64) anywhere.
 */
function bestProseCut(text: string, spans: readonly FenceSpan[], from: number, maxEnd: number, budget: number): number {
  const nearby = spans.filter((span) => span.end > from && span.start < maxEnd);
  const inCode = (p: number) => nearby.some((span) => span.start < p && p < span.end);
  const atBlockEdge = (p: number) => nearby.some((span) => span.start === p || span.end === p);
  const levels: ((p: number) => boolean)[] = [
    (p) =>
      atBlockEdge(p) || (text[p] === '\n' && (/^\n[ \t\r]*(\n|$)/.test(text.slice(p, p + 200)) || text[p + 1] === '#')),
    (p) => text[p] === '\n',
    (p) => isSpace(text[p]) && /[.!?…:;]["'’”)\]]?$/.test(text.slice(Math.max(from, p - 2), p)),
    (p) => isSpace(text[p]),
  ];
  const minCut = from + Math.ceil(MIN_FILL * budget);
  for (const isBoundary of levels) {
    for (let p = maxEnd; p >= minCut && p > from; p--) {
      if (!inCode(p) && isBoundary(p)) return p;
    }
  }
  return avoidSplittingPair(text, maxEnd);
}

/** After a cut: drop the spaces that ended the line and the blank lines that separated blocks, keep indentation. */
function skipSeparator(text: string, pos: number): number {
  let at = pos;
  if (at > 0 && text[at - 1] !== '\n') while (text[at] === ' ' || text[at] === '\t') at++;
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    const lineEnd = newline === -1 ? text.length : newline;
    if (!/^[ \t\r]*$/.test(text.slice(at, lineEnd))) break;
    at = newline === -1 ? text.length : newline + 1;
  }
  return at;
}

/**
 * The line that reopens a cut fence. It repeats the info string so highlighting carries on,
 * unless that string would eat more than a quarter of every following piece.
 */
function reopeningLine(fence: Fence, limit: number): string {
  const full = openingLine(fence);
  const bare = openingLine({ ...fence, info: '' });
  const overhead = (line: string) => line.length + closingLine(fence).length + 2;
  if (overhead(full) <= limit / 4) return full;
  if (overhead(bare) <= limit / 2) return bare;
  throw new RangeError(`splitMarkdown: a ${fence.marker.length}-character code fence does not fit pieces of ${limit}`);
}

/** Never cut between the two halves of a surrogate pair (an emoji would become two broken characters). */
function avoidSplittingPair(text: string, cut: number): number {
  const before = text.charCodeAt(cut - 1);
  return before >= 0xd800 && before <= 0xdbff ? cut - 1 : cut;
}

function isSpace(char: string | undefined): boolean {
  return char === ' ' || char === '\t';
}
