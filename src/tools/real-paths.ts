// Where a path really lands: `realpath` for paths that may not exist yet, and whether one real
// path lies inside another. The workspace judges every tool's path with these, the grant rules
// and the sandbox their folders; they sit apart from both so neither imports the other for them.
import { realpathSync } from 'node:fs';
import { readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

/** Linux gives up after 40 links (ELOOP); so do we, so a link cycle cannot hang a tool. */
const MAX_SYMLINK_HOPS = 40;

/** The real path of `absolute` if it exists; otherwise `absolute` as given. */
export function realpathIfExists(absolute: string): string {
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/** Whether `realPath` is `root` or lies below it (both real, absolute). */
export function isInside(realPath: string, root: string): boolean {
  if (realPath === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return realPath.startsWith(prefix);
}

/**
 * `realpath` that also works for paths that do not exist yet: the missing tail is appended
 * to the real path of the nearest existing ancestor. A missing entry that is a dangling
 * symlink is followed by hand, because creating a file through it would create its target.
 */
export async function realpathAllowingMissing(target: string, hops = 0): Promise<string> {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      const real = await realpath(current);
      return path.join(real, ...missing.reverse());
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    const link = await readlinkOrNull(current);
    if (link !== null) {
      if (hops >= MAX_SYMLINK_HOPS) throw new Error(`too many levels of symbolic links: ${target}`);
      const followed = path.resolve(path.dirname(current), link, ...missing.reverse());
      return realpathAllowingMissing(followed, hops + 1);
    }
    const parent = path.dirname(current);
    if (parent === current) throw new Error(`cannot resolve ${target}: no part of it exists`);
    missing.push(path.basename(current));
    current = parent;
  }
}

async function readlinkOrNull(candidate: string): Promise<string | null> {
  try {
    return await readlink(candidate);
  } catch {
    // Not a link, or not there at all: either way, keep walking up.
    return null;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
