// The workspace: the one directory the file tools may touch, and the gate every path
// argument passes through.
//
// One idea: a path is judged by where it really lands, not by how it is spelled. Each
// argument is resolved against the workspace root, then through every symlink (`realpath`;
// for a file that does not exist yet, through its nearest existing parent, following
// dangling links by hand), and only a result inside the root is accepted. Tools then
// operate on that resolved path, never on the raw argument, so the check and the use agree.
//
// Not covered: a symlink swapped in between the check and the use (the tools run inside
// the agent's own workspace, and the shell, which could do that, is gated by approval).
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

export class WorkspaceEscapeError extends Error {
  constructor(input: string, resolved: string, root: string) {
    super(`path escapes the workspace: ${input} resolves to ${resolved}, outside ${root}`);
    this.name = 'WorkspaceEscapeError';
  }
}

/** Linux gives up after 40 links (ELOOP); so do we, so a link cycle cannot hang a tool. */
const MAX_SYMLINK_HOPS = 40;

export class Workspace {
  /** Directories a person granted this session (request_directory), real paths. */
  private readonly granted: string[] = [];

  private constructor(
    /** The real (symlink-free) absolute path of the root. */
    readonly root: string,
  ) {}

  /**
   * Let the tools also work in `dir` (a person granted it through request_directory).
   * Returns its real path. The same rules apply there: symlinks are followed, escapes refused.
   */
  grant(dir: string): string {
    const real = realpathSync(path.resolve(this.root, dir));
    if (!statSync(real).isDirectory()) throw new Error(`not a directory: ${dir}`);
    if (!this.contains(real)) this.granted.push(real);
    return real;
  }

  /** The roots the tools may work in: the workspace, then granted directories. */
  get roots(): readonly string[] {
    return [this.root, ...this.granted];
  }

  /** Open (creating it if missing) the workspace at `dir`. Synchronous: once per session. */
  static open(dir: string): Workspace {
    mkdirSync(dir, { recursive: true });
    const root = realpathSync(dir);
    if (!statSync(root).isDirectory()) throw new Error(`the workspace is not a directory: ${dir}`);
    return new Workspace(root);
  }

  /**
   * The real absolute path `input` designates, if it is inside the workspace. Relative
   * paths start at the root; absolute paths are accepted when they land inside it.
   */
  async resolve(input: string): Promise<string> {
    if (input.includes('\0')) throw new Error(`invalid path (it contains a NUL byte): ${JSON.stringify(input)}`);
    const lexical = path.resolve(this.root, input);
    const real = await realpathAllowingMissing(lexical);
    if (!this.contains(real)) throw new WorkspaceEscapeError(input, real, this.root);
    return real;
  }

  contains(realPath: string): boolean {
    return this.roots.some((root) => isInside(realPath, root));
  }

  /**
   * How a path is shown to the model: relative to the workspace root, `/`-separated, `.`
   * for the root; a path in a granted directory is shown absolute.
   */
  relative(realPath: string): string {
    if (!isInside(realPath, this.root)) return realPath;
    const relative = path.relative(this.root, realPath);
    return relative === '' ? '.' : relative.split(path.sep).join('/');
  }
}

function isInside(realPath: string, root: string): boolean {
  if (realPath === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return realPath.startsWith(prefix);
}

/**
 * `realpath` that also works for paths that do not exist yet: the missing tail is appended
 * to the real path of the nearest existing ancestor. A missing entry that is a dangling
 * symlink is followed by hand, because creating a file through it would create its target.
 */
async function realpathAllowingMissing(target: string, hops = 0): Promise<string> {
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
