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
// A path outside is refused in the same words whether or not it exists, and without saying
// where it led: the answer must not tell one conversation what lies in another's folder.
//
// Granted directories (request_directory) widen the roots, never to the bot itself: not
// `/`, not the bot's home folder, not a folder holding the workspace, nothing that
// overlaps the bot's own files (its project and store folders, .env, MCP config), no
// system folder (grant-rules.ts), nothing in WORKSPACE_DIR outside this conversation's own
// folder (another conversation's files), and, with GRANT_ROOTS, nothing outside those; a bot
// running as root, without GRANT_ROOTS, also nothing in /home, /opt, /srv, /mnt, /media nor
// another user's folder. A root bot's file tools write in granted folders as its commands'
// run-as user (`grantWriter`), so a grant gives them no more than it gives the commands.
import { chownSync, existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FolderWriter } from './folder-writer.js';
import { isInside, realpathAllowingMissing, realpathIfExists } from './real-paths.js';
import {
  accessText,
  botCanWrite,
  otherUsersFolderOf,
  outsideGrantRoots,
  ownerCanWrite,
  reservedTreeOf,
  systemFolderOf,
  type DirectoryAccess,
  type ShellWriteCheck,
} from './grant-rules.js';

/** A request_directory grant the workspace will not make, with the reason in plain words. */
class GrantRefusedError extends Error {
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
   * WORKSPACE_DIR, when the workspace is one conversation's folder in it (WORKSPACE_SCOPE
   * thread or channel): nothing else in it (another conversation's folder) may be granted,
   * nor a folder holding it.
   */
  base?: string;
  /** GRANT_ROOTS, real paths (grant-rules.ts parseGrantRoots): grants only inside one of them. Empty: no such limit. */
  grantRoots?: readonly string[];
  /** Whether shell commands could write a folder, for the card (default: the owner's access by its permission bits, else the bot's own). */
  shellCanWrite?: ShellWriteCheck;
  /**
   * The sandbox owner (the run-as user of a root bot, src/sandbox/run-as.ts): the workspace
   * folder, when this creates it, and what the file tools create are given to it, so a file
   * write_file made can be changed by a command and the other way round.
   */
  owner?: WorkspaceOwner;
  /**
   * The writer of a root bot's file tools in granted folders: its commands' run-as user's
   * (src/sandbox/run-as-writer.ts). Unset: they write as the bot.
   */
  grantWriter?: FolderWriter;
  /** The bot's uid (default: this process's): a root bot grants less (see the header). */
  botUid?: number;
}

export interface WorkspaceOwner {
  uid: number;
  gid: number;
}

class WorkspaceEscapeError extends Error {
  constructor(input: string) {
    // Never where it led: that would say what exists outside (another conversation's files).
    super(`path escapes the workspace: ${input} is outside it`);
    this.name = 'WorkspaceEscapeError';
  }
}

/** What a person is shown before granting a folder: where it really is, and what the tools may do there. */
export interface GrantPreview {
  /** The folder's real path: what is granted, whatever the model spelled. */
  path: string;
  access: DirectoryAccess;
  /** `access` in words, for the card. */
  accessText: string;
}

export class Workspace {
  /** Directories a person granted this session (request_directory), real paths. */
  private readonly granted: string[] = [];

