// Spans of a text to mask: merging the matches a search found, and writing the text with
// each span replaced by the mask.

export const SECRET_MASK = '[secret]';

/** [start, end) of a text. */
export type Span = [number, number];

/** `text` with each span (sorted, disjoint) replaced by the mask. */
export function replaceSpans(text: string, spans: readonly Span[]): string {
  if (spans.length === 0) return text;
  let masked = '';
  let at = 0;
  for (const [start, end] of spans) {
    masked += text.slice(at, start) + SECRET_MASK;
    at = end;
  }
  return masked + text.slice(at);
}

/** Spans sorted by start, overlapping or touching ones merged into one. */
export function mergedSpans(found: Span[]): Span[] {
  if (found.length <= 1) return found;
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: Span[] = [found[0]!];
  for (const [start, end] of found.slice(1)) {
    const last = out.at(-1)!;
    if (start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}
