// The byte check attach_file runs on what it posts: a value is found wherever it sits in a
// large file, an edge between the windows it reads in included, and the bot keeps serving
// other events while it reads.
import { describe, expect, it } from 'vitest';
import { holdsSecret } from '../../src/files/secret-bytes.js';
import { SecretMasker } from '../../src/secrets/index.js';

const SECRET = 'sk-live-4f9a8b7c6d5e4f3a2b1c';
const masker = new SecretMasker([SECRET]);
const MiB = 1024 * 1024;

function filler(size: number): Buffer {
  return Buffer.alloc(size, 'lorem ipsum dolor sit amet ');
}

describe('holdsSecret', () => {
  it('finds a value astride each edge between the windows it reads, in plain and base64 form, and none in clean bytes', async () => {
    for (const form of [SECRET, Buffer.from(SECRET).toString('base64')]) {
      for (const edge of [MiB, 2 * MiB, 3 * MiB]) {
        const bytes = filler(4 * MiB);
        bytes.write(form, edge - Math.floor(form.length / 2), 'latin1');
        expect(await holdsSecret(bytes, masker.mask), `${form} at ${edge}`).toBe(true);
      }
    }
    expect(await holdsSecret(filler(4 * MiB), masker.mask)).toBe(false);
  });

  it('gives the event loop a turn while it reads a large file, and stops when asked', async () => {
    const bytes = filler(8 * MiB);
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      await holdsSecret(bytes, masker.mask);
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0);

    const controller = new AbortController();
    setImmediate(() => controller.abort(new Error('stopped')));
    await expect(holdsSecret(bytes, masker.mask, undefined, controller.signal)).rejects.toThrow('stopped');
  });
});
