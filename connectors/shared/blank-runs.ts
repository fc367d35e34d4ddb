// Runs of blank characters, as an approver should see them. 1,200 spaces before and after a
// payload push it off any card (a code block wraps them into screens of nothing); a run of
// no-break spaces reads as spaces and is not.
//
// The idea to hold: a collapse is a display transform that loses nothing. A run of one blank
// character past a few becomes its count and name, "⟨1,200 spaces⟩", "⟨12 line breaks⟩",
// "⟨3 × U+00A0⟩", so the text shown still says exactly what the tool receives. Only a long
// run of *different* blanks (space, tab, space, tab …) cannot be named exactly in few words:
// on a card it is summarised and the summary is marked lossy, so the call is not "shown in
// full" there and needs the full view (approval-view.ts), where only the exact collapses apply.
import { thousands } from '../../src/text/thousands.js';

/** The blank characters: ASCII space, tab and line feed, and every Unicode space separator (NBSP, U+2000–U+200A, U+3000, …). */
const BLANK_RUN = /[ \t\n\p{Zs}]+/gu;
/** A run of one character repeated: the parts a mixed run is made of. */
const SAME_CHAR_RUN = /( +|\t+|\n+|(\p{Zs})\2*)/gu;

/**
 * How long a run of one blank may be and still be shown as it is: indentation (up to 16
 * spaces), a few tabs, two blank lines. Any other Unicode space is named from two on (one is
 * left as it is: a no-break space in prose is ordinary).
 */
function keptAsIs(char: string): number {
  if (char === ' ') return 16;
  if (char === '\t') return 4;
  if (char === '\n') return 3;
  return 1;
}

/** A mixed run longer than this is summarised on a card (lossy). */
const MIXED_RUN_MAX = 32;

export interface CollapsedText {
  text: string;
  /** How many runs were collapsed (named with their count). */
  collapsed: number;
  /** A mixed run was summarised: the text no longer says exactly which blanks, in which order. */
  lossy: boolean;
}

/**
 * `text` with long runs of blanks named with their count. `mode: 'full'` collapses only runs
 * of one character (exact); `'card'` also summarises long mixed runs (marked lossy).
 */
export function collapseBlankRuns(text: string, mode: 'card' | 'full' = 'card'): CollapsedText {
  let collapsed = 0;
  let lossy = false;
  const result = text.replace(BLANK_RUN, (run) => {
    const exact = run.replace(SAME_CHAR_RUN, (same) => {
      const char = same[0]!;
      if (same.length <= keptAsIs(char)) return same;
      collapsed += 1;
      return `⟨${countOf(same.length, char)}⟩`;
    });
    const remaining = exact.replace(/⟨[^⟩]*⟩/g, '');
    if (mode === 'card' && remaining.length > MIXED_RUN_MAX) {
      lossy = true;
      collapsed += 1;
      return `⟨${thousands(run.length)} blank characters, mixed: ${mixedSummary(run)}⟩`;
    }
    return exact;
  });
  return { text: result, collapsed, lossy };
}

/** "1,200 spaces", "1 tab", "12 line breaks", "3 × U+00A0". */
function countOf(count: number, char: string): string {
  const number = thousands(count);
  if (char === ' ') return `${number} space${count === 1 ? '' : 's'}`;
  if (char === '\t') return `${number} tab${count === 1 ? '' : 's'}`;
  if (char === '\n') return `${number} line break${count === 1 ? '' : 's'}`;
  return `${number} × U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** "600 spaces, 600 tabs": how many of each blank a mixed run holds. */
function mixedSummary(run: string): string {
  const counts = new Map<string, number>();
  for (const char of run) counts.set(char, (counts.get(char) ?? 0) + 1);
  return [...counts].map(([char, count]) => countOf(count, char)).join(', ');
}
