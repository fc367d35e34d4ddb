// Looking inside a compressed file before attach_file posts it: a zip's members (and so an
// .xlsx's parts), a gzip, a zlib stream, each inflated and put through the same check a file's
// own bytes get (every form the masker knows), nested ones a few layers down. What cannot be read
// is refused, or listed when allowed; a zip bomb is stopped at a bound it names, and the count of
// what was inflated shows it stopped there.
import { deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { holdsSecret } from '../../src/files/secret-bytes.js';
import { INFLATE_CHUNK_BYTES } from '../../src/files/bounded-inflate.js';
import {
  checkCompressedContents,
  INFLATE_LIMITS,
  InflateBudget,
  type InflateLimits,
} from '../../src/files/compressed-contents.js';
import { compressedFormat } from '../../src/files/compressed-formats.js';
import { SecretMasker } from '../../src/secrets/index.js';
import { mulberry32 } from '../support/seeded-random.js';
import { xlsxOf, zipOf } from '../support/zip-builder.js';

const SECRET = 'sk-live-Zq8vR2mT5nW1xY4b';
const masker = new SecretMasker([SECRET]);
const MiB = 1024 * 1024;

async function check(bytes: Buffer, options: { allow?: boolean; limits?: InflateLimits; signal?: AbortSignal } = {}) {
  const budget = new InflateBudget(options.limits ?? INFLATE_LIMITS);
  const format = compressedFormat(bytes);
  if (!format) throw new Error('not a compressed file');
  try {
    const unchecked = await checkCompressedContents(bytes, format, 'report.xlsx', {
      holdsSecret: (inner) => holdsSecret(inner, masker.mask),
      allowUnreadable: options.allow ?? false,
      budget,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { unchecked, budget };
  } catch (error) {
    return { refused: (error as Error).message, budget };
  }
}

describe('what is inside a compressed file', () => {
  it('a clean .xlsx is read part by part and passes', async () => {
    const { refused, unchecked, budget } = await check(xlsxOf(['Region', 'North', 'South', 'Total revenue 2024']));
    expect(refused).toBeUndefined();
    expect(unchecked).toEqual([]);
    expect(budget.members).toBe(6);
    expect(budget.read).toBeGreaterThan(1000);
  });

  it('a secret in a cell, as written, in base64, reversed or as UTF-16, is refused naming the part', async () => {
    const forms = [
      SECRET,
      Buffer.from(SECRET).toString('base64'),
      [...SECRET].reverse().join(''),
      Buffer.from(SECRET, 'utf16le').toString('latin1'),
    ];
    for (const form of forms) {
      const { refused } = await check(xlsxOf(['Region', `key: ${form}`]));
      expect(refused).toBe(
        'refused: report.xlsx › "xl/sharedStrings.xml", inflated, holds a configured secret value, which cannot be masked inside a compressed file',
      );
    }
  });

  it('a gzip and a zlib stream are read; a zip inside a zip, a gzip inside a zip, too', async () => {
    expect((await check(gzipSync(Buffer.from('quarterly notes\n'.repeat(50))))).refused).toBeUndefined();
    expect((await check(gzipSync(Buffer.from(`TOKEN=${SECRET}\n`)))).refused).toContain(
      'report.xlsx, inflated, holds a configured secret value',
    );
    expect((await check(deflateSync(Buffer.from(`TOKEN=${SECRET}\n`)))).refused).toContain(
      'holds a configured secret value',
    );
    const inner = zipOf([{ name: 'env.txt', bytes: Buffer.from(`TOKEN=${SECRET}`) }]);
    expect(
      (
        await check(
          zipOf([
            { name: 'readme.txt', bytes: Buffer.from('hello') },
            { name: 'bundle/inner.zip', bytes: inner },
          ]),
        )
      ).refused,
    ).toContain('report.xlsx › "bundle/inner.zip" › "env.txt", inflated, holds a configured secret value');
    expect(
      (await check(zipOf([{ name: 'logs/app.log.gz', bytes: gzipSync(Buffer.from(`line\nTOKEN=${SECRET}\n`)) }])))
        .refused,
    ).toContain('report.xlsx › "logs/app.log.gz", inflated, holds');
  });

  it('nesting past three compressed layers is refused, naming the depth', async () => {
    let nested = zipOf([{ name: 'deep.txt', bytes: Buffer.from('deep') }]);
    for (let layer = 0; layer < 3; layer++) nested = zipOf([{ name: `layer${layer}.zip`, bytes: nested }]);
    const { refused } = await check(nested);
    expect(refused).toContain(
      '"layer0.zip" is a zip archive inside 3 other compressed layers, more than the 3 the check opens',
    );
  });

  it('an encrypted member, a method it cannot read, an xz member: refused; with allow, listed, and the rest still checked', async () => {
    const encrypted = {
      name: 'xl/secret.bin',
      bytes: Buffer.from('x'.repeat(40)),
      flags: 1,
      method: 0,
      data: Buffer.alloc(52, 0x5a),
      declaredSize: 40,
    };
    const lzma = { name: 'xl/big.xml', bytes: Buffer.from('y'), method: 14, data: Buffer.alloc(30, 1) };
    const xz = {
      name: 'data.xz',
      bytes: Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04]), Buffer.alloc(40, 0x11)]),
    };
    expect((await check(zipOf([encrypted]))).refused).toContain(
      'refused: report.xlsx › "xl/secret.bin" is encrypted: it cannot be checked for secret values',
    );
    expect((await check(zipOf([lzma]))).refused).toContain(
      '"xl/big.xml" is compressed with method 14 (LZMA), which the check does not read',
    );
    expect((await check(zipOf([xz]))).refused).toContain(
      '"data.xz" is an xz file: it cannot be checked for secret values',
    );
    expect((await check(zipOf([xz]))).refused).toContain('ATTACH_COMPRESSED=allow');

    const allowed = await check(zipOf([encrypted, lzma, xz, { name: 'notes.txt', bytes: Buffer.from('fine') }]), {
      allow: true,
    });
    expect(allowed.refused).toBeUndefined();
    expect(allowed.unchecked).toEqual([
      'report.xlsx › "xl/secret.bin": is encrypted',
      'report.xlsx › "xl/big.xml": is compressed with method 14 (LZMA), which the check does not read',
      'report.xlsx › "data.xz": is an xz file',
    ]);
    const stillChecked = await check(zipOf([encrypted, { name: 'env.txt', bytes: Buffer.from(SECRET) }]), {
      allow: true,
    });
    expect(stillChecked.refused).toContain('"env.txt", inflated, holds a configured secret value');
  });

  it('a zip bomb whose header says how big it is: refused by the ratio before anything is inflated', async () => {
    const zeros = Buffer.alloc(24 * MiB);
    const bomb = zipOf([{ name: 'xl/worksheets/sheet1.xml', bytes: zeros }]);
    const { refused, budget } = await check(bomb);
    expect(refused).toMatch(
      /"xl\/worksheets\/sheet1.xml" says it inflates to more than 100 times its compressed [\d.]+ KB \(and past 4 MB\), the most the check inflates: a zip bomb/,
    );
    expect(budget.read).toBe(0);
  });

  it('a zip bomb whose header lies about its size: the inflater stops one chunk past what the header says', async () => {
    const bomb = zipOf([{ name: 'xl/sharedStrings.xml', bytes: Buffer.alloc(24 * MiB), declaredSize: 1 * MiB }]);
    const { refused, budget } = await check(bomb);
    expect(refused).toContain(
      '"xl/sharedStrings.xml" inflates past the 1 MB its header says (a zip bomb, or damaged): it cannot be checked',
    );
    expect(budget.read).toBeGreaterThan(1 * MiB);
    expect(budget.read).toBeLessThanOrEqual(1 * MiB + INFLATE_CHUNK_BYTES);
  });

  it('a gzip bomb (no size stated): inflating stops at the ratio bound, named', async () => {
    const bomb = gzipSync(Buffer.alloc(24 * MiB));
    const cap = Math.max(INFLATE_LIMITS.ratioFloorBytes, bomb.length * INFLATE_LIMITS.ratio);
    const { refused, budget } = await check(bomb);
    expect(refused).toMatch(
      /^refused: report.xlsx inflates to more than 100 times its compressed [\d.]+ KB \(and past 4 MB\), the most the check inflates: a zip bomb, or too large to check/,
    );
    expect(budget.read).toBeGreaterThan(cap);
    expect(budget.read).toBeLessThanOrEqual(cap + INFLATE_CHUNK_BYTES);
  });

  it('the total bound holds across members and layers, and the member bound across nested archives', async () => {
    const limits: InflateLimits = { totalBytes: 256 * 1024, members: 8, ratio: 1000, ratioFloorBytes: 1024, depth: 3 };
    const part = (i: number) => ({ name: `part${i}.bin`, bytes: Buffer.alloc(100 * 1024, i) });
    const tooMuch = await check(zipOf([part(1), part(2), { name: 'more.zip', bytes: zipOf([part(3)]) }]), { limits });
    expect(tooMuch.refused).toContain(
      'report.xlsx › "more.zip" › "part3.bin" says it inflates to more than the 256 KB in all the check reads out of one file',
    );
    expect(tooMuch.budget.read).toBeLessThanOrEqual(limits.totalBytes);

    const lying = await check(gzipSync(Buffer.alloc(2 * MiB, 7)), { limits: { ...limits, ratio: 10_000 } });
    expect(lying.refused).toContain('more than the 256 KB in all the check reads');
    expect(lying.budget.read).toBeLessThanOrEqual(limits.totalBytes + INFLATE_CHUNK_BYTES);

    const small = (i: number) => ({ name: `m${i}.txt`, bytes: Buffer.from(`member ${i}`) });
    const crowded = zipOf([
      small(0),
      small(1),
      small(2),
      { name: 'inner.zip', bytes: zipOf([0, 1, 2, 3, 4].map((i) => small(10 + i))) },
    ]);
    expect((await check(crowded, { limits })).refused).toContain(
      'report.xlsx › "inner.zip" has more members than the 8 in all the check reads',
    );
    // With allow, a spent bound stops the reading and is listed.
    expect((await check(crowded, { limits, allow: true })).unchecked).toEqual([
      'report.xlsx › "inner.zip": has more members than the 8 in all the check reads',
    ]);
  });

  it('a damaged member: a checksum that does not match, bytes after its stream, data that is not deflate', async () => {
    const good = zipOf([{ name: 'a.txt', bytes: Buffer.from('hello there') }]);
    const badCrc = Buffer.from(good);
    const directory = badCrc.readUInt32LE(badCrc.length - 22 + 16);
    badCrc.writeUInt32LE(1, directory + 16);
    badCrc.writeUInt32LE(1, 14);
    expect((await check(badCrc)).refused).toContain('"a.txt" is damaged (its checksum does not match its bytes)');
    expect(
      (await check(zipOf([{ name: 'b.txt', bytes: Buffer.from('hi'), data: Buffer.alloc(20, 0xff) }]))).refused,
    ).toContain('"b.txt" is not valid deflate data');
  });

  it('a stop while it reads ends the check', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    await expect(
      checkCompressedContents(gzipSync(Buffer.from('x')), 'gzip file', 'a.gz', {
        holdsSecret: () => false,
        allowUnreadable: false,
        signal: controller.signal,
      }),
    ).rejects.toThrow('stopped');
  });

  it('a text part that starts like a zlib header (`x^2`) is read as text, not refused as a broken stream', async () => {
    const { refused, unchecked } = await check(
      zipOf([{ name: 'formulas.csv', bytes: Buffer.from('x^2 + y^2,circle\n') }]),
    );
    expect(refused).toBeUndefined();
    expect(unchecked).toEqual([]);
  });

  it('a spreadsheet with any byte changed is read clean or refused in words, never with another error', async () => {
    const sheet = xlsxOf(['Region', 'North', 'South']);
    const random = mulberry32(11);
    for (let round = 0; round < 400; round++) {
      const bent = Buffer.from(sheet);
      // Past the signature, so it stays a zip by its first bytes.
      bent[4 + Math.floor(random() * (bent.length - 4))] = Math.floor(random() * 256);
      const { refused } = await check(bent);
      if (refused !== undefined) expect(refused).toMatch(/^refused: report\.xlsx/);
    }
  });
});
