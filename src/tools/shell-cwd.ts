// The shell session's working directory, kept from one command to the next.
//
// One idea: where a command says it ended up is a claim, not a fact. Each command's EXIT trap
// writes `pwd -P` to a file made for it (the command can write there too), and the path is
// taken only once its real path is inside the workspace (or a granted folder); otherwise, and
// whenever the directory kept has been deleted or replaced by a link, the session goes back
// to the workspace root and says so in a note.
import { randomUUID } from 'node:crypto';
import { open, realpath, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Workspace } from './workspace.js';

/** Linux's PATH_MAX: a longer "working directory" is not one. */
const CWD_FILE_MAX_BYTES = 4096;

/**
 * A new, empty file for one command's trap to report its directory in. Created before the
 * command starts: the sandbox binds it in, and only an existing file can be bound.
 */
export async function createCwdFile(): Promise<string> {
  const cwdFile = path.join(os.tmpdir(), `chat-agent-cwd-${randomUUID()}`);
  await writeFile(cwdFile, '', { mode: 0o600 });
  return cwdFile;
}

export class ShellWorkingDirectory {
  /** Real absolute path of the current directory; always inside the workspace. */
  private current: string;

  constructor(private readonly workspace: Workspace) {
    this.current = workspace.root;
  }

  /** The real absolute path, where the next command starts. */
  get realPath(): string {
    return this.current;
  }

  /** Relative to the workspace root, as the model sees it. */
  get shown(): string {
    return this.workspace.relative(this.current);
  }

  /** Take the directory the command ended in, if it is inside the workspace. */
  async adopt(cwdFile: string, notes: string[]): Promise<void> {
    let reported: string;
    try {
      // The command can write to this file too: only a path's worth of it is read.
      reported = (await readPrefix(cwdFile, CWD_FILE_MAX_BYTES)).trim();
    } catch {
      return; // the trap did not run (killed, or `exec` replaced the shell): keep the old cwd
    }
    if (!reported) return;
    const real = await realpath(reported).catch(() => null);
    if (real !== null && this.workspace.contains(real)) {
      this.current = real;
      return;
    }
    this.current = this.workspace.root;
    notes.push(
      real === null
        ? `the working directory ${reported} no longer exists; it is back at the workspace root`
        : `the command moved to ${reported}, outside the workspace; the working directory is back at the workspace root`,
    );
  }

  /** The cwd may have been deleted (or replaced by a link) by an earlier command. */
  async check(notes: string[]): Promise<void> {
    const real = await realpath(this.current).catch(() => null);
    const isDirectory =
      real !== null &&
      (await stat(real).then(
        (s) => s.isDirectory(),
        () => false,
      ));
    if (real !== null && isDirectory && this.workspace.contains(real)) return;
    notes.push(`the working directory ${this.shown} no longer exists; it is back at the workspace root`);
    this.current = this.workspace.root;
  }
}

async function readPrefix(file: string, maxBytes: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
