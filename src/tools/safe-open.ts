// Opening files and folders for the file tools so that what is opened is what was checked.
//
// One idea: judge the descriptor, not the name. `Workspace.resolve` checks a path, but a
// path is looked up again by every call that takes it, and a person with a shell in the
// workspace can swap a folder for a link in between (11 of 711 read_file calls returned
// ../.env that way) or plant a hard link to a file outside. So each file is opened without
// following a link at its last step (O_NOFOLLOW), and before a byte is read or written we
// ask the kernel where the open descriptor really is (/proc/self/fd; without it, see
// descriptorPath) and how many names it has. Outside every root, or more than one name (a
// hard link may be the other half of ../.env), and the descriptor is closed and the call
// refused. Only regular files are opened: a FIFO would block a read forever, a device is
// nobody's text.
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import {
  errorCode,
  FileRefusedError,
  nonRegularError,
  outsideError,
  refusalFor,
  symlinkError,
} from './file-refusals.js';
import type { Workspace } from './workspace.js';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer
// (the fstat then refuses it); on a regular file it changes nothing. No O_TRUNC anywhere:
// a file is emptied only once its descriptor has been verified.
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const EDIT_FLAGS = O_RDWR | O_NOFOLLOW | O_NONBLOCK;
const WRITE_FLAGS = O_WRONLY | O_NOFOLLOW | O_NONBLOCK;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** A file that comes and goes between our create and open attempts is given up on after this. */
const MAX_OPEN_ATTEMPTS = 3;
/** Content is written in pieces of this size. */
const WRITE_CHUNK_BYTES = 1024 * 1024;

const PROC_FD = '/proc/self/fd';
let procfsMounted: boolean | undefined;
function hasProcfs(): boolean {
  procfsMounted ??= existsSync(PROC_FD);
  return procfsMounted;
}

export interface OpenedFile {
  handle: FileHandle;
  /** Where the descriptor really is (verified inside a workspace root). */
  realPath: string;
  /** The descriptor's fstat, taken when it was verified. */
  stats: Stats;
  /** This call created the file (write only). */
  created: boolean;
}

/** A verified, open regular file for reading. The caller closes `handle`. */
export async function openForReading(workspace: Workspace, realPath: string, shown: string): Promise<OpenedFile> {
  await refuseNonRegular(realPath, shown, { missingIsFine: false });
  const handle = await openOrRefuse(realPath, READ_FLAGS, shown);
  return verifyFile(workspace, handle, realPath, shown, false);
}

/** A verified, open regular file for reading and then replacing (edit_file). The caller closes it. */
export async function openForEditing(workspace: Workspace, realPath: string, shown: string): Promise<OpenedFile> {
  await refuseNonRegular(realPath, shown, { missingIsFine: false });
  const handle = await openOrRefuse(realPath, EDIT_FLAGS, shown);
  return verifyFile(workspace, handle, realPath, shown, false);
}

/**
 * A verified, open regular file for writing, created (with its missing parent folders) if
 * it does not exist. Nothing is truncated yet: call `replaceContent`. The caller closes it.
 */
export async function openForWriting(workspace: Workspace, realPath: string, shown: string): Promise<OpenedFile> {
  const parent = await openFolderCreating(workspace, path.dirname(realPath));
  try {
    const target = parent.entryPath(path.basename(realPath));
    await refuseNonRegular(target, shown, { missingIsFine: true });
    for (let attempt = 0; attempt < MAX_OPEN_ATTEMPTS; attempt++) {
      // O_EXCL first, to know whether we created the file: only then may a refusal remove it.
      try {
        const handle = await open(target, WRITE_FLAGS | O_CREAT | O_EXCL, 0o666);
        const file = await verifyFile(workspace, handle, target, shown, true);
        await giveToOwner(workspace, file.handle);
        return file;
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw refusalFor(error, shown);
      }
      try {
        const handle = await open(target, WRITE_FLAGS);
        return await verifyFile(workspace, handle, target, shown, false);
      } catch (error) {
        // Deleted between the two opens: try creating it again.
        if (errorCode(error) !== 'ENOENT') throw refusalFor(error, shown);
      }
    }
    throw new FileRefusedError(
      'unstable',
      `${shown} kept appearing and disappearing while it was being opened; try again`,
    );
  } finally {
    await parent.close();
  }
}

