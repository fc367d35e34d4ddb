// Files the files room's tests share, made at test time so no binary fixture is committed:
// PNGs of a given size (flat, or noise that does not compress, for the byte cap), an animated
// GIF, a truncated PNG, a PNG decompression bomb, a valid flat PNG of many pixels and few
// bytes, a small PDF 1.4 written by hand with correct xref offsets and known text, a PDF that
// claims to be encrypted, a corrupt one, and a PDF decompression bomb. Each writer returns
// the path it wrote.
import { writeFile } from 'node:fs/promises';
import { crc32, deflateRawSync, deflateSync, constants as zlibConstants } from 'node:zlib';
import sharp from 'sharp';
import { mulberry32 } from './seeded-random.js';

/** A flat-coloured PNG of `width`×`height` pixels (a few KB even when large). */
export async function writePng(
  path: string,
  width: number,
  height: number,
  options: { alpha?: boolean } = {},
): Promise<string> {
  const channels = options.alpha ? 4 : 3;
  const background = options.alpha ? { r: 30, g: 120, b: 200, alpha: 0.5 } : { r: 30, g: 120, b: 200 };
  await sharp({ create: { width, height, channels, background } }).png().toFile(path);
  return path;
}

/**
 * A PNG of seeded random pixels: noise barely compresses, so its size in bytes follows its
 * pixel count (about 3 bytes per RGB pixel, 4 with alpha). The default 1400×1300 is ~5.2 MiB:
 * over the 3.75 MiB byte cap while its long edge is already within 1568 px, so only
 * re-encoding brings it under. With `alpha`, the alpha channel is noise too (half-transparent
 * pixels everywhere), so a copy must stay a PNG.
 */
export async function writeNoisePng(
  path: string,
  width = 1400,
  height = 1300,
  options: { alpha?: boolean; seed?: number } = {},
): Promise<string> {
  const channels = options.alpha ? 4 : 3;
  const random = mulberry32(options.seed ?? 21);
  const pixels = Buffer.alloc(width * height * channels);
  for (let i = 0; i < pixels.length; i += 1) pixels[i] = Math.floor(random() * 256);
  await sharp(pixels, { raw: { width, height, channels } }).png({ compressionLevel: 6 }).toFile(path);
  return path;
}

/** A JPEG photo-like gradient of `width`×`height` pixels. */
export async function writeJpeg(path: string, width: number, height: number): Promise<string> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const at = (y * width + x) * 3;
      pixels[at] = (x * 255) / width;
      pixels[at + 1] = (y * 255) / height;
      pixels[at + 2] = 128;
    }
  }
  await sharp(pixels, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toFile(path);
  return path;
}

/** An animated GIF of `frames` flat frames of `width`×`height`, each a different colour. */
export async function writeAnimatedGif(path: string, width: number, height: number, frames = 3): Promise<string> {
  const frame = width * height * 3;
  const pixels = Buffer.alloc(frame * frames);
  for (let f = 0; f < frames; f += 1) {
    for (let i = 0; i < frame; i += 3) pixels[f * frame + i + (f % 3)] = 220;
  }
  await sharp(pixels, { raw: { width, height: height * frames, channels: 3, pageHeight: height } })
    .gif({ delay: 100 })
    .toFile(path);
  return path;
}

/** A valid PNG with its last `cut` bytes missing (the IEND chunk and the end of its pixel data). */
export async function writeTruncatedPng(path: string, width = 300, height = 200, cut = 40): Promise<string> {
  const random = mulberry32(3);
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i += 1) pixels[i] = Math.floor(random() * 256);
  const png = await sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
  await writeFile(path, png.subarray(0, png.length - cut));
  return path;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/**
 * A decompression bomb in under 1 KB: a 1-bit greyscale PNG whose header declares
 * `side`×`side` pixels (15000² = 225 megapixels, 675 MB as RGB; under sharp's own default
 * cap of 268 megapixels, so only our lower one stops it), followed by the start of
 * its all-zero pixel data, which deflate shrinks about a thousandfold.
 */
export async function writePngBomb(path: string, side = 15_000): Promise<string> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const rows = Buffer.alloc((1 + Math.ceil(side / 8)) * 64);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  await writeFile(
    path,
    Buffer.concat([
      signature,
      pngChunk('IHDR', header),
      pngChunk('IDAT', deflateSync(rows)),
      pngChunk('IEND', Buffer.alloc(0)),
    ]),
  );
  return path;
}

/**
 * A complete, valid PNG of `width`×`height` black pixels, 1-bit greyscale: a few KB on disk
 * however many pixels it has (10000 × 10000 is about 12 KB), made in milliseconds, and as
 * costly to decode as its pixel count says. What a 100-megapixel "small" image looks like.
 */
