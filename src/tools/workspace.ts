// The workspace: the one directory the file tools may touch, and the gate every path
// argument passes through.
//
// One idea: a path is judged by where it really lands, not by how it is spelled. Each
// argument is resolved against the workspace root, then through every symlink (`realpath`;
// for a file that does not exist yet, through its nearest existing parent, following
// dangling links by hand), and only a result inside the root is accepted. A name can be
// swapped after that check, so the tools then open the resolved path through safe-open.ts,
// which judges the open descriptor again (where it really is, how many names it has)
// before a byte is read or written.
//
// Granted directories (request_directory) widen the roots, never to the bot itself: not
// `/`, not the bot's home folder, not a folder holding the workspace, and nothing that
// overlaps the bot's own files (its project and store folders, .env, MCP config).
import { chownSync, existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { readlink, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A request_directory grant the workspace will not make, with the reason in plain words. */
export class GrantRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GrantRefusedError';
  }
}

export interface WorkspaceOptions {
  /**
   * Absolute paths of the bot's own files and folders (project folder, store folder, .env,
   * MCP config). No granted directory may hold one of them or lie inside one.
   */
  protectedPaths?: readonly string[];
  /** The bot user's home folder (default `os.homedir()`); it and its ancestors are never granted. */
  homeDir?: string;
  /**
   * The sandbox owner (the run-as user of a root bot, src/sandbox/run-as.ts): the workspace
   * folder, when this creates it, and what the file tools create are given to it, so a file
   * write_file made can be changed by a command and the other way round.
   */
  owner?: WorkspaceOwner;
}

export interface WorkspaceOwner {
  uid: number;
  gid: number;
}

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
    /** Real paths of the bot's own files and folders, and of its home folder. */
    private readonly guarded: { protectedPaths: readonly string[]; home: string },
    /** Who owns what the tools create (see WorkspaceOptions.owner); undefined: the bot. */
    readonly owner?: WorkspaceOwner,
  ) {}

  /**
   * Let the tools also work in `dir` (a person granted it through request_directory).
   * Returns its real path. The same rules apply there: symlinks are followed, escapes refused.
   * Throws `GrantRefusedError` for a folder that would reach the bot itself (see the header).
   * The root, or a folder inside it, is already reachable: granting it changes nothing.
   */
  grant(dir: string): string {
    const real = realpathSync(path.resolve(this.root, dir));
    if (!statSync(real).isDirectory()) throw new Error(`not a directory: ${dir}`);
    if (this.contains(real)) return real;
    this.refuseBotFolders(real);
    this.granted.push(real);
    return real;
  }

  /**
   * Why `dir` could not be granted, or null: asked before a person is, so nobody is asked
   * for a grant that would be refused anyway.
   */
  grantRefusal(dir: string): string | null {
    try {
      const real = realpathSync(path.resolve(this.root, dir));
      if (!statSync(real).isDirectory()) return `not a directory: ${dir}`;
      if (!this.contains(real)) this.refuseBotFolders(real);
      return null;
    } catch (error) {
      if (error instanceof GrantRefusedError) return error.message;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return `no such folder: ${dir}`;
      return `cannot be granted: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** The roots the tools may work in: the workspace, then granted directories. */
  get roots(): readonly string[] {
    return [this.root, ...this.granted];
  }

  /** Open (creating it if missing) the workspace at `dir`. Synchronous: once per session. */
  static open(dir: string, options: WorkspaceOptions = {}): Workspace {
    const existed = existsSync(dir);
    mkdirSync(dir, { recursive: true });
    const root = realpathSync(dir);
    if (!statSync(root).isDirectory()) throw new Error(`the workspace is not a directory: ${dir}`);
    if (!existed && options.owner) chownSync(root, options.owner.uid, options.owner.gid);
    return new Workspace(
      root,
      {
        protectedPaths: (options.protectedPaths ?? []).map((protectedPath) => realpathIfExists(path.resolve(protectedPath))),
        home: realpathIfExists(path.resolve(options.homeDir ?? os.homedir())),
      },
      options.owner,
    );
  }

  private refuseBotFolders(real: string): void {
    const { home, protectedPaths } = this.guarded;
    if (real === path.parse(real).root) throw new GrantRefusedError(`refused: ${real} is the whole file system`);
    if (real === home) throw new GrantRefusedError(`refused: ${real} is the bot's home folder`);
    if (isInside(home, real)) throw new GrantRefusedError(`refused: ${real} holds the bot's home folder (${home})`);
    // Granting a folder around the workspace would also be granting its neighbours.
    if (isInside(this.root, real)) throw new GrantRefusedError(`refused: ${real} holds the workspace (${this.root}); grant a folder beside it`);
    for (const guarded of protectedPaths) {
      if (real === guarded) throw new GrantRefusedError(`refused: ${real} is one of the bot's own folders`);
      if (isInside(guarded, real)) throw new GrantRefusedError(`refused: ${real} holds the bot's own files (${guarded})`);
      if (isInside(real, guarded)) throw new GrantRefusedError(`refused: ${real} is inside the bot's own files (${guarded})`);
    }
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

/** A protected path as it really is, if it exists yet; as given (absolute) otherwise. */
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
