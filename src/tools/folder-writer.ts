// Who writes files into folders the workspace's commands can change, and how.
//
// One idea: a file the bot writes there is made in a folder held by descriptor
// (pinned-folder.ts), created new (O_CREAT|O_EXCL, which never follows a link) or opened
// without following one, and written through its own descriptor: no name is looked up again
// once checked. Two writers keep that contract: this one, in the bot's own process, for a bot
// that is not root (its commands run as its own user); and, for a root bot, one that does the
// same as the run-as user of its commands in a helper process (src/sandbox/run-as-writer.ts),
// so that a mistake can at worst write where that user could anyway, and what is made belongs
// to that user from its first byte (no chown, which would follow the name again).
import { constants } from 'node:fs';
import { link, lstat, open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import {
  checkEntryName,
  errorCode,
  openPinnedFolder,
  type FileIdentity,
  type FolderPath,
  type PinnedFolder,
} from './pinned-folder.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
const CREATE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK;
const WRITE_FLAGS = O_WRONLY | O_NOFOLLOW | O_NONBLOCK;
/** `name`, `name-2` … `name-1000`: past that, a folder of that many files is refused. */
export const MAX_UNIQUE_NAMES = 1000;

/** A file open for writing in a folder a command can change. */
export interface WrittenFile {
  /** Its name in the folder (a unique name may differ from the one asked for). */
  readonly name: string;
  /** The folder's path. */
  readonly folder: string;
  /** Whether this call made it. */
  readonly created: boolean;
  /** Which file it is: a later reader checks it finds the same. */
  readonly identity: FileIdentity;
  /** Its size and number of names when opened (a file with more than one name is refused by the tools). */
  readonly size: number;
  readonly nlink: number;
  /** Append bytes at the current position. */
  write(bytes: Uint8Array): Promise<void>;
  /** Empty it, and write from the start again. */
  truncate(): Promise<void>;
  /** Give it `name`, or `name-2`, `name-3`…: never over another file. Resolves with the name it got. */
  rename(name: string): Promise<string>;
  /** Close it; resolves with its size. */
  close(): Promise<number>;
  /** Close it and remove it if this call made it and its name still holds it. */
  discard(): Promise<void>;
}

export interface FolderWriter {
  /** Make the folder `at` names (each missing step), never through a link. */
  makeFolder(at: FolderPath): Promise<void>;
  /** A new file in `at` (made if missing) named `name`, or `name-2`, `name-3`… when taken. */
  createUnique(at: FolderPath, name: string): Promise<WrittenFile>;
  /** `name` in `at` (made if missing) opened for writing, created when it does not exist. Refuses anything but a regular file. */
  openForWriting(at: FolderPath, name: string): Promise<WrittenFile>;
  /** Let go of what the writer holds (a helper process); it starts again when next used. */
  close(): Promise<void>;
}

/** A file name made unique with a counter before its extension: `report-2.csv`. */
function numberedName(name: string, n: number): string {
  if (n === 1) return name;
  const ext = path.extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  return `${stem}-${n}${ext}`;
}

/** A name past MAX_UNIQUE_NAMES taken. */
function tooManyNames(name: string): Error {
  return new Error(`a thousand files named like ${name} are already here`);
}

/** A non-regular file where a file was to be written, in words. */
export class NotAFileError extends Error {
  constructor(
    readonly shown: string,
    readonly kind: 'link' | 'directory' | 'special',
  ) {
    super(
      kind === 'link'
        ? `${shown} is a symbolic link`
        : kind === 'directory'
          ? `${shown} is a directory`
          : `${shown} is not a regular file`,
    );
    this.name = 'NotAFileError';
  }
}

/** The writer of a bot that is not root: in its own process, as its own user. */
export class InProcessWriter implements FolderWriter {
  async makeFolder(at: FolderPath): Promise<void> {
    const folder = await openPinnedFolder(at, { create: true });
    await folder.close();
  }

  async createUnique(at: FolderPath, name: string): Promise<WrittenFile> {
    checkEntryName(name);
    const folder = await openPinnedFolder(at, { create: true });
    try {
      for (let n = 1; n <= MAX_UNIQUE_NAMES; n++) {
        const candidate = numberedName(name, n);
        let handle: FileHandle;
        try {
          handle = await open(folder.entry(candidate), CREATE_FLAGS, 0o644);
        } catch (error) {
          if (errorCode(error) === 'EEXIST') continue;
          throw error;
        }
        return await heldFile(folder, handle, candidate, true);
      }
      throw tooManyNames(name);
    } catch (error) {
      await folder.close();
      throw error;
    }
  }

  async openForWriting(at: FolderPath, name: string): Promise<WrittenFile> {
    checkEntryName(name);
    const folder = await openPinnedFolder(at, { create: true });
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          return await heldFile(folder, await open(folder.entry(name), CREATE_FLAGS, 0o666), name, true);
        } catch (error) {
          if (errorCode(error) !== 'EEXIST') throw error;
        }
        const there = await lstat(folder.entry(name)).catch(() => undefined);
        if (there?.isSymbolicLink()) throw new NotAFileError(name, 'link');
        if (there?.isDirectory()) throw new NotAFileError(name, 'directory');
        if (there && !there.isFile()) throw new NotAFileError(name, 'special');
        try {
          return await heldFile(folder, await open(folder.entry(name), WRITE_FLAGS), name, false);
        } catch (error) {
          // Removed between the two opens: make it again.
          if (errorCode(error) !== 'ENOENT') throw writeOpenError(error, name);
        }
      }
      throw new Error(`${name} kept appearing and disappearing while it was being opened; try again`);
    } catch (error) {
      await folder.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    // Nothing held between calls.
  }
}

