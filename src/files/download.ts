// One download of a shared file: its bytes streamed from the platform's source into the file
// being saved, counted against a cap as they come (never buffered whole), and refused when a
// web page comes where a file was expected (Slack's sign-in page when a token is missing), so
// such a page is never kept as the file. Each attempt has a deadline of its own; whether to
// try again is the intake's decision (intake.ts).
import { Readable } from 'node:stream';
import type { IncomingFile } from '../engine/index.js';
import type { WrittenFile } from '../tools/folder-writer.js';
import { declaresHtml, looksLikeHtml, SNIFF_BYTES } from './file-kind.js';
import { formatBytes } from './sizes.js';
import { FileTransferError, type FileSource } from './transfer.js';

/** What one attempt brought: the first bytes (to judge the file by), the size, and a name only the download could tell. */
export interface DownloadedFile {
  first: Uint8Array;
  size: number;
  name?: string;
}

/** One attempt: the bytes stream into the file (emptied first), counted against `limit`. */
export async function downloadOnce(
  source: FileSource,
  file: IncomingFile,
  saving: WrittenFile,
  limit: number,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<DownloadedFile> {
  await saving.truncate();
  // Not AbortSignal.any([signal, AbortSignal.timeout(ms)]): on Node 20 the timeout signal is
  // held only weakly there, and a garbage collection before it fires drops it, so a stalled
  // download never timed out (a Node bug; the stall test hung when the heap was collected
  // mid-download). A timer of our own holds its controller until it is cleared.
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The download took too long', 'TimeoutError')),
    timeoutMs,
  );
  try {
    return await downloadWithin(AbortSignal.any([signal, deadline.signal]), source, file, saving, limit);
  } finally {
    clearTimeout(timer);
  }
}

async function downloadWithin(
  attempt: AbortSignal,
  source: FileSource,
  file: IncomingFile,
  saving: WrittenFile,
  limit: number,
): Promise<DownloadedFile> {
  const expectsHtml = declaresHtml(file.name, file.mimeType);
  const opened = await source.open(file, attempt);
  if (!expectsHtml && (opened.contentType ?? '').toLowerCase().startsWith('text/html')) throw signInPage();
  if (opened.size !== undefined && opened.size > limit)
    throw new FileTransferError(
      `not fetched: ${formatBytes(opened.size)} is over the ${formatBytes(limit)} it may be`,
      false,
    );
  const body =
    opened.body instanceof ReadableStream
      ? Readable.fromWeb(opened.body as import('node:stream/web').ReadableStream)
      : opened.body;
  let size = 0;
  const head: Uint8Array[] = [];
  let headBytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      attempt.throwIfAborted();
      size += chunk.byteLength;
      if (size > limit)
        throw new FileTransferError(`not fetched: it is larger than the ${formatBytes(limit)} it may be`, false);
      if (headBytes < SNIFF_BYTES) {
        head.push(chunk);
        headBytes += chunk.byteLength;
        if (!expectsHtml && headBytes >= 64 && looksLikeHtml(Buffer.concat(head))) throw signInPage();
      }
      await saving.write(chunk);
    }
  } finally {
    if (body instanceof Readable) body.destroy();
  }
  const first = Buffer.concat(head).subarray(0, SNIFF_BYTES);
  if (!expectsHtml && looksLikeHtml(first)) throw signInPage();
  if (attempt.aborted) throw attempt.reason instanceof Error ? attempt.reason : new Error('the download was stopped');
  return { first, size, ...(opened.name ? { name: opened.name } : {}) };
}

function signInPage(): FileTransferError {
  return new FileTransferError(
    'not saved: the download gave a web page instead of the file (a sign-in page: the bot may lack the files:read permission)',
    false,
  );
}
