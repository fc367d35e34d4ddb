// SecretMasker: replaces the exact value of every configured secret with `[secret]` in any
// text, before that text can leave the process (to the model, the transcript, the thread or
// the logs). The one idea: it matches values, not shapes, and every form a value takes in
// the text that leaves — raw, JSON-escaped (a tool result or a log line is JSON, and a JSON
// string inside it is escaped twice), percent-encoded (a URL a tool prints).
//
// Matching is plain substring search (no regular expression built from the values): linear
// in the text for each form, so a fixed handful of secrets costs a few scans of a tool's
// output, whatever the output holds.
import { MIN_SECRET_LENGTH } from './secret-values.js';

export const SECRET_MASK = '[secret]';

export class SecretMasker {
  private readonly forms = new Set<string>();

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
      if (value.length < MIN_SECRET_LENGTH || SECRET_MASK.includes(value)) continue;
      for (const form of formsOf(value)) this.forms.add(form);
    }
    return this;
  }

  /** How many distinct forms are masked (a value with escapes counts more than once). */
  get size(): number {
    return this.forms.size;
  }

  /** The text with every secret replaced by `[secret]`. Bound: pass it around as a function. */
  readonly mask = (text: string): string => {
    if (this.forms.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    const spans = this.occurrences(text);
    if (spans.length === 0) return text;
    let masked = '';
    let at = 0;
    for (const [start, end] of spans) {
      masked += text.slice(at, start) + SECRET_MASK;
      at = end;
    }
    return masked + text.slice(at);
  };

  /** A copy of `value` with every string in it masked (plain objects, arrays, errors). */
  maskDeep<T>(value: T): T {
    return this.forms.size === 0 ? value : (this.walk(value, new WeakMap()) as T);
  }

  /**
   * Where secrets occur, as merged [start, end) spans in text order. Overlapping or adjacent
   * matches merge into one span, so a secret that contains another, or two that overlap,
   * are masked whole: no remainder of either is left in the clear.
   */
  private occurrences(text: string): [number, number][] {
    const found: [number, number][] = [];
    for (const form of this.forms) {
      for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) found.push([at, at + form.length]);
    }
    if (found.length <= 1) return found;
    found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const merged: [number, number][] = [found[0]!];
    for (const [start, end] of found.slice(1)) {
      const last = merged.at(-1)!;
      if (start <= last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end]);
    }
    return merged;
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

/** The forms a value takes in text that leaves: raw, JSON-escaped once and twice, percent-encoded. */
function formsOf(value: string): string[] {
  const once = JSON.stringify(value).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [...new Set([value, once, twice, encodeURIComponent(value)])];
}
