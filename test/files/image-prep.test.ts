// An image shared in a thread, before it becomes an image part: one within the providers'
// limits goes as it is; a large or heavy one gets a copy that fits (long edge ≤ 1568 px,
// ≤ 3.75 MiB raw, so its base64 fits Anthropic's 5 MB); an animated one goes as its first
// frame; a file that only claims to be an image, a broken one, a decompression bomb or one of
// more pixels than MAX_IMAGE_PIXELS is `unreadable` with a reason a person can read. Images
// are prepared one at a time, people taking turns.
import { execFileSync } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_LIMITS, prepareImageForModel, sniffImageType, type PreparedImage } from '../../src/files/image-prep.js';
import {
  writeAnimatedGif,
  writeFlatPng,
  writeJpeg,
  writeNoisePng,
  writePng,
  writePngBomb,
  writeTextPdf,
  writeTruncatedPng,
} from '../support/file-fixtures.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'image-prep-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The copy's file, checked against what the result says of it and against every limit. */
async function checkCopy(
  result: PreparedImage,
): Promise<{ path: string; bytes: number; width: number; height: number; format: string; hasAlpha: boolean }> {
  if (result.kind !== 'copy') throw new Error(`expected a copy, got ${JSON.stringify(result)}`);
  const bytes = await readFile(result.path);
  const metadata = await sharp(bytes).metadata();
  expect(sniffImageType(bytes.subarray(0, 12))).toBe(result.mimeType);
  expect({ width: metadata.width, height: metadata.height }).toEqual({ width: result.width, height: result.height });
  expect(bytes.length).toBeLessThanOrEqual(IMAGE_LIMITS.maxBytes);
  // What Anthropic measures: the base64 text, at most 5 MB.
  expect(bytes.toString('base64').length).toBeLessThanOrEqual(5 * 1024 * 1024);
  expect(Math.max(metadata.width, metadata.height)).toBeLessThanOrEqual(IMAGE_LIMITS.maxLongEdge);
  return {
    path: result.path,
    bytes: bytes.length,
    width: metadata.width,
    height: metadata.height,
    format: metadata.format,
    hasAlpha: metadata.hasAlpha,
  };
}

