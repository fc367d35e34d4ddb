// What of the host a sandboxed command sees, read-only: the system's programs and
// libraries, and /etc without its secrets. Computed once at start-up and reused for every
// command (walking /etc per command would cost more than the sandbox itself).
//
// One idea: /etc is shown whole except what the host itself keeps from ordinary users. An
// entry that is not world-readable (shadow, gshadow, ssl/private, sudoers, NetworkManager's
// connections) is covered up, whoever runs the bot: inside the sandbox a bot running as root
// is still uid 0, and the owner's permission bits would let it read root's files. Anything of
// the bot's own that lies under a mounted folder is covered up the same way.
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { isInside } from '../tools/real-paths.js';
import type { ProtectedPath } from './protected-paths.js';

/** The folders a command needs to run programs; on merged-/usr systems most are symlinks. */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** /etc is shallow; the bound keeps a pathological tree from slowing the start. */
const ETC_MAX_DEPTH = 6;
const ETC_MAX_ENTRIES = 20_000;

export type Mount =
  | { kind: 'ro-bind'; source: string; target: string }
  | { kind: 'symlink'; target: string; link: string }
  | { kind: 'hide-file'; target: string }
  | { kind: 'hide-folder'; target: string };

export interface SystemView {
  mounts: Mount[];
  /** Entries of /etc and of the bot's own paths covered up, for the start-up log. */
  hidden: string[];
}

export interface SystemViewOptions {
  /** The bot's own paths: covered up where they lie under a mounted folder. */
  protectedPaths: readonly ProtectedPath[];
  /** Extra read-only folders (SHELL_READ_PATHS): toolchains outside /usr. */
  readOnlyPaths?: readonly string[];
  /** With network: /etc/resolv.conf may point into /run, which is otherwise not shown. */
  network: boolean;
}

export function systemView(options: SystemViewOptions): SystemView {
  const mounts: Mount[] = [];
  const sources: string[] = [];
  for (const folder of SYSTEM_FOLDERS) {
    const stats = lstatOrNull(folder);
    if (!stats) continue;
    if (stats.isSymbolicLink()) {
      mounts.push({ kind: 'symlink', target: readlinkSync(folder), link: folder });
    } else if (stats.isDirectory()) {
      mounts.push({ kind: 'ro-bind', source: folder, target: folder });
      sources.push(folder);
    }
  }
  for (const extra of options.readOnlyPaths ?? []) {
    const real = realpathSync(extra);
    mounts.push({ kind: 'ro-bind', source: real, target: real });
    sources.push(real);
  }
  if (options.network) {
    const resolver = resolvConfOutside(sources);
    if (resolver) mounts.push({ kind: 'ro-bind', source: resolver, target: resolver });
  }

  const hidden: string[] = [];
  const hide = (target: string, stats: Stats): void => {
    mounts.push(stats.isDirectory() ? { kind: 'hide-folder', target } : { kind: 'hide-file', target });
    hidden.push(target);
  };
  if (sources.includes('/etc')) walkPrivate('/etc', hide);
  for (const entry of options.protectedPaths) {
    if (!sources.some((source) => isInside(entry.path, source))) continue;
    const stats = lstatOrNull(entry.path);
    if (stats && !hidden.includes(entry.path)) hide(entry.path, stats);
  }
  return { mounts, hidden };
}

/** Cover up every entry under `root` that ordinary users may not read. */
function walkPrivate(root: string, hide: (target: string, stats: Stats) => void): void {
  let seen = 0;
  const visit = (folder: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return; // unreadable to the bot itself: the sandbox cannot read it either
    }
    for (const name of names) {
      if (++seen > ETC_MAX_ENTRIES) return;
      const entry = path.join(folder, name);
      const stats = lstatOrNull(entry);
      if (!stats || stats.isSymbolicLink()) continue; // a link shows only what it points at, judged there
      if (stats.isDirectory()) {
        // Listing needs r, entering needs x: a folder missing either for others is private.
        if ((stats.mode & 0o005) !== 0o005) hide(entry, stats);
        else if (depth < ETC_MAX_DEPTH) visit(entry, depth + 1);
      } else if ((stats.mode & 0o004) === 0) {
        hide(entry, stats);
      }
    }
  };
  visit(root, 1);
}

/** systemd points /etc/resolv.conf into /run; without it, names do not resolve. */
function resolvConfOutside(sources: readonly string[]): string | null {
  try {
    const real = realpathSync('/etc/resolv.conf');
    if (sources.some((source) => isInside(real, source))) return null;
    return statSync(real).mode & 0o004 ? real : null;
  } catch {
    return null;
  }
}

function lstatOrNull(target: string): Stats | null {
  try {
    return lstatSync(target);
  } catch {
    return null;
  }
}

export function mountArgs(mount: Mount): string[] {
  switch (mount.kind) {
    case 'ro-bind':
      return ['--ro-bind', mount.source, mount.target];
    case 'symlink':
      return ['--symlink', mount.target, mount.link];
    case 'hide-file':
      return ['--ro-bind', '/dev/null', mount.target];
    case 'hide-folder':
      // A private, empty tmpfs, read-only: nothing of the host is in it, and a command cannot
      // fill it (a writable one would hold half the machine's memory, past SHELL_TMP_MB).
      return ['--tmpfs', mount.target, '--remount-ro', mount.target];
  }
}
