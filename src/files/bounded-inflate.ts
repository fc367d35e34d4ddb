// Inflating a compressed stream (raw deflate as a zip stores it, gzip, zlib) with a hard cap on
// the bytes it may produce: a few KB of compressed zeros inflate to gigabytes, so the inflater is
// stopped as soon as its output passes the cap, not after. It streams (node:zlib works off the
// event loop, chunk by chunk) and counts each chunk as it comes, so what was inflated before the
// stop is at most the cap plus one chunk.
import { createGunzip, createInflate, createInflateRaw, type Gunzip, type Inflate, type InflateRaw } from 'node:zlib';

export type CompressedStream = 'deflate' | 'gzip' | 'zlib';

/**
 * How many bytes the inflater hands over at a time: what may be inflated past a cap before it stops.
 * @internal
 */
export const INFLATE_CHUNK_BYTES = 64 * 1024;

export type Inflated =
  /** The whole stream; `consumed` is how many input bytes it took (fewer than given: bytes after its end). */
  | { complete: true; bytes: Buffer; consumed: number }
  /** Stopped: its output passed the cap after `inflated` bytes. */
  | { complete: false; inflated: number };

/**
 * Inflates `input` up to `cap` bytes. Rejects with the inflater's error on data that is not a
 * valid stream of that kind (or ends too soon), and with the signal's reason when it is aborted.
 * `onChunk` hears every chunk's length as it is produced (the caller's running count).
 */
export function inflateBounded(
  kind: CompressedStream,
  input: Buffer,
  cap: number,
  options: { signal?: AbortSignal; onChunk?: (bytes: number) => void } = {},
): Promise<Inflated> {
  const { signal, onChunk } = options;
  return new Promise((resolve, reject) => {
    const stopped = () => (signal?.reason instanceof Error ? signal.reason : new Error('stopped'));
    if (signal?.aborted) return reject(stopped());
    const inflater = inflaterFor(kind);
    const chunks: Buffer[] = [];
    let inflated = 0;
    const settle = (finish: () => void) => {
      signal?.removeEventListener('abort', onAbort);
      finish();
    };
    const onAbort = () => {
      inflater.destroy();
      settle(() => reject(stopped()));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    inflater.on('data', (chunk: Buffer) => {
      inflated += chunk.length;
      onChunk?.(chunk.length);
      if (inflated > cap) {
        // Destroying stops zlib between chunks: it checks for it before inflating the next one.
        inflater.destroy();
        settle(() => resolve({ complete: false, inflated }));
        return;
      }
      chunks.push(chunk);
    });
    inflater.on('end', () =>
      settle(() =>
        resolve({ complete: true, bytes: Buffer.concat(chunks, inflated), consumed: inflater.bytesWritten }),
      ),
    );
    inflater.on('error', (error) => settle(() => reject(error)));
    inflater.end(input);
  });
}

function inflaterFor(kind: CompressedStream): InflateRaw | Gunzip | Inflate {
  const options = { chunkSize: INFLATE_CHUNK_BYTES };
  if (kind === 'gzip') return createGunzip(options);
  if (kind === 'zlib') return createInflate(options);
  return createInflateRaw(options);
}
