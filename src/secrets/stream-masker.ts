// Masking for text that arrives in pieces: the model's streamed answer and its reasoning. A
// secret split across two pieces (`sk-abc` then `def…`) would pass a masker that sees each
// piece alone, so each piece's end that could still become a secret is held back:
// - the longest end of the text so far that is the start of a secret as written (from one
//   character), or of an encoded form or an inner piece (from STREAM_HOLD_FROM characters);
// - a `%` or `%X` the next piece may complete (trailing blanks a line break may join are held
//   only when the text before them is such a start).
// What is let through is masked as a whole text would be; `end()` lets out the rest, masked.
// The limits: an encoded form cut within its first two characters is not masked (a secret as
// written is: its remaining pieces are found on their own), nor is a piece that ends a
// secret spread across several releases.
import { replaceSpans, type Span } from './spans.js';
import { unsettledTail, viewOf, type TextView } from './text-view.js';

/**
 * What a stream needs of the secret masker (secret-masker.ts, which makes stream maskers): the
 * secrets found in a text so far, and a whole text masked. Named here so the two files do not
 * import each other.
 */
export interface SecretFinder {
  find(view: TextView): { spans: Span[]; openDepth: number };
  mask(text: string): string;
}

export class StreamMasker {
  private held = '';

  constructor(private readonly masker: SecretFinder) {}

  /** Take the next piece; returns what may be shown now (possibly ''), masked. */
  push(piece: string): string {
    const text = this.held + piece;
    // Searched without its unsettled end, so trailing blanks do not hide that the text
    // before them is the start of a secret a line break would continue.
    const tail = unsettledTail(text);
    const view = viewOf(text.slice(0, tail.at));
    const { spans, openDepth } = this.masker.find(view);
    // Blanks after text that starts no secret go out at once (a line end stays where the model
    // put it); an unfinished escape waits.
    let cut = openDepth > 0 ? view.start[view.text.length - openDepth]! : tail.escape ? tail.at : text.length;
    // A whole match may overlap the open end (a secret that begins again as it ends): keep it whole.
    for (const [start, end] of spans) if (start < cut && end > cut) cut = start;
    this.held = text.slice(cut);
    return replaceSpans(
      text.slice(0, cut),
      spans.filter(([, end]) => end <= cut),
    );
  }

  /** The stream is over: whatever was held back, masked. */
  end(): string {
    const rest = this.masker.mask(this.held);
    this.held = '';
    return rest;
  }
}
