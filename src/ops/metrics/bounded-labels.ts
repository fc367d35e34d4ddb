// Label values that cannot grow without bound. A Prometheus series is kept for every distinct
// set of label values, forever (until the process ends), so a label fed from anything open
// ended (an MCP server's tool names, a model a config names, a platform's method) gets a cap:
// the first `max` distinct values keep their own series, every later one is counted as
// `other`. Values are also clipped and reduced to a plain alphabet, so a label can never carry
// a sentence (no label value here ever comes from what a person wrote; this is a second lock).

/** What a value past the cap, or an empty one, is counted as. */
export const OTHER = 'other';

const MAX_VALUE_CHARS = 80;

export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(readonly max: number) {}

  /** `value` when it is known or there is room for it; `other` past the cap. */
  of(value: string | undefined): string {
    const clean = cleanLabelValue(value);
    if (this.seen.has(clean)) return clean;
    if (this.seen.size >= this.max) return OTHER;
    this.seen.add(clean);
    return clean;
  }

  /** How many distinct values have a series of their own (tests). */
  get size(): number {
    return this.seen.size;
  }
}

/**
 * A label value reduced to letters, digits, spaces and `_ . : / - @ +` (an MCP tool's name, a model
 * id, `chat.postMessage`, a route `POST /channels/:id/messages`), at most 80 characters.
 * Anything else becomes `_`; nothing at all becomes `other`.
 */
export function cleanLabelValue(value: string | undefined): string {
  if (!value) return OTHER;
  const clean = value.slice(0, MAX_VALUE_CHARS).replace(/[^\w .:/@+-]/g, '_');
  return clean || OTHER;
}
