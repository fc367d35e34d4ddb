// How the engine masks what leaves it (the app's secrets' values become a placeholder): a
// mask for a whole text, and a stream mask for text that arrives in pieces.

/** Rewrites tool output before it leaves the engine (the app masks its secrets' values). */
export type OutputMask = (text: string) => string;

/** Masks text that arrives in pieces: `push` returns what may be shown now, `end` the rest. */
export interface StreamMask {
  push(text: string): string;
  end(): string;
}

/** A stream mask for a mask with no memory: each piece is masked alone. */
export function piecewise(mask: OutputMask): () => StreamMask {
  return () => ({ push: mask, end: () => '' });
}