export async function writeFlatPng(path: string, width: number, height: number): Promise<string> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  // Each row: filter byte 0, then the row's bits, all zero.
  const rows = Buffer.alloc((1 + Math.ceil(width / 8)) * height);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  await writeFile(
    path,
    Buffer.concat([
      signature,
      pngChunk('IHDR', header),
      pngChunk('IDAT', deflateSync(rows)),
      pngChunk('IEND', Buffer.alloc(0)),
    ]),
  );
  return path;
}

/** Escapes a string for a PDF literal string `( … )`. */
function pdfLiteral(text: string): string {
  return text.replace(/[\\()]/g, (ch) => `\\${ch}`);
}

/**
 * Assembles a PDF from numbered object bodies (object 1 first), computing the xref table's
 * byte offsets, so the file is valid as written rather than repaired by the reader.
 */
function assemblePdf(objects: string[], trailerExtra = ''): Buffer {
  // The binary comment line after the header marks the file as binary for transfer tools.
  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xrefAt = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailerExtra} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** The objects of a PDF with one page per entry of `pages`, each page its lines of text in Helvetica. */
function textPdfObjects(pages: string[][]): string[] {
  // 1 catalog, 2 page tree, 3 font, then a page object and its content stream per page.
  const kids = pages.map((_, i) => `${4 + i * 2} 0 R`).join(' ');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  pages.forEach((lines, i) => {
    const stream = [
      'BT',
      '/F1 14 Tf',
      '72 720 Td',
      '18 TL',
      ...lines.map((line) => `(${pdfLiteral(line)}) '`),
      'ET',
    ].join('\n');
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
    );
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
  });
  return objects;
}

/** A valid PDF 1.4 whose pages carry the given lines of text (ASCII), in order. */
export async function writeTextPdf(path: string, pages: string[][]): Promise<string> {
  await writeFile(path, assemblePdf(textPdfObjects(pages)));
  return path;
}

/**
 * A PDF under the standard security handler whose password checks fail for the empty
 * password, as a file locked with a user password appears to a reader that has none.
 */
export async function writeEncryptedPdf(path: string): Promise<string> {
  const objects = textPdfObjects([['This text is locked.']]);
  const encryptAt = objects.length + 1;
  const hash32 = (byte: string): string => byte.repeat(32);
  objects.push(`<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <${hash32('4f')}> /U <${hash32('55')}> >>`);
  const id = '<0123456789abcdef0123456789abcdef>';
  await writeFile(path, assemblePdf(objects, ` /Encrypt ${encryptAt} 0 R /ID [${id} ${id}]`));
  return path;
}

/** Bytes that start like a PDF and then are not one: a header, then noise, no xref, no trailer. */
export async function writeCorruptPdf(path: string): Promise<string> {
  const random = mulberry32(7);
  const noise = Buffer.alloc(4096);
  for (let i = 0; i < noise.length; i += 1) noise[i] = Math.floor(random() * 256);
  await writeFile(
    path,
    Buffer.concat([Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R\n', 'latin1'), noise]),
  );
  return path;
}

/** zlib's Adler-32 of `count` bytes all equal to `byte`, in closed form (the bytes are never made). */
function adler32OfRepeated(byte: number, count: bigint): number {
  const mod = 65521n;
  const b = BigInt(byte);
  const a = (1n + count * b) % mod;
  // B sums A after each byte: count × 1 + byte × (1 + 2 + … + count).
  const s = (count + b * ((count * (count + 1n)) / 2n)) % mod;
  return Number((s << 16n) | a);
}

/**
 * A PDF decompression bomb: one page whose one content stream is FlateDecode of
 * `inflatedBytes` spaces (default 2 GiB), about 1 KB of deflate per MiB of spaces, so ~2 MB on
 * disk. One MiB of spaces is deflated once with a full flush (its blocks end byte-aligned and
 * refer to nothing before them), and those bytes are repeated: a valid zlib stream of the
 * whole, with its Adler-32, made without ever holding the inflated bytes.
 */
export async function writePdfBomb(path: string, inflatedBytes = 2 * 1024 ** 3): Promise<string> {
  const unit = 1024 * 1024;
  if (inflatedBytes % unit !== 0) throw new Error('writePdfBomb: inflatedBytes must be whole MiB');
  const block = deflateRawSync(Buffer.alloc(unit, 0x20), { finishFlush: zlibConstants.Z_FULL_FLUSH });
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(adler32OfRepeated(0x20, BigInt(inflatedBytes)));
  // 0x78 0x9c: zlib's header (deflate, 32 KiB window); 0x03 0x00: a final, empty fixed-Huffman block.
  const stream = Buffer.concat([
    Buffer.from([0x78, 0x9c]),
    ...Array.from({ length: inflatedBytes / unit }, () => block),
    Buffer.from([0x03, 0x00]),
    checksum,
  ]);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
    `<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n${stream.toString('latin1')}\nendstream`,
  ];
  await writeFile(path, assemblePdf(objects));
  return path;
}
