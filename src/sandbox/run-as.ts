// Which user sandboxed commands run as (SHELL_RUN_AS), and whether that user can reach a folder.
//
// One idea: a bot running as root must not hand root to its commands. bwrap started by uid 0
// keeps uid 0 inside: the kernel's checks on /proc/sys, /proc/sysrq-trigger and RLIMIT_NPROC
// all see the host's root (bwrap only covers /proc/sys when access(W_OK) fails, which it
// never does for root). So when the bot is root, bwrap itself is started as an unprivileged
// uid (Node's spawn sets uid, gid and drops supplementary groups before exec): it then builds
// an unprivileged user namespace, exactly as for a bot that never was root. A bot that is not
// root already gets that, with its own uid: SHELL_RUN_AS is ignored there, with a note.
//
// The price: what a command writes must be writable by that uid, and bwrap, running as it,
// must be able to walk to every folder it mounts. The workspace folders the bot creates are
// given to it (the "sandbox owner", see Workspace's `owner`); reachability is checked at start.
import { statSync } from 'node:fs';
import path from 'node:path';

export interface SandboxOwner {
  uid: number;
  gid: number;
}

/**
 * nobody:nogroup on Debian and most others: owns nothing of the host's.
 * @internal
 */
export const DEFAULT_RUN_AS: SandboxOwner = { uid: 65534, gid: 65534 };

export interface RunAsDecision {
  /** The uid/gid bwrap is started as; undefined: the bot's own (it is not root). */
  runAs?: SandboxOwner;
  /** The uid commands run as, for the start-up line. */
  uid: number;
  /** Something the operator should know (a setting ignored). */
  note?: string;
}

/** Parse `uid:gid` (already checked by the config schema; checked again for direct callers). */
function parseRunAs(raw: string): SandboxOwner {
  const match = /^(\d+):(\d+)$/.exec(raw.trim());
  if (!match) throw new Error(`SHELL_RUN_AS: must be uid:gid, e.g. 65534:65534 (got "${raw}")`);
  const owner = { uid: Number(match[1]), gid: Number(match[2]) };
  if (owner.uid === 0 || owner.gid === 0)
    throw new Error('SHELL_RUN_AS: must not be 0 (root): commands run as an unprivileged user');
  return owner;
}

/** Decide from the bot's own uid and SHELL_RUN_AS. */
export function decideRunAs(setting: string | undefined, botUid: number = process.getuid?.() ?? -1): RunAsDecision {
  if (botUid !== 0) {
    const note = setting
      ? `SHELL_RUN_AS is ignored: the bot runs as uid ${botUid}, not root, and commands run as that uid`
      : undefined;
    return { uid: botUid, note };
  }
  const runAs = setting ? parseRunAs(setting) : DEFAULT_RUN_AS;
  return { runAs, uid: runAs.uid };
}

/**
 * Why `owner` could not walk to `folder` (an ancestor it may not enter), or null. bwrap,
 * started as that user, looks every mount source up with that user's rights.
 */
export function unreachableBy(folder: string, owner: SandboxOwner): string | null {
  const parts = path.resolve(folder).split(path.sep).filter(Boolean);
  for (let depth = 0; depth < parts.length; depth++) {
    const ancestor = path.sep + parts.slice(0, depth).join(path.sep);
    let mode: number;
    let uid: number;
    let gid: number;
    try {
      ({ mode, uid, gid } = statSync(ancestor));
    } catch {
      return null; // missing or unreadable: bwrap will say so itself
    }
    const bit = uid === owner.uid ? 0o100 : gid === owner.gid ? 0o010 : 0o001;
    if ((mode & bit) === 0)
      return `${ancestor} (mode ${(mode & 0o777).toString(8)}, owner uid ${uid}) may not be entered by uid ${owner.uid}`;
  }
  return null;
}

/**
 * bwrap's own words when, started as the run-as user, it could not walk to a folder it mounts
 * ("bwrap: Can't find source path /srv/agent/workspace/x: Permission denied": a folder on the
 * way was closed after start-up), said as what to fix: which folder, for which uid. Null when
 * the output shows no such failure.
 */
export function unreachableNote(output: string, owner: SandboxOwner): string | null {
  const match = /^bwrap: Can't (?:find source path|chdir to) (.+?): Permission denied$/m.exec(output);
  if (!match) return null;
  const folder = match[1]!;
  const why = unreachableBy(folder, owner) ?? `uid ${owner.uid} may not reach it`;
  return (
    `the sandbox could not be built: ${folder} cannot be reached by uid ${owner.uid}, the user commands run as (${why}); ` +
    'no command can run until the operator lets that user through (chmod o+x on that folder) or moves WORKSPACE_DIR'
  );
}
