// Folders held by descriptor, for the bot's work in folders the workspace's commands can change.
//
// One idea: walk down by descriptor, never by a name looked up again. A command sharing a
// folder can swap `uploads/<thread>` for a link between a check and the call that trusts it
// (2 of 300 uploads in a race test landed where such a link led). So a walk starts at a real
// path no command can change (a conversation's folder, a granted folder), checked to be what
// it says by the kernel's own path of the open descriptor, and goes down one name at a time,
// each opened without following a link (O_NOFOLLOW) inside the folder held above it: on Linux
// `/proc/self/fd/N/name` is `name` inside the very folder descriptor N holds, which is what
// openat does (Node has no openat). What is made, opened or removed there is in that folder,
// wherever its path leads by then; a link at any step refuses the walk.
//
// Without /proc (not Linux) each step is looked up by path again and only checked before use
// (lstat), so a swap timed in between still wins there: a bot whose folders are shared by
// people who run commands belongs on Linux.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK: a FIFO planted at the name opens at once instead of waiting for a writer (and is then refused).
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

const PROC_FD = '/proc/self/fd';
/** Times a folder is emptied again while a command keeps filling it, before its removal gives up. */
const MAX_REMOVAL_PASSES = 10;
/** Times a missing folder is made again when it goes between its mkdir and its open. */
const MAX_MAKE_ATTEMPTS = 3;
let procfsMounted: boolean | undefined;
function hasProcfs(): boolean {
  procfsMounted ??= existsSync(PROC_FD);
  return procfsMounted;
}

/** A folder below a trusted root: `root` is a real path no command can change; `steps` are single names below it. */
export interface FolderPath {
  root: string;
  steps: readonly string[];
}

/** Which file a name held when it was made or opened (a later look must find the same). */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** A step of a walk is not a plain folder: a command put a link or a file at its name. */
export class NotAFolderError extends Error {
  constructor(
    /** The step, relative to the walk's root, `/`-separated. */
    readonly shown: string,
  ) {
    super(`${shown} is not a folder (a link or a file has its name)`);
    this.name = 'NotAFolderError';
  }
}

/** The folder a FolderPath names, as a path (for messages and stored references). */
export function folderPathOf(at: FolderPath): string {
  return path.join(at.root, ...at.steps);
}

/** A FolderPath for `folder`, which must be `root` or below it. */
export function folderPathBelow(root: string, folder: string): FolderPath {
  const relative = path.relative(root, folder);
  if (relative.startsWith('..') || path.isAbsolute(relative)) throw new Error(`${folder} is not inside ${root}`);
  return { root, steps: relative.split(path.sep).filter(Boolean) };
}

/** One name inside a folder, never a path: a name from outside must not walk anywhere. */
export function checkEntryName(name: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
    throw new Error(`not a single file name: ${JSON.stringify(name)}`);
}

export interface PinnedFolder {
  /** The folder's path (root and steps). */
  readonly path: string;
  /** What to give readdir to list this very folder. */
  readonly listingPath: string;
  /** A path naming `name` inside this very folder, valid until `close`. */
  entry(name: string): string;
  close(): Promise<void>;
}

/**
 * Open the folder `at` names, one step at a time, never through a link; with `create`, a
 * missing step is made (mode 0755 before the umask, as the bot's own folders).
 */
