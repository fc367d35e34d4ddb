// Telling text files from binary ones, and reading text within a byte budget.
//
// One idea: a file is binary when its first 8,000 bytes hold a NUL byte (git's own
// heuristic: cheap, and right for the files an agent meets). Binary content is refused,
// never decoded: a PNG read as UTF-8 is thousands of tokens of noise.
import type { FileHandle } from 'node:fs/promises';
import type { OpenedFile } from './safe-open.js';
import { thousands } from '../text/thousands.js';

const BINARY_SNIFF_BYTES = 8000;

class BinaryFileError extends Error {
  constructor(shownPath: string, size: number) {
    super(`${shownPath} is a binary file (${thousands(size)} bytes); only text files can be read`);
    this.name = 'BinaryFileError';
  }
}

export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

export interface TextFileContent {
  text: string;
  /** The file's full size on disk, in bytes. */
  size: number;
  /** True when the file is larger than the budget and only its start was read. */
  truncated: boolean;
}

/**
 * Read at most `maxBytes` of an open, verified text file (safe-open.ts). Throws
 * `BinaryFileError` for binary files. With `strict`, bytes that are not valid UTF-8 throw
 * too: an editor that decodes them to U+FFFD and writes the file back would silently
 * corrupt it.
 */
export async function readTextFile(
  file: OpenedFile,
  shownPath: string,
  options: { maxBytes: number; strict?: boolean },
): Promise<TextFileContent> {
  const { size } = file.stats;
  const bytes = await readPrefix(file.handle, Math.min(size, options.maxBytes));
  if (looksBinary(bytes)) throw new BinaryFileError(shownPath, size);
  const truncated = size > bytes.length;
  // ignoreBOM keeps a byte-order mark in the text, so an edit writes it back unchanged.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true, fatal: options.strict === true });
  try {
    // `stream` while truncated: a character cut in half at the budget is dropped, not garbled.
    return { text: decoder.decode(bytes, { stream: truncated }), size, truncated };
  } catch {
    throw new Error(`${shownPath} is not valid UTF-8 text; it cannot be edited safely`);
  }
}

/** Up to `length` bytes from the start of an open file (fewer if it shrank meanwhile). */
export async function readPrefix(handle: FileHandle, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}
