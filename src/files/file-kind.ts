// What a shared file is, judged by its first bytes (a name or a declared type is a claim, not
// a fact): an image a model may see (PNG, JPEG, GIF, WebP), a PDF, text the file tools read,
// or anything else (kept, never opened: archives are never unpacked by the bot).
import path from 'node:path';
import type { StoredFile } from '../engine/index.js';

type FileKind = StoredFile['kind'];

/** How many leading bytes the judgement needs. */
export const SNIFF_BYTES = 8192;

const TEXT_EXTENSIONS = new Set([
  '.txt',
  '.md',
  '.markdown',
  '.csv',
  '.tsv',
  '.json',
  '.jsonl',
  '.ndjson',
  '.yaml',
  '.yml',
  '.toml',
  '.ini',
  '.cfg',
  '.conf',
  '.log',
  '.xml',
  '.html',
  '.htm',
  '.css',
  '.js',
  '.mjs',
  '.cjs',
  '.ts',
  '.tsx',
  '.jsx',
  '.py',
  '.rb',
  '.go',
  '.rs',
  '.java',
  '.kt',
  '.c',
  '.h',
  '.cc',
  '.cpp',
  '.hpp',
  '.cs',
  '.php',
  '.sh',
  '.bash',
  '.zsh',
  '.sql',
  '.swift',
  '.r',
  '.lua',
  '.pl',
  '.diff',
  '.patch',
  '.env',
  '.properties',
  '.tex',
  '.rst',
  '.svg',
]);

export function sniffImageType(bytes: Uint8Array): 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | undefined {
  const starts = (...sig: number[]) => sig.every((byte, i) => bytes[i] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (
    starts(0x52, 0x49, 0x46, 0x46) &&
    bytes[8] === 0x57 &&
    bytes[9] === 0x45 &&
    bytes[10] === 0x42 &&
    bytes[11] === 0x50
  )
    return 'image/webp';
  return undefined;
}

export function isPdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(0, 1024)).includes('%PDF-');
}

/** Text: no NUL byte and valid UTF-8 in the first bytes (a multi-byte character cut at the end is fine). */
export function looksLikeText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, Math.max(0, bytes.length - 4)));
    return true;
  } catch {
    return false;
  }
}

/** A web page: what Slack answers with 200 when a file download lacks its token. */
export function looksLikeHtml(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 512))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  return (
    head.startsWith('<!doctype html') || head.startsWith('<html') || (head.startsWith('<head') && head.includes('<'))
  );
}

export function declaresHtml(name: string, mimeType: string | undefined): boolean {
  const ext = path.extname(name).toLowerCase();
  return ext === '.html' || ext === '.htm' || (mimeType ?? '').toLowerCase().startsWith('text/html');
}

export interface Judged {
  kind: FileKind;
  mimeType: string;
}

export function judgeFile(first: Uint8Array, name: string, declared: string | undefined): Judged {
  const image = sniffImageType(first);
  if (image) return { kind: 'image', mimeType: image };
  if (isPdf(first)) return { kind: 'pdf', mimeType: 'application/pdf' };
  const ext = path.extname(name).toLowerCase();
  if (first.length === 0) return { kind: 'text', mimeType: textMime(ext, declared) };
  if (
    looksLikeText(first) &&
    (TEXT_EXTENSIONS.has(ext) ||
      ext === '' ||
      (declared ?? '').startsWith('text/') ||
      /json|xml|yaml|csv|javascript/.test(declared ?? ''))
  ) {
    return { kind: 'text', mimeType: textMime(ext, declared) };
  }
  return {
    kind: 'other',
    mimeType: declared && /^[\w.+-]+\/[\w.+-]+$/.test(declared) ? declared : 'application/octet-stream',
  };
}

function textMime(ext: string, declared: string | undefined): string {
  if (declared && /^(text\/[\w.+-]+|application\/(json|xml|x-yaml|yaml|javascript|x-sh|sql))$/.test(declared))
    return declared;
  const known: Record<string, string> = {
    '.csv': 'text/csv',
    '.json': 'application/json',
    '.md': 'text/markdown',
    '.html': 'text/html',
    '.htm': 'text/html',
    '.xml': 'application/xml',
    '.tsv': 'text/tab-separated-values',
  };
  return known[ext] ?? 'text/plain';
}
