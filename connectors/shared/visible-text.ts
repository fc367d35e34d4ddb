// Text a person can trust their eyes on. An approver reads a command or a file's content
// before clicking Approve; a character that draws nothing (a zero-width space, the Unicode tag
// block that can spell a whole hidden sentence), that reorders what is drawn (bidirectional
// overrides and isolates: "Trojan Source") or that a terminal acts on (control characters)
// lets the text on screen say one thing while another runs.
//
// The idea to hold: revealing is a display transform. Each such character is shown as its
// code point, ⟨U+202E⟩, and the card says so; the approval still covers the exact text. One
// regular expression over a character class: linear time on untrusted text.

/**
 * What is revealed: controls (C0 and C1; \n and \t stay, they draw what they are), format
 * characters (bidi marks, overrides and isolates, zero-width joiners and spaces, the BOM, the
 * tag block's tags), line and paragraph separators that are not \n, every default-ignorable
 * code point (variation selectors, Hangul fillers, U+2060–U+206F, U+E0000–U+E0FFF, …),
 * lone surrogates, private-use and unassigned code points (drawn as nothing or as a box that
 * says nothing).
 */
const HIDDEN = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Cs}\p{Co}\p{Cn}]/gu;

/** A mark the reader sees as one thing: a revealed character, ⟨U+202E⟩, or a counted run of blanks, ⟨1,200 spaces⟩ (blank-runs.ts). */
const MARK = /⟨[^⟨⟩\n]{1,300}⟩/y;
const MARK_MAX_LENGTH = 302;

export interface VisibleText {
  /** The text with every hidden character replaced by its ⟨U+XXXX⟩ mark. */
  text: string;
  /** The distinct hidden code points found, as "U+202E", in order of first appearance. */
  hidden: string[];
}

/** The text with invisible, control and direction-changing characters shown as ⟨U+XXXX⟩. */
export function revealInvisible(text: string): VisibleText {
  const hidden = new Set<string>();
  const revealed = text.replace(HIDDEN, (char) => {
    const name = codePointName(char);
    hidden.add(name);
    return `⟨${name}⟩`;
  });
  return { text: revealed, hidden: [...hidden] };
}

/** The warning a surface shows next to revealed text (listing at most `max` code points). */
export function invisibleWarning(hidden: readonly string[], max = 6): string {
  const listed = hidden.slice(0, max).join(', ');
  const more = hidden.length > max ? ` and ${hidden.length - max} more` : '';
  return `This contains invisible or direction-changing characters, shown as ⟨U+…⟩: ${listed}${more}.`;
}

/**
 * `index` moved back, if needed, so that cutting `text` there splits neither a surrogate pair
 * nor a ⟨…⟩ mark (⟨U+XXXX⟩, ⟨1,200 spaces⟩): a cut mark would read as text the model wrote.
 */
export function safeCutIndex(text: string, index: number): number {
  let cut = Math.max(0, Math.min(index, text.length));
  const before = text.charCodeAt(cut - 1);
  if (cut > 0 && cut < text.length && before >= 0xd800 && before <= 0xdbff) cut -= 1;
  const open = text.lastIndexOf('⟨', cut - 1);
  if (open >= 0 && cut - open < MARK_MAX_LENGTH) {
    MARK.lastIndex = open;
    const match = MARK.exec(text);
    if (match && open + match[0].length > cut) cut = open;
  }
  return cut;
}

/** The start and the end of a long text, and how much lies between them. */
export interface Glimpse {
  head: string;
  tail: string;
  /** Characters (UTF-16 code units) between head and tail. */
  omitted: number;
}

/**
 * The first `headChars` and last `tailChars` characters of `text` (cut where `safeCutIndex`
 * allows), or undefined when the whole text is that short. Showing the end as well as the start
 * means a payload appended to a harmless command is never the part left out.
 */
export function glimpse(text: string, headChars: number, tailChars: number): Glimpse | undefined {
  if (text.length <= headChars + tailChars) return undefined;
  const headEnd = safeCutIndex(text, headChars);
  const tailStart = Math.max(headEnd, safeCutIndex(text, text.length - tailChars));
  return { head: text.slice(0, headEnd), tail: text.slice(tailStart), omitted: tailStart - headEnd };
}

function codePointName(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
