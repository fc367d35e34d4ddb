// HTML reduced to readable text, roughly: what a person would read on the page, without
// markup, scripts or styles, with its paragraphs kept as line breaks.
//
// One idea: one forward pass, in time linear in the page. The page is cut into tokens by
// htmlparser2's Tokenizer (a state machine that looks at each character once), and each
// token updates a few flags here: inside an invisible element or not, inside <title> or not.
// No element stack and no regular expression over the page. The old regex pass took
// quadratic time on unclosed tags (a 128 KiB page blocked the event loop for 4.1 s, and a
// 2 MiB one would have for about 17 minutes). htmlparser2's own Parser is not used either:
// its element stack (Array#unshift per open tag, indexOf per close tag) is quadratic too
// (measured: 960 KB of `<div>`s then `</span>`s took 3.8 s).
//
// `htmlToTextAsync` feeds the page in slices and yields to the event loop between them, so
// even a hostile 2 MiB page holds the loop for milliseconds at a time, and a stop ends the
// work.
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/** Elements whose content is never part of the readable page. */
const INVISIBLE = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object']);

/** Elements whose start and end are line breaks. */
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'nav',
  'aside',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'caption',
  'pre',
  'blockquote',
  'figure',
  'figcaption',
  'form',
  'fieldset',
  'dl',
  'dt',
  'dd',
  'details',
  'summary',
  'address',
]);

/**
 * `htmlToTextAsync` handles this many characters per turn of the event loop: about 3 ms
 * of the most hostile markup (a tag every three characters) on a 2-core machine.
 */
const SLICE_CHARS = 64 * 1024;

export interface PageText {
  title?: string;
  text: string;
}

/**
 * The readable text of a page, in one synchronous pass. Linear, but a 2 MiB page of hostile
 * markup still takes tens of milliseconds: where the event loop matters, use
 * `htmlToTextAsync`.
 * @internal
 */
export function htmlToText(html: string): PageText {
  const reader = new PageReader(html);
  reader.write(html);
  reader.tidy(reader.endOfPage());
  return reader.result();
}

/**
 * The readable text of a page, a slice at a time with a turn of the event loop between
 * slices. Throws the signal's reason if it is aborted meanwhile.
 */