export async function openPinnedFolder(at: FolderPath, options: { create?: boolean } = {}): Promise<PinnedFolder> {
  for (const step of at.steps) checkEntryName(step);
  const root = path.resolve(at.root);
  let handle = await openRoot(root);
  let current = root;
  try {
    for (const step of at.steps) {
      const entry = entryOf(handle, current, step);
      const shown = path.relative(root, path.join(current, step)).split(path.sep).join('/');
      let next: FileHandle | undefined;
      // Made, then opened; made again if it went in between (a command may remove it).
      for (let attempt = 1; next === undefined; attempt++) {
        if (options.create) {
          try {
            await mkdir(entry, { mode: 0o755 });
          } catch (error) {
            if (errorCode(error) !== 'EEXIST') throw error;
          }
        }
        try {
          next = await openStep(entry, shown);
        } catch (error) {
          if (!options.create || errorCode(error) !== 'ENOENT' || attempt >= MAX_MAKE_ATTEMPTS) throw error;
        }
      }
      await handle.close();
      handle = next;
      current = path.join(current, step);
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  const held = handle;
  const folder = current;
  return {
    path: folder,
    listingPath: hasProcfs() ? `${PROC_FD}/${held.fd}` : folder,
    entry: (name) => {
      checkEntryName(name);
      return entryOf(held, folder, name);
    },
    close: () => held.close(),
  };
}

/**
 * A file in a pinned folder opened for reading: a plain file with one name, and, when
 * `identity` is given, the very file made or checked before (a command may have put its
 * own in its place since). The caller closes it.
 */
export async function openPinnedFile(folder: PinnedFolder, name: string, identity?: FileIdentity): Promise<FileHandle> {
  const handle = await open(folder.entry(name), READ_FLAGS);
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.nlink !== 1) throw new Error(`${name} is no longer a plain file`);
    if (identity && (stats.dev !== identity.dev || stats.ino !== identity.ino)) throw new Error(`${name} was replaced`);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * A plain file's bytes at `relativePath` below `root` (a real path), read through held folders
 * and never through a link; undefined when it is not there, not a plain file with one name,
 * or larger than `maxBytes`. Synchronous, for a caller that cannot wait (the model's input is
 * built synchronously at each call).
 */
export function readPinnedFileSync(root: string, relativePath: string, maxBytes: number): Buffer | undefined {
  const parts = relativePath.split(/[/\\]/).filter(Boolean);
  const name = parts.pop();
  if (name === undefined) return undefined;
  const held: number[] = [];
  try {
    for (const part of [...parts, name]) checkEntryName(part);
    const rootFd = openSync(root, DIRECTORY_FLAGS);
    held.push(rootFd);
    if ((hasProcfs() ? readlinkSync(`${PROC_FD}/${rootFd}`) : realpathSync(root)) !== root) return undefined;
    let folder = root;
    for (const part of parts) {
      const next = openSync(
        hasProcfs() ? `${PROC_FD}/${held.at(-1)}/${part}` : path.join(folder, part),
        DIRECTORY_FLAGS,
      );
      held.push(next);
      folder = path.join(folder, part);
    }
    const fd = openSync(hasProcfs() ? `${PROC_FD}/${held.at(-1)}/${name}` : path.join(folder, name), READ_FLAGS);
    held.push(fd);
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.nlink !== 1 || stats.size > maxBytes) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    for (const fd of held) closeSync(fd);
  }
}

/**
 * A path that opens the very file `handle` holds, also for a worker thread or a child process
 * of the same user (`/proc/<pid>/fd/N`): what a library that takes a path reads, so it reads
 * what was checked. Without /proc, the file's path as given.
 */
export function heldFilePath(handle: FileHandle, fallback: string): string {
  return hasProcfs() ? `/proc/${process.pid}/fd/${handle.fd}` : fallback;
}

/** What the regular files in the folder and below take together, in bytes; 0 when it cannot be walked. */
export async function pinnedFolderBytes(at: FolderPath): Promise<number> {
  let folder: PinnedFolder;
  try {
    folder = await openPinnedFolder(at);
  } catch {
    return 0;
  }
  try {
    return await bytesIn(folder);
  } finally {
    await folder.close();
  }
}

async function bytesIn(folder: PinnedFolder): Promise<number> {
  let total = 0;
  for (const name of await listing(folder)) {
    const stats = await lstat(folder.entry(name)).catch(() => undefined);
    if (stats?.isFile()) total += stats.size;
    else if (stats?.isDirectory()) {
      const inner = await openPinnedFolder({ root: folder.path, steps: [name] }).catch(() => undefined);
      if (!inner) continue;
      try {
        total += await bytesIn(inner);
      } finally {
        await inner.close();
      }
    }
  }
  return total;
}

/**
 * Remove the folder `at` names (its last step) with everything in it, through descriptors
 * only: a link met anywhere is removed as a link, and a folder swapped for one during the
 * removal is never entered. Resolves false when there was nothing to remove.
 */
export async function removePinnedTree(at: FolderPath): Promise<boolean> {
  const name = at.steps.at(-1);
  if (name === undefined) throw new Error('removePinnedTree: the root itself is never removed');
  let parent: PinnedFolder;
  try {
    parent = await openPinnedFolder({ root: at.root, steps: at.steps.slice(0, -1) });
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || error instanceof NotAFolderError) return false;
    throw error;
  }
  try {
    return await removeEntry(parent, name);
  } finally {
    await parent.close();
  }
}

