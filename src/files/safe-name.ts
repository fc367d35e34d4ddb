// Names for shared files on disk. A name comes from whoever shared the file (hostile until
// shown otherwise): it never becomes a path. What is kept is its last segment, without
// control or invisible format characters (a right-to-left override can disguise `exe.png`),
// without leading dots (no hidden files, no `..`), without characters other systems refuse,
// and short enough for any file system; an empty result is `file`.
import path from 'node:path';

const MAX_NAME_CHARS = 120;

export function safeFileName(shared: string): string {
  const lastSegment =
    shared
      .split(/[/\\]/)
      .filter((part) => part !== '')
      .at(-1) ?? '';
  let name = lastSegment
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '')
    .replace(/[<>:"|?*]/g, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '');
  if (name.length > MAX_NAME_CHARS) {
    const ext = path.extname(name).slice(0, 16);
    name = `${name.slice(0, MAX_NAME_CHARS - ext.length)}${ext}`;
  }
  return name === '' ? 'file' : name;
}
