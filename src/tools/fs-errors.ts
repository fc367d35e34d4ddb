// File-system failures in words the model can act on.
//
// One idea: the model sees workspace-relative paths and plain reasons ("no such file"),
// never a Node errno string with the host's absolute paths in it: it cannot act on
// "ENOENT: open '/srv/agent/ws/x'", and the host layout is none of its business.

export function describeFsError(error: unknown, shownPath: string): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new Error(`no such file or directory: ${shownPath}`);
    case 'EISDIR':
      return new Error(`${shownPath} is a directory`);
    case 'ENOTDIR':
      return new Error(`${shownPath}: a part of this path is a file, not a directory`);
    case 'EACCES':
    case 'EPERM':
      return new Error(`permission denied: ${shownPath}`);
    case 'ELOOP':
      return new Error(`${shownPath}: too many levels of symbolic links`);
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}
