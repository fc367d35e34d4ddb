// Names for shared files on disk. A name comes from whoever shared the file (hostile until
// shown otherwise): it never becomes a path. What is kept is its last segment, without
// control or invisible format characters (a right-to-left override can disguise `exe.png`),
// without leading dots (no hidden files, no `..`), without characters other systems refuse,
// and short enough for any file system; an empty result is `file`.
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

const MAX_NAME_CHARS = 120;

export function safeFileName(shared: string): string {
  const lastSegment = shared.split(/[/\\]/).filter((part) => part !== '').at(-1) ?? '';
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

/**
 * Create a new file named `name` in `dir`, or `name-2`, `name-3`… when taken: created with
 * O_EXCL, so two files of one message never share a name and nothing existing is replaced.
 */
export async function createUnique(dir: string, name: string): Promise<{ handle: FileHandle; name: string }> {
  const ext = path.extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  for (let n = 1; n <= 1000; n++) {
    const candidate = n === 1 ? name : `${stem}-${n}${ext}`;
    try {
      const handle = await open(path.join(dir, candidate), 'wx', 0o644);
      return { handle, name: candidate };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`a thousand files named like ${name} are already here`);
}
