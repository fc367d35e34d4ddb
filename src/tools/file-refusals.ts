// Why the file tools refused to open a file, in words the model can act on.
//
// One idea: a refusal is an answer, not a crash. Each one carries a reason a tool can branch
// on (read_file points a directory to list_dir, search counts what it passed over) and a
// sentence that names the file as the model knows it, never by the host's path. Both openers
// (safe-open.ts, and granted-writes.ts for a root bot's granted folders) refuse with it.
import type { Stats } from 'node:fs';

export type RefusalReason = 'directory' | 'special' | 'symlink' | 'outside' | 'hard-link' | 'unstable';

/** A file the tools will not open, with the reason in words the model can act on. */
export class FileRefusedError extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'FileRefusedError';
  }
}

/** An open failure in words: the errno cases that mean "not a regular file" or "a link". */
export function refusalFor(error: unknown, shown: string): unknown {
  switch (errorCode(error)) {
    case 'ELOOP':
      return symlinkError(shown);
    case 'EISDIR':
      return new FileRefusedError('directory', `${shown} is a directory`);
    case 'ENXIO': // a socket, or a FIFO nobody reads
      return new FileRefusedError(
        'special',
        `${shown} is not a regular file (a socket or a named pipe); only regular files can be opened`,
      );
    default:
      return error;
  }
}

export function nonRegularError(stats: Stats, shown: string): FileRefusedError {
  if (stats.isDirectory()) return new FileRefusedError('directory', `${shown} is a directory`);
  const kind = stats.isFIFO()
    ? 'a named pipe'
    : stats.isSocket()
      ? 'a socket'
      : stats.isCharacterDevice() || stats.isBlockDevice()
        ? 'a device'
        : 'a special file';
  return new FileRefusedError('special', `${shown} is not a regular file (${kind}); only regular files can be opened`);
}

export function symlinkError(shown: string): FileRefusedError {
  return new FileRefusedError(
    'symlink',
    `refused: ${shown} turned into a symbolic link after its path was checked; try again`,
  );
}

export function outsideError(shown: string): FileRefusedError {
  return new FileRefusedError(
    'outside',
    `refused: ${shown} led outside the workspace when it was opened (a folder on its path was replaced by a link)`,
  );
}

export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