export async function htmlToTextAsync(html: string, signal?: AbortSignal): Promise<PageText> {
  const reader = new PageReader(html);
  for (let start = 0; start < html.length; start += SLICE_CHARS) {
    if (start > 0) await nextTurn();
    signal?.throwIfAborted();
    // Token positions are offsets into the whole page, so a tag cut by a slice boundary
    // is still read from `html` in one piece.
    reader.write(html.slice(start, start + SLICE_CHARS));
  }
  // The end of the page can release a long stretch at once (an unclosed <title> holds
  // everything after it): it is tidied in slices too.
  const rest = reader.endOfPage();
  for (let start = 0; start < rest.length; start += SLICE_CHARS) {
    await nextTurn();
    signal?.throwIfAborted();
    reader.tidy(rest.slice(start, start + SLICE_CHARS));
  }
  signal?.throwIfAborted();
  return reader.result();
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Token callbacks that build the page's text; each does constant work per token. */
class PageReader implements TokenizerCallbacks {
  private readonly tokenizer: Tokenizer;
  /** Text read since the last `write`, not tidied yet. */
  private readonly parts: string[] = [];
  private readonly text = new TextTidier();
  /** The text of the <title> being read, or null outside one. */
  private titleParts: string[] | null = null;
  private title: string | undefined;
  /** The invisible element we are inside, and how many of its kind are open. */
  private hidden: { name: string; depth: number } | null = null;
  /** The name of the tag whose attributes are being read. */
  private openingTag = '';
  private ending = false;

  constructor(private readonly html: string) {
    this.tokenizer = new Tokenizer({ decodeEntities: true }, this);
  }

  write(slice: string): void {
    this.tokenizer.write(slice);
    this.tidy(this.takeParts());
  }

  /** Ends the tokens; returns the text they still held, for `tidy`. */
  endOfPage(): string {
    this.ending = true;
    this.tokenizer.end();
    // An unclosed <title> swallowed the rest of the page: give that back as text.
    if (this.titleParts !== null) {
      if (this.hidden === null) this.parts.push(...this.titleParts);
      this.titleParts = null;
    }
    return this.takeParts();
  }

  tidy(text: string): void {
    this.text.write(text);
  }

  result(): PageText {
    const text = this.text.result();
    return this.title ? { title: this.title, text } : { text };
  }

  ontext(start: number, endIndex: number): void {
    // At the end, the tokenizer hands back what it was still inside as text. A comment,
    // declaration or processing instruction never closed is a comment to the end of the
    // page, as a browser reads it, not text.
    if (this.ending && this.followsUnclosedMarkup(start)) return;
    this.addText(this.html.slice(start, endIndex));
  }

  ontextentity(codepoint: number): void {
    // The decoder has already replaced NUL, surrogates and out-of-range values with U+FFFD.
    this.addText(String.fromCodePoint(codepoint));
  }

  onopentagname(start: number, endIndex: number): void {
    this.openingTag = this.html.slice(start, endIndex).toLowerCase();
  }

  onopentagend(): void {
    this.opened(this.openingTag, false);
  }

  onselfclosingtag(): void {
    this.opened(this.openingTag, true);
  }

  onclosetag(start: number, endIndex: number): void {
    this.closed(this.html.slice(start, endIndex).toLowerCase());
  }

  // Attributes, comments, declarations, CDATA and processing instructions are never read.
  onattribdata(): void {}
  onattribentity(): void {}
  onattribend(): void {}
  onattribname(): void {}
  oncdata(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
  onend(): void {}

  /**
   * Whether text left at the end starts inside `<!…`, `<?…` or `</` + a non-letter: the
   * tokenizer starts such text just after the `<!` or `<?`, or after `</` and spaces.
   */
  private followsUnclosedMarkup(start: number): boolean {
    const before = this.html.charCodeAt(start - 1);
    if ((before === BANG || before === QUESTION) && this.html.charCodeAt(start - 2) === LT) return true;
    let at = start - 1;
    while (at >= 0 && isSpace(this.html.charCodeAt(at))) at--;
    return this.html.charCodeAt(at) === SLASH && this.html.charCodeAt(at - 1) === LT;
  }

  private takeParts(): string {
    const text = this.parts.join('');
    this.parts.length = 0;
    return text;
  }

  private addText(text: string): void {
    if (this.titleParts !== null) this.titleParts.push(text);
    else if (this.hidden === null) this.parts.push(text);
  }

  private opened(name: string, selfClosing: boolean): void {
    // The page's title is read even inside <head>, which is otherwise invisible; a <title>
    // inside an <svg> is an icon's tooltip, not the page's.
    if (
      name === 'title' &&
      !selfClosing &&
      this.title === undefined &&
      (this.hidden === null || this.hidden.name === 'head')
    ) {
      this.titleParts = [];
      return;
    }
    if (this.hidden !== null) {
      // <body> ends a <head> left open, as a browser would.
      if (this.hidden.name === 'head' && name === 'body') this.hidden = null;
      else if (name === this.hidden.name && !selfClosing) this.hidden.depth++;
      return;
    }
    if (INVISIBLE.has(name)) {
      // Unclosed, it runs to the end of the page, as a browser would treat it.
      if (!selfClosing) this.hidden = { name, depth: 1 };
      this.parts.push(' ');
    } else if (name === 'br') this.parts.push('\n');
    else if (name === 'hr') this.parts.push('\n---\n');
    else if (name === 'li') this.parts.push('\n- ');
    else if (BLOCK.has(name)) this.parts.push('\n');
  }

  private closed(name: string): void {
    if (name === 'title' && this.titleParts !== null) {
      const tidied = new TextTidier({ lines: false });
      tidied.write(this.titleParts.join(''));
      this.title = tidied.result() || undefined;
      this.titleParts = null;
      return;
    }
    if (this.hidden !== null) {
      if (name === this.hidden.name && --this.hidden.depth === 0) this.hidden = null;
      return;
    }
    // One line per table row: a cell's end is a gap, only the row's end breaks the line.
    if (name === 'td' || name === 'th') this.parts.push(' \t');
    else if (name === 'tr' || name === 'br') this.parts.push('\n');
    else if (BLOCK.has(name)) this.parts.push('\n');
  }
}

const LT = 0x3c;
const BANG = 0x21;
const QUESTION = 0x3f;
const SLASH = 0x2f;

/**
 * Text tidied as it comes, a character at a time: each run of spaces within a line becomes
 * one space, lines are trimmed, at most one blank line is kept in a row, and none at either
 * end. Written as a loop rather than regular expressions so it is plainly linear and works
 * on any slice of the text: a run of spaces or a line may straddle two writes. With
 * `lines: false` line breaks count as spaces (a title).
 */
class TextTidier {
  /** Tidied text, one piece per `write`: joining a few pieces at the end is cheap. */
  private readonly pieces: string[] = [];
  private anyContent = false;
  /** Line breaks and spaces seen since the last visible character. */
  private breaks = 0;
  private space = false;

  constructor(private readonly options: { lines: boolean } = { lines: true }) {}

  write(text: string): void {
    let piece = '';
    let runStart = -1;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const isBreak = code === 0x0a && this.options.lines;
      if (isBreak || isSpace(code)) {
        if (runStart !== -1) {
          piece += text.slice(runStart, i);
          runStart = -1;
        }
        if (isBreak) this.breaks++;
        else this.space = true;
      } else if (runStart === -1) {
        if (this.anyContent) piece += this.breaks >= 2 ? '\n\n' : this.breaks === 1 ? '\n' : this.space ? ' ' : '';
        this.anyContent = true;
        this.breaks = 0;
        this.space = false;
        runStart = i;
      }
    }
    if (runStart !== -1) piece += text.slice(runStart);
    if (piece !== '') this.pieces.push(piece);
  }

  result(): string {
    return this.pieces.join('');
  }
}

/** What String#trim removes, except the line feed: white space and line terminators. */
function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}
