// Whether a file's bytes hold a configured secret value, in any form the masker knows: the
// check attach_file runs on what it posts, and on what it reads out of a compressed file.
//
// A file may be tens of megabytes (a 64 MiB spreadsheet, inflated) and the masker reads a few
// million characters a second, so one pass over it would hold the event loop for seconds: no
// click, no 🛑, no other thread would be served. The bytes are read in windows instead, with
// a turn of the event loop between them. Windows overlap by far more than any form of a value
// is long, so a value that straddles one edge lies whole inside the next window.
import { isAscii } from 'node:buffer';

const WINDOW_BYTES = 1024 * 1024;
const OVERLAP_BYTES = 64 * 1024;

export type ByteReading = 'latin1' | 'utf8';

/** True when `bytes` hold a secret value that `mask` would hide, read as each of `readings`. */
export async function holdsSecret(
  bytes: Buffer,
  mask: (text: string) => string,
  readings: readonly ByteReading[] = ['latin1', 'utf8'],
  signal?: AbortSignal,
): Promise<boolean> {
  for (let start = 0; start < bytes.length; start += WINDOW_BYTES) {
    if (start > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
    const window = bytes.subarray(Math.max(0, start - OVERLAP_BYTES), Math.min(bytes.length, start + WINDOW_BYTES));
    if (windowHoldsSecret(window, mask, readings)) return true;
  }
  return false;
}

function windowHoldsSecret(bytes: Buffer, mask: (text: string) => string, readings: readonly ByteReading[]): boolean {
  // latin1 maps each byte to one character, so a value in its plain or an encoded ASCII form,
  // or its UTF-8 or UTF-16 bytes, is found wherever it sits; utf8 finds a value with characters
  // past ASCII written as text. Bytes that are all ASCII read the same both ways: once is enough.
  const used = readings.length > 1 && isAscii(bytes) ? readings.slice(0, 1) : readings;
  return used.some((reading) => {
    const text = bytes.toString(reading);
    return mask(text) !== text;
  });
}