/**
 * Replace the whole content of a verified file through its descriptor. The signal is checked
 * once, before the file is emptied: a stop halfway would leave a half-written file, which is
 * worse than a finished write.
 */
export async function replaceContent(file: OpenedFile, bytes: Uint8Array, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  await file.handle.truncate(0);
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await file.handle.write(
      bytes,
      written,
      Math.min(WRITE_CHUNK_BYTES, bytes.length - written),
      written,
    );
    written += bytesWritten;
  }
}

export interface OpenedDirectory {
  /** Where the descriptor really is (verified inside a workspace root). */
  realPath: string;
  /** What to give readdir to list this very folder, even if its path was swapped since. */
  listingPath: string;
  /** A path naming `name` inside this very folder (for lstat, readlink); valid until `close`. */
  entryPath(name: string): string;
  /** Chown the very folder held open to the workspace's owner, if it has one (a folder we made). */
  giveToOwner(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A verified, open folder, for listing. On Linux the listing goes through the descriptor
 * (/proc/self/fd/N), so a folder swapped for a link after the check is never listed. Without
 * /proc the folder is listed by its path right after the check, and a swap in that instant
 * can show another folder's names (see descriptorPath).
 */
export async function openDirectory(workspace: Workspace, realPath: string, shown: string): Promise<OpenedDirectory> {
  return openVerifiedDirectory(workspace, realPath, shown, false);
}

/** Open a folder at `openAs` without following a link there, and check where it really is. */
async function openVerifiedDirectory(
  workspace: Workspace,
  openAs: string,
  shown: string,
  made: boolean,
): Promise<OpenedDirectory> {
  const handle = await openDirectoryOrRefuse(openAs, shown);
  try {
    const stats = await handle.stat();
    const real = await descriptorPath(handle, openAs, stats, shown);
    if (!workspace.contains(real)) {
      if (made) await removeIfStill(real, stats, 'folder');
      throw outsideError(shown);
    }
    const viaDescriptor = hasProcfs() ? `${PROC_FD}/${handle.fd}` : null;
    return {
      realPath: real,
      listingPath: viaDescriptor ?? real,
      entryPath: (name) => path.join(viaDescriptor ?? real, name),
      giveToOwner: () => giveToOwner(workspace, handle),
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * What the file tools create belongs to the sandbox owner when there is one (a root bot's
 * commands run as an unprivileged uid and must be able to change it). Through the verified
 * descriptor, so no name is looked up again.
 */
async function giveToOwner(workspace: Workspace, handle: FileHandle): Promise<void> {
  const owner = workspace.owner;
  if (owner) await handle.chown(owner.uid, owner.gid);
}

/** Everything a tool checks on an open descriptor before using it; closes it on refusal. */
async function verifyFile(
  workspace: Workspace,
  handle: FileHandle,
  openedAs: string,
  shown: string,
  created: boolean,
): Promise<OpenedFile> {
  let real: string | undefined;
  let stats: Stats | undefined;
  try {
    stats = await handle.stat();
    if (!stats.isFile()) throw nonRegularError(stats, shown);
    real = await descriptorPath(handle, openedAs, stats, shown);
    if (!workspace.contains(real)) throw outsideError(shown);
    if (stats.nlink > 1) {
      throw new FileRefusedError(
        'hard-link',
        `refused: ${shown} has ${stats.nlink} hard links (other names for the same file), and another one may lie outside the workspace, so the file tools do not open it`,
      );
    }
    return { handle, realPath: real, stats, created };
  } catch (error) {
    if (created && real !== undefined && stats !== undefined) await removeIfStill(real, stats, 'file');
    await handle.close();
    throw error;
  }
}

/**
 * The folder a new file goes in, open and verified, with its missing ancestors created one
 * at a time, each through the descriptor of the verified folder above it and checked once
 * made. On Linux `/proc/self/fd/N/name` names `name` inside the very folder descriptor N
 * holds (what mkdirat/openat do), so once the first existing ancestor is verified, no swap
 * of a folder on the path can redirect a folder or file we create.
 *
 * What stays out of reach of Node, which has no mkdirat/openat: without /proc (not Linux),
 * `mkdir` and `open` look their path up by name again, so a folder on the path swapped for a
 * link in that instant makes the new folder or file outside. When we see it (its descriptor
 * is outside) we remove it if it is still the empty thing we made, and refuse; when we do
 * not, or the removal loses a race as well, an empty folder or file is left outside. That
 * is acceptable: it holds nothing and discloses nothing, and no byte is written except
 * through a descriptor that passed the check. On Linux nothing is made outside, except in a
 * verified folder moved out of the workspace between its check and our mkdir; the same
 * removal covers that.
 */
async function openFolderCreating(workspace: Workspace, folder: string): Promise<OpenedDirectory> {
  const missing: string[] = [];
  let existing = folder;
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (error) {
      if (errorCode(error) !== 'ENOENT' || path.dirname(existing) === existing) throw error;
      missing.unshift(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
  let current = await openVerifiedDirectory(workspace, existing, workspace.relative(existing), false);
  try {
    for (const name of missing) {
      const at = current.entryPath(name);
      let made = true;
      try {
        await mkdir(at);
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
        made = false; // someone else made it meanwhile: check it all the same
      }
      const next = await openVerifiedDirectory(
        workspace,
        at,
        workspace.relative(path.join(current.realPath, name)),
        made,
      );
      if (made) await next.giveToOwner();
      await current.close();
      current = next;
    }
    return current;
  } catch (error) {
    await current.close();
    throw error;
  }
}

/**
 * Remove what a refused call created outside, if the name still holds the very file or
 * folder we made. The name is looked up through the descriptor of its parent folder, so a
 * parent swapped meanwhile can never make us remove someone else's file of the same name.
 */
async function removeIfStill(real: string, made: Stats, kind: 'file' | 'folder'): Promise<void> {
  try {
    const parent = await open(path.dirname(real), DIRECTORY_FLAGS);
    try {
      const name = path.basename(real);
      const entry = hasProcfs() ? `${PROC_FD}/${parent.fd}/${name}` : real;
      const there = await lstat(entry);
      if (there.dev !== made.dev || there.ino !== made.ino) return;
      await (kind === 'file' ? unlink(entry) : rmdir(entry));
    } finally {
      await parent.close();
    }
  } catch {
    // Gone already, filled, or moved: what is left is empty or not ours (see openFolderCreating).
  }
}

/**
 * Where an open descriptor really is. Linux tells us (/proc/self/fd/N; a deleted file reads
 * "… (deleted)", still under the folder it was in).
 *
 * Without /proc (macOS, the BSDs) Node can neither ask where a descriptor is nor open
 * relative to one, so the path's realpath is accepted when the inode there is the one we
 * hold. That still refuses hard links, planted links and most swaps, but a swap timed
 * between the realpath and the stat passes (measured: 13 of 3,000 reads in the race test):
 * where a hostile person shares the workspace, run the bot on Linux.
 */
async function descriptorPath(handle: FileHandle, openedAs: string, stats: Stats, shown: string): Promise<string> {
  if (hasProcfs()) return readlink(`${PROC_FD}/${handle.fd}`);
  const real = await realpath(openedAs);
  const there = await stat(real);
  if (there.dev !== stats.dev || there.ino !== stats.ino) {
    throw new FileRefusedError('unstable', `refused: ${shown} changed while it was being opened; try again`);
  }
  return real;
}

/**
 * Refuse a directory, link or special file before opening it (opening a device can have
 * effects of its own). The descriptor is checked again after the open: this is only the
 * polite first look.
 */
async function refuseNonRegular(realPath: string, shown: string, options: { missingIsFine: boolean }): Promise<void> {
  let stats: Stats;
  try {
    stats = await lstat(realPath);
  } catch (error) {
    if (options.missingIsFine && errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (stats.isSymbolicLink()) throw symlinkError(shown);
  if (!stats.isFile()) throw nonRegularError(stats, shown);
}

async function openOrRefuse(realPath: string, flags: number, shown: string): Promise<FileHandle> {
  try {
    return await open(realPath, flags);
  } catch (error) {
    throw refusalFor(error, shown);
  }
}

async function openDirectoryOrRefuse(realPath: string, shown: string): Promise<FileHandle> {
  try {
    return await open(realPath, DIRECTORY_FLAGS);
  } catch (error) {
    // O_DIRECTORY|O_NOFOLLOW on a link fails with ENOTDIR, as on a file: tell them apart.
    if (errorCode(error) === 'ENOTDIR' && (await lstat(realPath).catch(() => null))?.isSymbolicLink())
      throw symlinkError(shown);
    throw error;
  }
}
