// Label values that cannot grow without bound. A Prometheus series is kept for every distinct
// set of label values, forever (until the process ends), so a label fed from anything open
// ended (an MCP server's tool names, a model a config names, a platform's method) gets a cap:
// the first `max` distinct values keep their own series, every later one is counted as
// `other`. Values are also clipped and reduced to a plain alphabet, so a label can never carry
// a sentence (no label value here ever comes from what a person wrote; this is a second lock).

/**
 * What a value past the cap, or an empty one, is counted as.
 * @internal
 */
export const OTHER = 'other';

const MAX_VALUE_CHARS = 80;

export class BoundedLabel {
  private readonly seen = new Set<string>();
  /** Raw value → label value, so the hot path (every model and tool call) does no string work. Bounded too. */
  private readonly memo = new Map<string, string>();

  constructor(
    readonly max: number,
    /** Applied to a raw value before it is cleaned (e.g. `openai:gpt-4.1` → `gpt-4.1`). */
    private readonly transform: (value: string) => string = (value) => value,
  ) {}

  /** `value` when it is known or there is room for it; `other` past the cap. */
  of(value: string | undefined): string {
    if (value === undefined) return OTHER;
    const known = this.memo.get(value);
    if (known !== undefined) return known;
    const clean = cleanLabelValue(this.transform(value));
    let label = clean;
    if (!this.seen.has(clean)) {
      if (this.seen.size >= this.max) label = OTHER;
      else this.seen.add(clean);
    }
    // Raw values that clean to the same label may each be remembered, up to a bound.
    if (this.memo.size < this.max * 4) this.memo.set(value, label);
    return label;
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
 * @internal
 */
export function cleanLabelValue(value: string | undefined): string {
  if (!value) return OTHER;
  const clean = value.slice(0, MAX_VALUE_CHARS).replace(/[^\w .:/@+-]/g, '_');
  return clean || OTHER;
}
