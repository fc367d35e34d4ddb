// Compressed files known by their first bytes, whatever their name: what zlib itself makes
// (gzip, a zlib stream), the signatures of the other formats as their tools write them, and a
// compressed file as a member of a tar. Ordinary files, images, PDFs and a plain tar are not.
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressedFormat } from '../../src/files/compressed-formats.js';

const SECRET_TEXT = Buffer.from('OPENAI_API_KEY=sk-live-0123456789abcdef\n'.repeat(20));

/** A tar (POSIX ustar) of these members, as `tar cf` writes it. */
function tarOf(members: { name: string; bytes: Buffer }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const member of members) {
    const header = Buffer.alloc(512);
    header.write(member.name, 0, 'latin1');
    header.write('0000644\0', 100, 'latin1');
    header.write('0000000\0', 108, 'latin1');
    header.write('0000000\0', 116, 'latin1');
    header.write(`${member.bytes.length.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
    header.write('00000000000\0', 136, 'latin1');
    header.write('0', 156, 'latin1');
    header.write('ustar\0', 257, 'latin1');
    header.write('00', 263, 'latin1');
    header.fill(' ', 148, 156);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    blocks.push(header, member.bytes, Buffer.alloc((512 - (member.bytes.length % 512)) % 512));
  }
  return Buffer.concat([...blocks, Buffer.alloc(1024)]);
}

const withTail = (head: number[]) => Buffer.concat([Buffer.from(head), Buffer.alloc(64, 0x41)]);

describe('compressed files', () => {
  it('gzip and a zlib stream as zlib makes them', () => {
    expect(compressedFormat(gzipSync(SECRET_TEXT))).toBe('gzip file');
    for (const level of [1, 6, 9]) expect(compressedFormat(deflateSync(SECRET_TEXT, { level }))).toBe('zlib stream');
  });

  it('zip (and so .docx, .xlsx, .jar), bzip2, xz, zstd, 7z, rar, lz4, lzip, lzop, cab, lzma and .Z by their signatures', () => {
    const cases: [number[], string][] = [
      [[0x50, 0x4b, 0x03, 0x04, 0x14, 0x00], 'zip archive'],
      [[0x50, 0x4b, 0x05, 0x06], 'zip archive'],
      [[0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59], 'bzip2 file'],
      [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04], 'xz file'],
      [[0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x00], 'zstd file'],
      [[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0x00, 0x04], '7z archive'],
      [[0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00], 'rar archive'],
      [[0x04, 0x22, 0x4d, 0x18, 0x64, 0x40], 'lz4 file'],
      [[0x4c, 0x5a, 0x49, 0x50, 0x01], 'lzip file'],
      [[0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a], 'lzop file'],
      [[0x4d, 0x53, 0x43, 0x46, 0x00, 0x00], 'cabinet archive'],
      [[0x5d, 0x00, 0x00, 0x80, 0x00], 'lzma file'],
      [[0x1f, 0x9d, 0x90], 'compress (.Z) file'],
    ];
    for (const [head, name] of cases) expect(compressedFormat(withTail(head)), name).toBe(name);
  });

  it('a compressed member of a tar, after plain ones; a tar of plain files is not compressed', () => {
    const plain = { name: 'notes.txt', bytes: Buffer.from('just notes\n') };
    expect(compressedFormat(tarOf([plain, { name: 'env.gz', bytes: gzipSync(SECRET_TEXT) }]))).toBe(
      'gzip file inside a tar archive',
    );
    expect(compressedFormat(tarOf([plain, { name: 'data.bin', bytes: Buffer.alloc(700, 3) }]))).toBeUndefined();
  });

  it('ordinary text, an image, a PDF and random-looking bytes are not', () => {
    expect(compressedFormat(SECRET_TEXT)).toBeUndefined();
    expect(compressedFormat(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'))).toBeUndefined();
    expect(compressedFormat(Buffer.from('%PDF-1.7\n%âãÏÓ\n'))).toBeUndefined();
    expect(compressedFormat(Buffer.from([0x00, 0x01, 0x02, 0x03]))).toBeUndefined();
    expect(compressedFormat(Buffer.alloc(0))).toBeUndefined();
  });

  it('the limit: formats without a signature are not recognised (see docs/security.md)', () => {
    expect(compressedFormat(brotliCompressSync(SECRET_TEXT))).toBeUndefined();
    expect(compressedFormat(deflateRawSync(SECRET_TEXT))).toBeUndefined();
  });
});
