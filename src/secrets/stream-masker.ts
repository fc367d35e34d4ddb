// Masking for text that arrives in pieces: the model's streamed answer and its reasoning. A
// secret split across two pieces (`sk-abc` then `def…`) would pass a masker that sees each
// piece alone, so each piece's end that could still become a secret is held back:
// - the longest end of the text so far that is the start of some secret's form (the search
//   automaton's open depth: usually none or a character or two of ordinary text);
// - a `%` or `%X` the next piece may complete, and trailing blanks a line break may join.
// What is let through is masked as a whole text would be; `end()` lets out the rest, masked.
// The limit: a piece that ends a secret (FRAGMENT_LENGTH or more of its last characters) is
// found only when it arrives within one release, not spread across several.
import type { SecretMasker } from './secret-masker.js';
import { replaceSpans } from './spans.js';
import { unsettledTail, viewOf } from './text-view.js';

export class StreamMasker {
  private held = '';

  constructor(private readonly masker: SecretMasker) {}

  /** Take the next piece; returns what may be shown now (possibly ''), masked. */
  push(piece: string): string {
    const text = this.held + piece;
    const settled = unsettledTail(text);
    const view = viewOf(text.slice(0, settled));
    const { spans, openDepth } = this.masker.find(view);
    let cut = openDepth === 0 ? settled : view.start[view.text.length - openDepth]!;
    // A whole match may overlap the open end (a secret that begins again as it ends): keep it whole.
    for (const [start, end] of spans) if (start < cut && end > cut) cut = start;
    this.held = text.slice(cut);
    return replaceSpans(text.slice(0, cut), spans.filter(([, end]) => end <= cut));
  }

  /** The stream is over: whatever was held back, masked. */
  end(): string {
    const rest = this.masker.mask(this.held);
    this.held = '';
    return rest;
  }
}
