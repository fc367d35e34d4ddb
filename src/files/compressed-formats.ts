// Compressed files, known by their first bytes (a name is a claim): what attach_file must open
// before its check for secret values can read them (compressed-contents.ts: zip, gzip, zlib), or
// else refuse by default, because that check reads bytes and compression hides them (`gzip
// secrets.txt` leaves no byte of the value in the file). Archives that store without
// compressing (tar) are read like any file, and so are the members of a tar, whose first bytes
// are looked at too (`tar cf x.tar secret.gz` puts a gzip one header further in).
//
// Not recognised, and said in docs/security.md: formats without a signature (raw deflate, brotli),
// a compressed stream further inside another file (a PDF's or an image's own compression, a
// zip inside an ISO), and anything encrypted.

interface Signature {
  name: string;
  /** The bytes at `offset`. */
  bytes: readonly number[];
  offset?: number;
}

const SIGNATURES: readonly Signature[] = [
  { name: 'gzip file', bytes: [0x1f, 0x8b] },
  { name: 'compress (.Z) file', bytes: [0x1f, 0x9d] },
  // Local file header, empty archive, spanned archive: also every .docx, .xlsx, .pptx, .odt, .jar, .apk and .epub.
  { name: 'zip archive', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { name: 'zip archive', bytes: [0x50, 0x4b, 0x05, 0x06] },
  { name: 'zip archive', bytes: [0x50, 0x4b, 0x07, 0x08] },
  { name: 'bzip2 file', bytes: [0x42, 0x5a, 0x68] },
  { name: 'xz file', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { name: 'zstd file', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  { name: '7z archive', bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] },
  { name: 'rar archive', bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07] },
  { name: 'lz4 file', bytes: [0x04, 0x22, 0x4d, 0x18] },
  { name: 'lz4 file', bytes: [0x02, 0x21, 0x4c, 0x18] },
  { name: 'lzip file', bytes: [0x4c, 0x5a, 0x49, 0x50] },
  { name: 'lzop file', bytes: [0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a] },
  { name: 'cabinet archive', bytes: [0x4d, 0x53, 0x43, 0x46] },
  // The old .lzma format: properties 0x5D, then a dictionary size whose low bytes are 0 in every preset.
  { name: 'lzma file', bytes: [0x5d, 0x00, 0x00] },
];

const TAR_BLOCK = 512;
/** `ustar` at offset 257 of a header: POSIX and GNU tar both write it. */
const USTAR = [0x75, 0x73, 0x74, 0x61, 0x72];
/** Members looked at before giving up (a tar of thousands of files costs no more than this). */
const MAX_TAR_MEMBERS = 10_000;

/** What kind of compressed file `bytes` is (`gzip file`, `zip archive`, …), or undefined. */
export function compressedFormat(bytes: Uint8Array): string | undefined {
  const direct = signatureAt(bytes, 0);
  if (direct) return direct;
  return isTar(bytes, 0) ? compressedTarMember(bytes) : undefined;
}

/** The format's name with its article, as said aloud: a gzip file, an xz file, an lz4 file. */
export function aFormat(format: string): string {
  return `${/^([aeiou]|xz|lz)/i.test(format) ? 'an' : 'a'} ${format}`;
}

function signatureAt(bytes: Uint8Array, start: number): string | undefined {
  for (const signature of SIGNATURES) {
    const at = start + (signature.offset ?? 0);
    if (signature.bytes.every((byte, i) => bytes[at + i] === byte)) return signature.name;
  }
  // zlib: a deflate stream's two-byte header (method 8, a window of at most 32 KB, a check that makes it a multiple of 31).
  const cmf = bytes[start];
  const flg = bytes[start + 1];
  if (cmf !== undefined && flg !== undefined && (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && (cmf * 256 + flg) % 31 === 0)
    return 'zlib stream';
  return undefined;
}

function isTar(bytes: Uint8Array, header: number): boolean {
  return USTAR.every((byte, i) => bytes[header + 257 + i] === byte);
}

/** The first member of a tar whose own bytes start like a compressed file, as "<kind> inside a tar archive". */
function compressedTarMember(bytes: Uint8Array): string | undefined {
  let header = 0;
  for (
    let member = 0;
    member < MAX_TAR_MEMBERS && header + TAR_BLOCK <= bytes.length && isTar(bytes, header);
    member++
  ) {
    const size = octal(bytes.subarray(header + 124, header + 136));
    if (size === undefined) return undefined;
    const found = size > 0 ? signatureAt(bytes, header + TAR_BLOCK) : undefined;
    if (found) return `${found} inside a tar archive`;
    header += TAR_BLOCK + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
  }
  return undefined;
}

/** A tar header's octal number (NUL- or space-terminated); undefined when it is not one. */
function octal(field: Uint8Array): number | undefined {
  const text = Buffer.from(field)
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .trim();
  return /^[0-7]+$/.test(text) ? parseInt(text, 8) : undefined;
}