async function removeEntry(parent: PinnedFolder, name: string, look = 1): Promise<boolean> {
  const entry = parent.entry(name);
  // Looked at again when a command swapped the name between a folder and a link meanwhile.
  const again = (error: unknown): Promise<boolean> => {
    if (look >= MAX_REMOVAL_PASSES) throw error;
    return removeEntry(parent, name, look + 1);
  };
  let stats: Stats;
  try {
    stats = await lstat(entry);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
  if (!stats.isDirectory()) {
    try {
      await unlink(entry);
    } catch (error) {
      // A folder back in its place since the look.
      if (errorCode(error) === 'EISDIR' || errorCode(error) === 'EPERM') return again(error);
      ignoreMissing(error);
    }
    return true;
  }
  let inner: PinnedFolder;
  try {
    inner = await openPinnedFolder({ root: parent.path, steps: [name] });
  } catch (error) {
    // Swapped for a link or a file since the look: that is what goes.
    if (error instanceof NotAFolderError) return again(error);
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
  try {
    // Emptied again when a command added something meanwhile; a command that keeps adding wins
    // (the removal fails with ENOTEMPTY), but never makes the removal leave the folder.
    for (let pass = 1; ; pass++) {
      for (const child of await listing(inner)) await removeEntry(inner, child);
      try {
        await rmdir(entry);
        return true;
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOENT') return true;
        // Swapped for a link since it was opened: the link goes, never what it leads to.
        if (code === 'ENOTDIR') {
          await unlink(entry).catch(ignoreMissing);
          return true;
        }
        if (code !== 'ENOTEMPTY' || pass >= MAX_REMOVAL_PASSES) throw error;
      }
    }
  } finally {
    await inner.close();
  }
}

function listing(folder: PinnedFolder): Promise<string[]> {
  return readdir(folder.listingPath);
}

async function openRoot(root: string): Promise<FileHandle> {
  const moved = () => new Error(`${root} is not where it was (a link leads there): only real folders are worked in`);
  let handle: FileHandle;
  try {
    handle = await open(root, DIRECTORY_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if ((code === 'ENOTDIR' || code === 'ELOOP') && (await lstat(root).catch(() => undefined))?.isSymbolicLink())
      throw moved();
    throw error;
  }
  try {
    const real = hasProcfs() ? await readlink(`${PROC_FD}/${handle.fd}`) : await realpath(root);
    if (real !== root) throw moved();
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function openStep(entry: string, shown: string): Promise<FileHandle> {
  if (!hasProcfs()) {
    // The look before the open: see the header for what it cannot catch.
    const stats = await lstat(entry);
    if (!stats.isDirectory()) throw new NotAFolderError(shown);
  }
  try {
    return await open(entry, DIRECTORY_FLAGS);
  } catch (error) {
    // O_DIRECTORY|O_NOFOLLOW: a link fails with ELOOP or ENOTDIR, a file with ENOTDIR.
    const code = errorCode(error);
    if (code === 'ENOTDIR' || code === 'ELOOP') throw new NotAFolderError(shown);
    throw error;
  }
}

function entryOf(handle: FileHandle, folder: string, name: string): string {
  return hasProcfs() ? `${PROC_FD}/${handle.fd}/${name}` : path.join(folder, name);
}

function ignoreMissing(error: unknown): void {
  if (errorCode(error) !== 'ENOENT') throw error;
}

export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
