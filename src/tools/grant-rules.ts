// Which folders request_directory may grant, judged by their real path, and what a person is
// told about one before granting it.
//
// One idea: a grant names a project folder, never a piece of the system. A granted folder is
// bound writable into every later command's sandbox, so a granted `/proc` showed the host's
// processes and a granted `/etc` or `/var` is host root through cron when the bot is root. The
// folders below, and everything under them, are refused whatever link leads there (the real
// path is judged: `/bin` is `/usr/bin` on merged-/usr systems, a link in the workspace to
// `/etc` is `/etc`). GRANT_ROOTS narrows further: an operator lists the trees grants may
// come from, and nothing outside them is granted.
//
// A bot running as root reads and writes anything, so without GRANT_ROOTS it also refuses
// the trees where other people's and services' files live (ROOT_BOT_RESERVED_TREES) and any
// folder that belongs, or lies inside a folder that belongs, to another user than root and
// its commands' run-as user. An operator who means one of them names it in GRANT_ROOTS.
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { isInside } from './real-paths.js';

/**
 * Top-level folders that belong to the system, never to a project; `/lib*` is matched by prefix.
 * @internal
 */
export const SYSTEM_FOLDERS: readonly string[] = [
  '/proc',
  '/sys',
  '/dev',
  '/etc',
  '/usr',
  '/var',
  '/boot',
  '/run',
  '/bin',
  '/sbin',
];

/** The system folder `real` is (or lies in), or null. `real` is a real absolute path. */
export function systemFolderOf(real: string): string | null {
  const top = `/${real.split('/')[1] ?? ''}`;
  if (SYSTEM_FOLDERS.includes(top)) return top;
  // lib, lib32, lib64, libx32, libexec: the loader and the system's libraries.
  if (/^\/lib[^/]*$/.test(top)) return top;
  return null;
}

/**
 * GRANT_ROOTS: absolute folders, comma-separated, as real paths. Throws one error naming every
 * bad entry (relative, missing, not a folder, a system folder): a typo must not silently
 * allow nothing, or everything.
 */
export function parseGrantRoots(raw: string | undefined): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const problems: string[] = [];
  const roots: string[] = [];
  for (const entry of entries) {
    if (!path.isAbsolute(entry)) {
      problems.push(`${entry}: give an absolute path`);
      continue;
    }
    let real: string;
    try {
      real = realpathSync(entry);
      if (!statSync(real).isDirectory()) throw new Error('not a folder');
    } catch {
      problems.push(`${entry}: not an existing folder`);
      continue;
    }
    const system = systemFolderOf(real);
    if (system) problems.push(`${entry}: it is in ${system}, a system folder, which is never granted`);
    else if (real === '/') problems.push(`${entry}: that is the whole file system`);
    else roots.push(real);
  }
  if (problems.length > 0) throw new Error(`GRANT_ROOTS: ${problems.join('; ')}`);
  return roots;
}

/**
 * Trees a bot running as root grants nothing in unless GRANT_ROOTS names them: people's homes
 * (/home), software and data installed beside the system (/opt, /srv) and mounted disks
 * (/mnt, /media). `/root` is the bot's own home, refused for every bot.
 * @internal
 */
export const ROOT_BOT_RESERVED_TREES: readonly string[] = ['/home', '/opt', '/srv', '/mnt', '/media'];

/** The reserved tree `real` is (or lies in), or null. */
export function reservedTreeOf(real: string): string | null {
  return ROOT_BOT_RESERVED_TREES.find((tree) => isInside(real, tree)) ?? null;
}

/**
 * The first of `real` and the folders above it that belongs to a uid not in `ours` (for a
 * root bot: root and its commands' run-as user), or null. A folder inside another user's
 * tree is theirs too, whoever made the folder itself.
 */
export function otherUsersFolderOf(real: string, ours: readonly number[]): { folder: string; uid: number } | null {
  for (let folder = real; ; folder = path.dirname(folder)) {
    let uid: number;
    try {
      ({ uid } = statSync(folder));
    } catch {
      return null; // gone: the grant itself will say so
    }
    if (!ours.includes(uid)) return { folder, uid };
    if (folder === path.dirname(folder)) return null;
  }
}

/** Whether a folder may be granted, given GRANT_ROOTS (empty: no limit beyond the rules). */
export function outsideGrantRoots(real: string, roots: readonly string[]): boolean {
  return roots.length > 0 && !roots.some((root) => isInside(real, root));
}

/** What a grant of a folder gives, as the card says it. */
export interface DirectoryAccess {
  /** The file tools: they write where the bot can (a root bot's, where its commands' run-as user can). */
  files: boolean;
  /** Shell commands (which may run as another user than the bot: see `ShellWriteCheck`). */
  shell: boolean;
}

/**
 * Whether shell commands can write in a folder (a real path). The default is the bot's own
 * access: commands run as the bot's user. Where commands run as another uid (a root bot's
 * sandbox drops to an unprivileged one), the sandbox supplies its own answer.
 */
export type ShellWriteCheck = (realPath: string) => boolean;

/** The bot's own write access to `realPath` (access(2) with W_OK). */
export function botCanWrite(realPath: string): boolean {
  try {
    accessSync(realPath, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a uid other than the bot's (a root bot's run-as user) may write in a folder, by
 * its permission bits: the owner's, the group's, or everyone's. ACLs are not read; a folder
 * whose path the uid cannot walk to is not mounted for it anyway (run-as.ts checks the roots).
 */
export function ownerCanWrite(realPath: string, owner: { uid: number; gid: number }): boolean {
  try {
    const stats = statSync(realPath);
    if (stats.uid === owner.uid) return (stats.mode & 0o300) === 0o300;
    if (stats.gid === owner.gid) return (stats.mode & 0o030) === 0o030;
    return (stats.mode & 0o003) === 0o003;
  } catch {
    return false;
  }
}

/** The card's line about access: what the person is about to allow. */
export function accessText(access: DirectoryAccess): string {
  if (access.files && access.shell)
    return 'read and write: the file tools and shell commands can change and delete files there';
  if (access.files)
    return 'read and write for the file tools (they can change and delete files there); shell commands can only read it';
  if (access.shell) return 'shell commands can change and delete files there; the file tools can only read it';
  return 'read only: neither the file tools nor shell commands can write there';
}