describe('sniffImageType: the first bytes decide, not the name', () => {
  it('knows PNG, JPEG, GIF and WebP as sharp encodes them', async () => {
    const base = sharp({ create: { width: 4, height: 4, channels: 3, background: 'teal' } });
    const head = async (image: Sharp): Promise<Uint8Array> => (await image.toBuffer()).subarray(0, 12);
    expect(sniffImageType(await head(base.clone().png()))).toBe('image/png');
    expect(sniffImageType(await head(base.clone().jpeg()))).toBe('image/jpeg');
    expect(sniffImageType(await head(base.clone().gif()))).toBe('image/gif');
    expect(sniffImageType(await head(base.clone().webp()))).toBe('image/webp');
  });

  it('knows nothing else: text, a PDF, a WAV (RIFF too), a short or empty head', () => {
    expect(sniffImageType(Buffer.from('just some text'))).toBeUndefined();
    expect(sniffImageType(Buffer.from('%PDF-1.4\n%\xe2\xe3'))).toBeUndefined();
    expect(sniffImageType(Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'))).toBeUndefined();
    expect(sniffImageType(Buffer.from([0x89, 0x50, 0x4e]))).toBeUndefined();
    expect(sniffImageType(new Uint8Array(0))).toBeUndefined();
  });
});

describe('prepareImageForModel', () => {
  it('a small screenshot goes as it is, and no copy is written', async () => {
    const input = await writePng(join(dir, 'small.png'), 800, 600);
    const result = await prepareImageForModel(input, join(dir, 'small.model'));
    expect(result).toEqual({ kind: 'as-is', mimeType: 'image/png', width: 800, height: 600 });
    expect(await exists(join(dir, 'small.model.png'))).toBe(false);
    expect(await exists(join(dir, 'small.model.jpg'))).toBe(false);
  });

  it('a JPEG named .png goes as a JPEG: the bytes say what it is', async () => {
    const input = await writeJpeg(join(dir, 'photo-misnamed.png'), 640, 480);
    expect(await prepareImageForModel(input, join(dir, 'misnamed.model'))).toEqual({
      kind: 'as-is',
      mimeType: 'image/jpeg',
      width: 640,
      height: 480,
    });
  });

  it('a 4000×3000 PNG gets a JPEG copy with a 1568 px long edge, within every limit', async () => {
    const input = await writePng(join(dir, 'big.png'), 4000, 3000);
    const result = await prepareImageForModel(input, join(dir, 'big.model'));
    expect(result).toEqual({
      kind: 'copy',
      path: join(dir, 'big.model.jpg'),
      mimeType: 'image/jpeg',
      width: 1568,
      height: 1176,
    });
    const copy = await checkCopy(result);
    expect(copy.format).toBe('jpeg');
  });

  it('a large PNG with real transparency stays a PNG, alpha and all', async () => {
    const input = await writePng(join(dir, 'overlay.png'), 3000, 2000, { alpha: true });
    const result = await prepareImageForModel(input, join(dir, 'overlay.model'));
    expect(result).toEqual({
      kind: 'copy',
      path: join(dir, 'overlay.model.png'),
      mimeType: 'image/png',
      width: 1568,
      height: 1045,
    });
    const copy = await checkCopy(result);
    expect(copy).toMatchObject({ format: 'png', hasAlpha: true });
  });

  it('a noisy ~5 MiB PNG, small in pixels, is re-encoded under 3.75 MiB', async () => {
    const input = await writeNoisePng(join(dir, 'noise.png'));
    expect((await stat(input)).size).toBeGreaterThan(5 * 1024 * 1024);
    const result = await prepareImageForModel(input, join(dir, 'noise.model'));
    const copy = await checkCopy(result);
    expect(copy.format).toBe('jpeg');
  });

  it('a noisy transparent PNG is brought under the cap as a PNG, scaled down further', async () => {
    const input = await writeNoisePng(join(dir, 'noise-alpha.png'), 2000, 1500, { alpha: true });
    expect((await stat(input)).size).toBeGreaterThan(IMAGE_LIMITS.maxBytes);
    const result = await prepareImageForModel(input, join(dir, 'noise-alpha.model'));
    const copy = await checkCopy(result);
    expect(copy).toMatchObject({ format: 'png', hasAlpha: true });
    // Full size (1568 × 1176) as RGBA noise is ~7 MB; three quarters of it fits.
    expect(copy.width).toBeLessThan(1568);
  });

  it('an animated GIF goes as a still copy of its first frame (OpenAI takes no animated GIF)', async () => {
    const input = await writeAnimatedGif(join(dir, 'spinner.gif'), 120, 90, 3);
    expect((await sharp(input).metadata()).pages).toBe(3);
    const result = await prepareImageForModel(input, join(dir, 'spinner.model'));
    const copy = await checkCopy(result);
    expect({ width: copy.width, height: copy.height }).toEqual({ width: 120, height: 90 });
    expect((await sharp(copy.path).metadata()).pages ?? 1).toBe(1);
    // The first frame is red (the second green, the third blue).
    const { channels } = await sharp(copy.path).stats();
    expect(channels[0]!.mean).toBeGreaterThan(180);
    expect(channels[1]!.mean).toBeLessThan(40);
  });

  it('ten images dropped at once are all prepared, each to its own answer, a broken one among them holding up none', async () => {
    const big = await writePng(join(dir, 'many-big.png'), 2400, 1800);
    const small = await writePng(join(dir, 'many-small.png'), 300, 200);
    const broken = await writeTruncatedPng(join(dir, 'many-cut.png'));
    const inputs = Array.from({ length: 10 }, (_, i) => [big, small, broken][i % 3]!);
    const results = await Promise.all(
      inputs.map((input, i) => prepareImageForModel(input, join(dir, `many-${i}.model`))),
    );
    expect(results.map((result) => result.kind)).toEqual(
      inputs.map((input) => (input === big ? 'copy' : input === small ? 'as-is' : 'unreadable')),
    );
    for (const [i, result] of results.entries()) {
      if (result.kind === 'copy')
        expect(result).toEqual({
          kind: 'copy',
          path: join(dir, `many-${i}.model.jpg`),
          mimeType: 'image/jpeg',
          width: 1568,
          height: 1176,
        });
    }
  });

  it('the limits can be tightened by the caller', async () => {
    const input = await writePng(join(dir, 'tight.png'), 1200, 900);
    const result = await prepareImageForModel(input, join(dir, 'tight.model'), { maxLongEdge: 500 });
    expect(result).toMatchObject({ kind: 'copy', width: 500, height: 375 });
  });

  it('a copy that cannot be written (its folder is gone) says so, not that the image is broken', async () => {
    const input = await writePng(join(dir, 'orphan.png'), 2000, 1000);
    expect(await prepareImageForModel(input, join(dir, 'no-such-folder', 'orphan.model'))).toEqual({
      kind: 'unreadable',
      reason: "the image's fitted copy could not be written (ENOENT)",
    });
  });

  it('a text file named .png is unreadable, and says it is not an image', async () => {
    const input = join(dir, 'notes.png');
    await writeFile(input, 'meeting notes: ship on Friday\n');
    expect(await prepareImageForModel(input, join(dir, 'notes.model'))).toEqual({
      kind: 'unreadable',
      reason: 'the file is not a PNG, JPEG, GIF or WebP image',
    });
  });

  it('a PDF named .jpg, an empty file and a missing file are unreadable, with their reasons', async () => {
    const pdf = await writeTextPdf(join(dir, 'scan.jpg'), [['not a photo']]);
    const empty = join(dir, 'empty.png');
    await writeFile(empty, '');
    expect(await prepareImageForModel(pdf, join(dir, 'scan.model'))).toEqual({
      kind: 'unreadable',
      reason: 'the file is not a PNG, JPEG, GIF or WebP image',
    });
    expect(await prepareImageForModel(empty, join(dir, 'empty.model'))).toEqual({
      kind: 'unreadable',
      reason: 'the file is empty',
    });
    expect(await prepareImageForModel(join(dir, 'absent.png'), join(dir, 'absent.model'))).toEqual({
      kind: 'unreadable',
      reason: 'the file is not there',
    });
  });

  it('a FIFO or a folder at the name is unreadable at once, never waited on (it would hold every image behind it)', async () => {
    execFileSync('mkfifo', [join(dir, 'fifo.png')]);
    await mkdir(join(dir, 'folder.png'));
    expect(await prepareImageForModel(join(dir, 'fifo.png'), join(dir, 'fifo.model'))).toEqual({
      kind: 'unreadable',
      reason: 'the file is not a plain file',
    });
    expect(await prepareImageForModel(join(dir, 'folder.png'), join(dir, 'folder.model'))).toEqual({
      kind: 'unreadable',
      reason: 'the file is not a plain file',
    });
    const small = await writePng(join(dir, 'after-fifo.png'), 30, 20);
    expect(await prepareImageForModel(small, join(dir, 'after-fifo.model'))).toMatchObject({ kind: 'as-is' });
  });

  it('a truncated PNG, whose header reads fine, is unreadable rather than sent to fail the request', async () => {
    const input = await writeTruncatedPng(join(dir, 'cut.png'));
    expect((await sharp(input).metadata()).width).toBe(300);
    const result = await prepareImageForModel(input, join(dir, 'cut.model'));
    expect(result).toEqual({
      kind: 'unreadable',
      reason: expect.stringMatching(/^the file starts like a PNG image but cannot be decoded \(.+\)$/),
    });
  });

  it('a decompression bomb (225 megapixels declared in under 1 KB) is refused before decoding, naming the limit and its setting', async () => {
    const input = await writePngBomb(join(dir, 'bomb.png'));
    expect((await stat(input)).size).toBeLessThan(1024);
    expect(await prepareImageForModel(input, join(dir, 'bomb.model'))).toEqual({
      kind: 'unreadable',
      reason:
        'the PNG image is 15000 × 15000 pixels (225 megapixels), more than the 40 megapixels an image may have (MAX_IMAGE_PIXELS)',
    });
    expect(await exists(join(dir, 'bomb.model.png'))).toBe(false);
  });

  it('a valid 100-megapixel PNG of a few KB is refused from its header, at once, with the same words', async () => {
    const input = await writeFlatPng(join(dir, 'huge.png'), 10_000, 10_000);
    expect((await stat(input)).size).toBeLessThan(400 * 1024);
    // Decodable as it is: the refusal is the limit's, not a broken file's.
    expect(await sharp(input, { limitInputPixels: false }).metadata()).toMatchObject({ width: 10_000, height: 10_000 });
    expect(await prepareImageForModel(input, join(dir, 'huge.model'))).toEqual({
      kind: 'unreadable',
      reason:
        'the PNG image is 10000 × 10000 pixels (100 megapixels), more than the 40 megapixels an image may have (MAX_IMAGE_PIXELS)',
    });
    expect(await exists(join(dir, 'huge.model.jpg'))).toBe(false);
  });

  it("an image at the limit is prepared as usual; the limit is the caller's to set", async () => {
    const input = await writePng(join(dir, 'at-limit.png'), 4000, 2500);
    expect(
      await prepareImageForModel(input, join(dir, 'at-limit.model'), { maxInputPixels: 10_000_000 }),
    ).toMatchObject({ kind: 'copy', width: 1568, height: 980 });
    expect(await prepareImageForModel(input, join(dir, 'over-limit.model'), { maxInputPixels: 9_999_999 })).toEqual({
      kind: 'unreadable',
      reason:
        'the PNG image is 4000 × 2500 pixels (10 megapixels), more than the 10 megapixels an image may have (MAX_IMAGE_PIXELS)',
    });
  });

  it("people take turns: one person's many images do not hold up another's one", async () => {
    const big = await writePng(join(dir, 'turns-big.png'), 2400, 1800);
    const small = await writePng(join(dir, 'turns-small.png'), 300, 200);
    const done: string[] = [];
    const prepare = (input: string, requester: string, label: string) =>
      prepareImageForModel(input, join(dir, `turns-${label}.model`), {}, { requester }).then((result) => {
        expect(result.kind).not.toBe('unreadable');
        done.push(label);
      });
    // One at a time, so the order they finish in is the order they ran in.
    await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => prepare(big, 'slack:T1:alice', `alice-${i + 1}`)),
      prepare(small, 'slack:T1:bob', 'bob-1'),
    ]);
    expect(done).toEqual(['alice-1', 'alice-2', 'bob-1', 'alice-3', 'alice-4']);
  });

  it('an image whose turn is stopped while it waits is not prepared, and says why', async () => {
    const big = await writePng(join(dir, 'wait-big.png'), 2400, 1800);
    const stop = new AbortController();
    const first = prepareImageForModel(big, join(dir, 'wait-first.model'), {}, { requester: 'a' });
    const waiting = prepareImageForModel(
      big,
      join(dir, 'wait-second.model'),
      {},
      { requester: 'b', signal: stop.signal },
    );
    stop.abort();
    expect(await waiting).toEqual({ kind: 'unreadable', reason: 'the image was not prepared: the turn was stopped' });
    expect(await first).toMatchObject({ kind: 'copy' });
    expect(await exists(join(dir, 'wait-second.model.jpg'))).toBe(false);
  });
});
