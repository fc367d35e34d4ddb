// Walking a directory tree inside the workspace, breadth first, without following symlinks.
//
// One idea: the walk never leaves the workspace and never loops, because it does not
// follow links at all: a symlinked directory is reported as a link, not entered (it may
// point outside, or back at an ancestor). Each folder is opened without following a link
// and listed through its verified descriptor (safe-open.ts), so a folder swapped for a link
// after it was queued is refused, not listed. `.git` and `node_modules` are reported but
// not entered: they are huge, and what is in them is rarely what the user means. The walk
// reads no file content: whoever does opens each file through safe-open.ts.
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { openDirectory, type OpenedDirectory } from './safe-open.js';
import type { Workspace } from './workspace.js';

export const NOT_DESCENDED = new Set(['.git', 'node_modules']);

type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

export interface WalkEntry {
  realPath: string;
  /** Workspace-relative, `/`-separated. */
  shown: string;
  name: string;
  kind: EntryKind;
  /** A directory the walk reports but does not enter (`.git`, `node_modules`). */
  skipped: boolean;
  /**
   * The entry named through its folder's open descriptor, for lstat and readlink: no swap
   * of a folder above it can redirect it. Valid only until the walk moves on.
   */
  at: string;
}

/**
 * Entries under `directory` (a resolved path inside the workspace), sorted by name within
 * each directory, nearest first. Unreadable or swapped subdirectories are passed over
 * silently: one permission-denied folder should not fail a whole search. Throws if aborted,
 * or if `directory` itself cannot be listed.
 */
export async function* walkTree(
  workspace: Workspace,
  directory: string,
  options: { recursive: boolean; signal?: AbortSignal },
): AsyncGenerator<WalkEntry> {
  const queue = [directory];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    options.signal?.throwIfAborted();
    let folder: OpenedDirectory;
    let dirents: Dirent[];
    try {
      folder = await openDirectory(workspace, next, workspace.relative(next));
    } catch (error) {
      if (next === directory) throw error;
      continue;
    }
    try {
      try {
        dirents = await readdir(folder.listingPath, { withFileTypes: true });
      } catch (error) {
        if (next === directory) throw error;
        continue;
      }
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const dirent of dirents) {
        const realPath = path.join(folder.realPath, dirent.name);
        const kind = kindOf(dirent);
        const skipped = kind === 'dir' && NOT_DESCENDED.has(dirent.name);
        yield {
          realPath,
          shown: workspace.relative(realPath),
          name: dirent.name,
          kind,
          skipped,
          at: folder.entryPath(dirent.name),
        };
        if (options.recursive && kind === 'dir' && !skipped) queue.push(realPath);
      }
    } finally {
      await folder.close();
    }
  }
}

function kindOf(dirent: Dirent): EntryKind {
  if (dirent.isSymbolicLink()) return 'symlink';
  if (dirent.isDirectory()) return 'dir';
  if (dirent.isFile()) return 'file';
  return 'other';
}