/** The file as WrittenFile; owns `folder` and `handle` from here on (both closed by close or discard). */
async function heldFile(
  folder: PinnedFolder,
  handle: FileHandle,
  name: string,
  created: boolean,
): Promise<WrittenFile> {
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new NotAFileError(name, stats.isDirectory() ? 'directory' : 'special');
  }
  const identity = { dev: stats.dev, ino: stats.ino };
  let current = name;
  let position = 0;
  let closed = false;
  const closeAll = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await handle.close().catch(() => undefined);
    await folder.close().catch(() => undefined);
  };
  const stillOurs = async (entryName: string): Promise<boolean> => {
    const there = await lstat(folder.entry(entryName)).catch(() => undefined);
    return there !== undefined && there.dev === identity.dev && there.ino === identity.ino;
  };
  return {
    get name() {
      return current;
    },
    folder: folder.path,
    created,
    identity,
    size: stats.size,
    nlink: stats.nlink,
    async write(bytes) {
      let written = 0;
      while (written < bytes.byteLength) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.byteLength - written, position);
        written += bytesWritten;
        position += bytesWritten;
      }
    },
    async truncate() {
      await handle.truncate(0);
      position = 0;
    },
    async rename(wanted) {
      checkEntryName(wanted);
      if (!(await stillOurs(current))) throw new Error(`${current} was replaced while it was being saved`);
      for (let n = 1; n <= MAX_UNIQUE_NAMES; n++) {
        const candidate = numberedName(wanted, n);
        if (candidate === current) return current;
        try {
          // A second name, then the first one goes: link() never replaces what is there.
          await link(folder.entry(current), folder.entry(candidate));
        } catch (error) {
          if (errorCode(error) === 'EEXIST') continue;
          throw error;
        }
        if (await stillOurs(current)) await unlink(folder.entry(current)).catch(() => undefined);
        current = candidate;
        return current;
      }
      throw tooManyNames(wanted);
    },
    async close() {
      const { size } = await handle.stat();
      await closeAll();
      return size;
    },
    async discard() {
      if (created && (await stillOurs(current))) await unlink(folder.entry(current)).catch(() => undefined);
      await closeAll();
    },
  };
}

function writeOpenError(error: unknown, name: string): unknown {
  switch (errorCode(error)) {
    case 'ELOOP':
      return new NotAFileError(name, 'link');
    case 'EISDIR':
      return new NotAFileError(name, 'directory');
    case 'ENXIO':
      return new NotAFileError(name, 'special');
    default:
      return error;
  }
}