  private constructor(
    /** The real (symlink-free) absolute path of the root. */
    readonly root: string,
    /** Real paths of the bot's own files and folders, of its home folder, WORKSPACE_DIR and GRANT_ROOTS; whether the bot is root. */
    private readonly guarded: {
      protectedPaths: readonly string[];
      home: string;
      base: string | undefined;
      grantRoots: readonly string[];
      botIsRoot: boolean;
    },
    private readonly shellCanWrite: ShellWriteCheck,
    /** Who owns what the tools create (see WorkspaceOptions.owner); undefined: the bot. */
    readonly owner?: WorkspaceOwner,
    private readonly grantWriter?: FolderWriter,
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
    this.refuseUngrantable(real);
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
      if (!this.contains(real)) this.refuseUngrantable(real);
      return null;
    } catch (error) {
      if (error instanceof GrantRefusedError) return error.message;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        // A missing system folder (`/boot` in a container) is refused as one, not as missing; so is a root bot's reserved tree.
        const missing = path.resolve(this.root, dir);
        return systemFolderRefusal(missing) ?? this.reservedTreeRefusal(missing) ?? `no such folder: ${dir}`;
      }
      return `cannot be granted: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /**
   * What the card shows for a grantable `dir` (call `grantRefusal` first): its real path and
   * whether the file tools (the bot's own access) and shell commands could write there.
   */
  grantPreview(dir: string): GrantPreview {
    const real = realpathSync(path.resolve(this.root, dir));
    const files = this.grantWriter && this.owner ? ownerCanWrite(real, this.owner) : botCanWrite(real);
    const access: DirectoryAccess = { files, shell: this.shellCanWrite(real) };
    return { path: real, access, accessText: accessText(access) };
  }

  /**
   * Who writes `realPath` (a real path inside the roots) when it is in a granted folder and
   * the bot is root: its commands' run-as user, through `writer`, below `root` (the granted
   * folder). Undefined: the file tools write it themselves (safe-open.ts).
   */
  grantedWriterFor(realPath: string): { writer: FolderWriter; root: string } | undefined {
    if (!this.grantWriter || isInside(realPath, this.root)) return undefined;
    const roots = this.granted.filter((root) => isInside(realPath, root));
    // The innermost: a folder granted inside another granted one is walked from itself.
    const root = roots.sort((a, b) => b.length - a.length)[0];
    return root === undefined ? undefined : { writer: this.grantWriter, root };
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
    const owner = options.owner;
    if (!existed && owner) chownSync(root, owner.uid, owner.gid);
    return new Workspace(
      root,
      {
        protectedPaths: (options.protectedPaths ?? []).map((protectedPath) =>
          realpathIfExists(path.resolve(protectedPath)),
        ),
        home: realpathIfExists(path.resolve(options.homeDir ?? os.homedir())),
        base: options.base === undefined ? undefined : realpathIfExists(path.resolve(options.base)),
        grantRoots: options.grantRoots ?? [],
        botIsRoot: (options.botUid ?? process.getuid?.() ?? -1) === 0,
      },
      // Commands run as the owner when there is one (a root bot's run-as uid), else as the bot.
      options.shellCanWrite ?? (owner ? (real) => ownerCanWrite(real, owner) : botCanWrite),
      owner,
      options.grantWriter,
    );
  }

  private refuseUngrantable(real: string): void {
    const { home, protectedPaths, base, grantRoots, botIsRoot } = this.guarded;
    if (real === path.parse(real).root) throw new GrantRefusedError(`refused: ${real} is the whole file system`);
    const system = systemFolderRefusal(real);
    if (system !== null) throw new GrantRefusedError(system);
    if (base !== undefined && isInside(base, real)) {
      throw new GrantRefusedError(
        `refused: ${real} holds the workspace folder (WORKSPACE_DIR, ${base}), with every conversation's files`,
      );
    }
    if (base !== undefined && isInside(real, base)) {
      throw new GrantRefusedError(
        `refused: ${real} is in the workspace folder (WORKSPACE_DIR), where other conversations keep their files`,
      );
    }
    if (real === home) throw new GrantRefusedError(`refused: ${real} is the bot's home folder`);
    if (isInside(home, real)) throw new GrantRefusedError(`refused: ${real} holds the bot's home folder (${home})`);
    // Granting a folder around the workspace would also be granting its neighbours.
    if (isInside(this.root, real))
      throw new GrantRefusedError(`refused: ${real} holds the workspace (${this.root}); grant a folder beside it`);
    for (const guarded of protectedPaths) {
      if (real === guarded) throw new GrantRefusedError(`refused: ${real} is one of the bot's own folders`);
      if (isInside(guarded, real))
        throw new GrantRefusedError(`refused: ${real} holds the bot's own files (${guarded})`);
      if (isInside(real, guarded))
        throw new GrantRefusedError(`refused: ${real} is inside the bot's own files (${guarded})`);
    }
    if (outsideGrantRoots(real, grantRoots)) {
      throw new GrantRefusedError(
        `refused: ${real} is outside the folders grants may come from (GRANT_ROOTS: ${grantRoots.join(', ')})`,
      );
    }
    // Inside GRANT_ROOTS the operator has named the folder; without it, a root bot keeps to its own.
    if (botIsRoot && grantRoots.length === 0) this.refuseForRootBot(real);
  }

  /** Why a root bot without GRANT_ROOTS does not grant `target` as in a reserved tree (grant-rules.ts), or null. */
  private reservedTreeRefusal(target: string): string | null {
    if (!this.guarded.botIsRoot || this.guarded.grantRoots.length > 0) return null;
    const tree = reservedTreeOf(target);
    if (tree === null) return null;
    return `refused: ${target} is ${target === tree ? '' : `in ${tree}, `}where other people's and services' files are, and this bot runs as root; an operator may allow it by listing it in GRANT_ROOTS`;
  }

  /** What a bot running as root does not grant unless GRANT_ROOTS names it (grant-rules.ts). */
  private refuseForRootBot(real: string): void {
    const reserved = this.reservedTreeRefusal(real);
    if (reserved !== null) throw new GrantRefusedError(reserved);
    const ours = [0, ...(this.owner ? [this.owner.uid] : [])];
    const other = otherUsersFolderOf(real, ours);
    if (other !== null) {
      throw new GrantRefusedError(
        `refused: ${other.folder === real ? real : `${real} is in ${other.folder}, which`} belongs to another user (uid ${other.uid}), and this bot runs as root; an operator may allow it by listing it in GRANT_ROOTS`,
      );
    }
  }

  /**
   * The real absolute path `input` designates, if it is inside the workspace. Relative
   * paths start at the root; absolute paths are accepted when they land inside it.
   */
  async resolve(input: string): Promise<string> {
    if (input.includes('\0')) throw new Error(`invalid path (it contains a NUL byte): ${JSON.stringify(input)}`);
    const lexical = path.resolve(this.root, input);
    let real: string;
    try {
      real = await realpathAllowingMissing(lexical);
    } catch (error) {
      // Outside, an error (no permission, a link loop) would say something about what is there.
      if (!this.contains(lexical)) throw new WorkspaceEscapeError(input);
      throw error;
    }
    if (!this.contains(real)) throw new WorkspaceEscapeError(input);
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

/** Why `target` (an absolute path) is never granted as a system folder, or null. */
function systemFolderRefusal(target: string): string | null {
  const system = systemFolderOf(target);
  if (system === null) return null;
  return `refused: ${target} is ${target === system ? 'a system folder' : `in ${system}, a system folder`}; only project folders are granted`;
}
