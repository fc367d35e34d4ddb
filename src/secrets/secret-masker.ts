// SecretMasker: replaces every configured secret with `[secret]` in any text, before that text
// can leave the process (to the model, the transcript, the thread or the logs). The one idea:
// it matches values, not shapes, in every form a value takes in the text that leaves (see
// secret-forms.ts: as written, JSON-escaped, percent-encoded in any case, hex, base64 and
// base64url, also inside a longer encoded blob), wherever a line break or a percent-escape
// falls inside it (text-view.ts). Pieces of a secret's own text are masked too: a run of
// FRAGMENT_LENGTH or more characters that starts or ends it (the piece left at the edge of a
// result that cut a secret in two: a middle-trimmed output, `head -c`, and the other piece in
// the next), and any INNER_PIECE_LENGTH or more from its middle (`cut -c`, a dump's text
// column). Shorter pieces from the middle are not: they would too often be ordinary words of
// a passphrase.
//
// One pass finds all forms of all secrets (pattern-automaton.ts), plus one backwards for the
// pieces that end a secret: linear in the text, whatever the number of secrets.
import { PatternAutomaton, type Pattern } from './pattern-automaton.js';
import { formsOf } from './secret-forms.js';
import { MIN_SECRET_LENGTH } from './secret-values.js';
import { mergedSpans, replaceSpans, SECRET_MASK, type Span } from './spans.js';
import { StreamMasker } from './stream-masker.js';
import { viewOf, type TextView } from './text-view.js';

/**
 * The shortest piece of a secret's start or end that is masked on its own.
 * @internal
 */
export const FRAGMENT_LENGTH = 8;

/**
 * The shortest piece from anywhere inside a secret that is masked on its own.
 * @internal
 */
export const INNER_PIECE_LENGTH = 12;

/**
 * A stream holds back a delta's end that could start an encoded form or an inner piece only
 * from this many characters on: one or two could nearly always (every letter starts some
 * base64), and an answer stalled mid-stream would hide its last word. A secret's own start is
 * held from its first character; pieces of the rest are masked all the same.
 */
const STREAM_HOLD_FROM = 3;

interface Searchers {
  /** Every form of every secret, its starts from FRAGMENT_LENGTH on, its inner pieces of INNER_PIECE_LENGTH. */
  forward: PatternAutomaton;
  /** Each secret reversed, found from FRAGMENT_LENGTH on: the ends of secrets, read backwards. */
  backward: PatternAutomaton;
}

export class SecretMasker {
  private readonly values = new Set<string>();
  private searchers: Searchers | null = null;

  constructor(values: Iterable<string> = []) {
    this.add(values);
  }

  /**
   * Learn more secret values. The configuration is read in stages at start-up (the settings
   * first, the MCP file later, by the core), while the logger that must mask them already
   * runs: so one masker grows, and everything holding it masks the new values at once.
   */
  add(values: Iterable<string>): this {
    for (const value of values) {
      // Too short to be a secret (see MIN_SECRET_LENGTH); a piece of the mask itself would
      // mask its own output again (`[[secret]]`).
      if (value.length < MIN_SECRET_LENGTH || SECRET_MASK.includes(value) || this.values.has(value)) continue;
      this.values.add(value);
      this.searchers = null;
    }
    return this;
  }

  /** How many distinct search strings are masked (each secret has several forms). */
  get size(): number {
    return this.values.size === 0 ? 0 : this.compiled().forward.size;
  }

  /** The text with every secret replaced by `[secret]`. Bound: pass it around as a function. */
  readonly mask = (text: string): string => {
    if (this.values.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    return replaceSpans(text, this.find(viewOf(text)).spans);
  };

  /**
   * A masker for text that arrives in pieces (the model's streamed answer): a secret split
   * across two pieces is still masked, because the end of each piece that could be the start
   * of a secret is held back until the next piece (or the end) says. Bound, like `mask`.
   */
  readonly streamMask = (): StreamMasker => new StreamMasker(this);

  /** A copy of `value` with every string in it masked (plain objects, arrays, errors). */
  maskDeep<T>(value: T): T {
    return this.values.size === 0 ? value : (this.walk(value, new WeakMap()) as T);
  }

  /**
   * Where secrets occur in the text behind `view`, as merged [start, end) spans of the
   * original text in order (a secret inside another, or two overlapping, are masked whole:
   * no remainder of either is left in the clear), and how many of the view's last characters
   * could be the start of a secret (`openDepth`).
   */
  find(view: TextView): { spans: Span[]; openDepth: number } {
    if (this.values.size === 0) return { spans: [], openDepth: 0 };
    const { forward, backward } = this.compiled();
    const ahead = forward.run(view.text);
    const behind = backward.run(view.text, true);
    const found = ahead.matches
      .concat(behind.matches)
      .map(([start, end]): Span => [view.start[start]!, view.end[end - 1]!]);
    return { spans: mergedSpans(found), openDepth: ahead.openDepth };
  }

  private compiled(): Searchers {
    if (this.searchers) return this.searchers;
    const forward: Pattern[] = [];
    const backward: Pattern[] = [];
    for (const value of this.values) {
      const plain = viewOf(value).text;
      for (const form of formsOf(value)) forward.push({ text: form, holdFrom: form === plain ? 1 : STREAM_HOLD_FROM });
      if (plain.length > FRAGMENT_LENGTH) {
        forward.push({ text: plain, foundFrom: FRAGMENT_LENGTH });
        backward.push({ text: plain.split('').reverse().join(''), foundFrom: FRAGMENT_LENGTH });
      }
      // A longer piece is found as overlapping ones, merged into one span.
      for (let at = 1; at + INNER_PIECE_LENGTH < plain.length; at++) {
        forward.push({ text: plain.slice(at, at + INNER_PIECE_LENGTH), holdFrom: STREAM_HOLD_FROM });
      }
    }
    this.searchers = { forward: new PatternAutomaton(forward), backward: new PatternAutomaton(backward) };
    return this.searchers;
  }

  private walk(value: unknown, seen: WeakMap<object, unknown>): unknown {
    if (typeof value === 'string') return this.mask(value);
    if (value === null || typeof value !== 'object') return value;
    const known = seen.get(value);
    if (known !== undefined) return known;
    if (value instanceof Error) {
      const copy = new Error(this.mask(value.message));
      copy.name = value.name;
      copy.stack = value.stack === undefined ? undefined : this.mask(value.stack);
      seen.set(value, copy);
      return copy;
    }
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      seen.set(value, copy);
      for (const item of value) copy.push(this.walk(item, seen));
      return copy;
    }
    const prototype = Object.getPrototypeOf(value) as unknown;
    // A Date, a URL, a Buffer…: not walked (their text is not in their own properties).
    if (prototype !== Object.prototype && prototype !== null) return value;
    const copy: Record<string, unknown> = {};
    seen.set(value, copy);
    for (const [key, item] of Object.entries(value)) copy[key] = this.walk(item, seen);
    return copy;
  }
}
