// Where the fenced code blocks of a markdown text are. Chunking, table conversion and the
// Slack converter all need the same answer to "is this line code?", so one scanner gives it.
//
// The idea to hold: a fence is a line of 3+ backticks or tildes; it closes at the first line
// of the same character, at least as long, with nothing else on it; an unclosed fence runs
// to the end of the text. Everything inside is code and must reach the user byte for byte.
//
// Deliberately more lenient than CommonMark about indentation: models indent fences inside
// list items ("   ```ts"), and treating those as code is what keeps them from being mangled.

/** An opening fence line: what a piece must repeat to reopen the block, and close it with. */
export interface Fence {
  /** Leading whitespace of the opening line (a fence inside a list item is indented). */
  indent: string;
  /** The run of backticks or tildes, e.g. "```" or "~~~~". */
  marker: string;
  /** The info string after the marker, e.g. "ts" or "python title=x.py"; may be "". */
  info: string;
}

/** One fenced code block, as offsets into the scanned text. */
export interface FenceSpan {
  fence: Fence;
  /** Offset of the opening line's first character. */
  start: number;
  /** Offset of the first body line (just past the opening line's newline). */
  bodyStart: number;
  /** Offset where the body ends: the closing line's start, or the text's end if unclosed. */
  bodyEnd: number;
  /** Offset just past the closing line (before its newline), or the text's end if unclosed. */
  end: number;
  closed: boolean;
}

const OPENING = /^([ \t]*)(`{3,}|~{3,})(.*)$/;

/**
 * The fence a line opens, if it opens one. A backtick fence's info may not contain backticks (CommonMark 4.5).
 * @internal
 */
export function parseFenceOpening(line: string): Fence | undefined {
  const match = OPENING.exec(stripCarriageReturn(line));
  if (!match) return undefined;
  const [, indent = '', marker = '', rest = ''] = match;
  if (marker.startsWith('`') && rest.includes('`')) return undefined;
  return { indent, marker, info: rest.trim() };
}

/** Whether a line closes the given fence: same character, at least as long, nothing after it. */
function closesFence(line: string, fence: Fence): boolean {
  const trimmed = stripCarriageReturn(line).trim();
  const char = fence.marker.charAt(0);
  if (trimmed.length < fence.marker.length) return false;
  for (const c of trimmed) if (c !== char) return false;
  return true;
}

/** The line that reopens a fence at the start of a piece. */
export function openingLine(fence: Fence): string {
  return fence.info ? `${fence.indent}${fence.marker}${fence.info}` : `${fence.indent}${fence.marker}`;
}

/** The line that closes a fence. */
export function closingLine(fence: Fence): string {
  return `${fence.indent}${fence.marker}`;
}

/** Every fenced code block in the text, in order. */
export function scanFences(text: string): FenceSpan[] {
  const spans: FenceSpan[] = [];
  let open: { fence: Fence; start: number; bodyStart: number } | undefined;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    const next = newline === -1 ? text.length + 1 : newline + 1;
    if (open) {
      if (closesFence(line, open.fence)) {
        spans.push({ ...open, bodyEnd: lineStart, end: lineEnd, closed: true });
        open = undefined;
      }
    } else {
      const fence = parseFenceOpening(line);
      if (fence) open = { fence, start: lineStart, bodyStart: Math.min(next, text.length) };
    }
    lineStart = next;
  }
  if (open) spans.push({ ...open, bodyEnd: text.length, end: text.length, closed: false });
  return spans;
}

/** The span whose interior contains the offset (strictly after its start, strictly before its end). */
export function spanAround(spans: readonly FenceSpan[], offset: number): FenceSpan | undefined {
  return spans.find((span) => span.start < offset && offset < span.end);
}

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
