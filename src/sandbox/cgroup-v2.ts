// cgroup v2, where the bot's own cgroup is delegated to it: a systemd unit with Delegate=yes,
// or a container with a cgroup namespace of its own and a writable cgroup file system. The
// bot then makes one child cgroup per command, `<own>/cmd-<pid>-<n>-<k>`, with memory.max the
// cap, memory.swap.max 0 (memory and swap together hold the cap, as v1's memsw does) and
// pids.max the process cap.
//
// The kernel's rules shape the steps. No internal processes: a cgroup that gives its children
// a controller (cgroup.subtree_control) may hold no process itself, so the bot first moves
// every process of its cgroup into a leaf of their own, `<own>/bot`, then enables memory (and
// pids) for its cgroup's children. Moving a process needs write access to the cgroup.procs of
// the common ancestor: the delegated cgroup, which systemd hands to the unit's user.
//
// Delegated means: the bot may write its cgroup's folder, cgroup.procs and
// cgroup.subtree_control, its cgroup has a memory controller to give, and every process in it
// is the bot's own (itself, a child, or an ancestor such as a container's init). A root bot
// started from a login shell may write that session's cgroup too, but the session's other
// processes are not its to move: that is refused, with how to give the bot a cgroup of its own.
//
// The root of the hierarchy and this process's cgroup file are options, so a test can stand a
// folder in for /sys/fs/cgroup and check each step of the protocol.
import {
  accessSync,
  appendFileSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { removeCgroup, tryRemoveCgroup, writeQuietly, oomKillCount } from './cgroup-files.js';
import type { CommandCgroup, CommandCgroups } from './cgroup-port.js';
import { processAlive } from './process-alive.js';

/** The leaf the bot's processes move to, so their cgroup may give controllers to its children. */
const BOT_LEAF = 'bot';
const UNIFIED_ROOT = '/sys/fs/cgroup';
/** Controllers a command's cgroup gets, where the bot's cgroup has them to give. */
const WANTED = ['memory', 'pids'];

export interface CgroupV2Options {
  /** Where the unified hierarchy is mounted (default /sys/fs/cgroup). */
  root?: string;
  /** This process's cgroups (default /proc/self/cgroup). */
  selfCgroupFile?: string;
  /** This process's id (default process.pid). */
  pid?: number;
}

export type CgroupV2Assessment =
  | { kind: 'not-v2' }
  | { kind: 'not-delegated'; own: string; why: string }
  | { kind: 'delegated'; own: string; controllers: string[] };

/** Whether the bot may make cgroups for its commands under cgroup v2; reads only. */
export function assessCgroupV2(options: CgroupV2Options = {}): CgroupV2Assessment {
  const root = options.root ?? UNIFIED_ROOT;
  const relative = unifiedPath(options.selfCgroupFile ?? '/proc/self/cgroup');
  // A hybrid host mounts v2 at /sys/fs/cgroup/unified with no controllers: not ours to use.
  if (relative === null || !existsSync(path.join(root, 'cgroup.controllers'))) return { kind: 'not-v2' };
  // After the move (an earlier start in this process), /proc says the leaf: its parent is the bot's.
  const ownPath = path.posix.basename(relative) === BOT_LEAF ? path.posix.dirname(relative) : relative;
  const own = path.join(root, ownPath);
  for (const file of [own, path.join(own, 'cgroup.procs'), path.join(own, 'cgroup.subtree_control')]) {
    if (!writable(file))
      return {
        kind: 'not-delegated',
        own,
        why: `the bot's cgroup ${ownPath} is not delegated to it (it may not write ${path.basename(file) || file})`,
      };
  }
  const controllers = readWords(path.join(own, 'cgroup.controllers'));
  if (!controllers.includes('memory')) {
    return {
      kind: 'not-delegated',
      own,
      why: `the bot's cgroup ${ownPath} has no memory controller to give its children (a systemd unit needs Delegate=yes, or Delegate=memory pids)`,
    };
  }
  const self = options.pid ?? process.pid;
  const foreign = readPids(path.join(own, 'cgroup.procs')).filter((pid) => !ownProcess(pid, self));
  if (foreign.length > 0) {
    return {
      kind: 'not-delegated',
      own,
      why: `the bot's cgroup ${ownPath} holds processes that are not the bot's (pid ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', …' : ''})`,
    };
  }
  return { kind: 'delegated', own, controllers };
}

/** Bots made in this process (tests make several): each names its commands' cgroups apart. */
let opened = 0;

export class CgroupV2Commands implements CommandCgroups {
  readonly version = 2;
  private next = 0;

  private constructor(
    /** The bot's delegated cgroup: the commands' cgroups are its children. */
    readonly folder: string,
    readonly maxBytes: number,
    private readonly prefix: string,
    /** pids.max of each command, where the pids controller was enabled. */
    private readonly maxProcesses: number | null,
  ) {}

  /**
   * Move the bot's processes into their leaf, give the children memory (and pids), and prove
   * with a trial command cgroup that the cap can be set. Null where a step is refused.
   */
  static open(
    maxBytes: number,
    options: CgroupV2Options & {
      assessment: Extract<CgroupV2Assessment, { kind: 'delegated' }>;
      maxProcesses?: number;
    },
  ): CgroupV2Commands | null {
    const own = options.assessment.own;
    const pid = options.pid ?? process.pid;
    try {
      mkdirSync(path.join(own, BOT_LEAF), { recursive: true });
      // One pid per write: the kernel moves one process (with all its threads) each time.
      for (const member of readPids(path.join(own, 'cgroup.procs')))
        moveQuietly(path.join(own, BOT_LEAF, 'cgroup.procs'), member);
      const enabled = readWords(path.join(own, 'cgroup.subtree_control'));
      const wanted = WANTED.filter((controller) => options.assessment.controllers.includes(controller));
      const missing = wanted.filter((controller) => !enabled.includes(controller));
      if (missing.length > 0)
        writeFileSync(
          path.join(own, 'cgroup.subtree_control'),
          missing.map((controller) => `+${controller}`).join(' '),
        );
      removeStale(own);
      const pids = wanted.includes('pids') && options.maxProcesses !== undefined ? options.maxProcesses : null;
      const groups = new CgroupV2Commands(own, maxBytes, `cmd-${pid}-${++opened}`, pids);
      const trial = groups.create();
      if (!trial) return null;
      void trial.remove();
      return groups;
    } catch {
      return null;
    }
  }

  create(): CommandCgroup | null {
    const folder = path.join(this.folder, `${this.prefix}-${++this.next}`);
    try {
      mkdirSync(folder);
      writeFileSync(path.join(folder, 'memory.max'), String(this.maxBytes));
      // Only with swap accounting; without it there is no swap to count.
      writeQuietly(path.join(folder, 'memory.swap.max'), '0');
      if (this.maxProcesses !== null) writeQuietly(path.join(folder, 'pids.max'), String(this.maxProcesses));
    } catch {
      tryRemoveCgroup(folder);
      return null;
    }
    return {
      add: (pid) => writeQuietly(path.join(folder, 'cgroup.procs'), String(pid)),
      oomKills: () => oomKillCount(path.join(folder, 'memory.events')),
      remove: () => removeCgroup(folder),
    };
  }

  /** The commands' cgroups this bot made (gone by now, unless a command is still being torn down). */
  close(): void {
    try {
      for (const name of readdirSync(this.folder))
        if (name.startsWith(`${this.prefix}-`)) tryRemoveCgroup(path.join(this.folder, name));
    } catch {
      // the folder went with the unit
    }
  }
}

/** The `0::/path` line of /proc/self/cgroup: this process's place in the unified hierarchy. */
function unifiedPath(file: string): string | null {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('0::'));
    return line ? line.slice(3) || '/' : null;
  } catch {
    return null;
  }
}

function writable(file: string): boolean {
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function readWords(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

function readPids(file: string): number[] {
  return readWords(file)
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** A process that ended meanwhile is not moved, and that is fine. */
function moveQuietly(procs: string, pid: number): void {
  try {
    appendFileSync(procs, `${pid}\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Whether `pid` is this bot's to move: itself, one it started (however deep), or one that
 * started it (a container's init, the service manager's helper). A process that is gone counts
 * as the bot's: there is nothing of it to move.
 */
function ownProcess(pid: number, self: number): boolean {
  if (pid === self || !existsSync(`/proc/${pid}`)) return true;
  for (let current: number | null = pid, steps = 0; current !== null && current > 1 && steps < 256; steps++) {
    current = parentOf(current);
    if (current === self) return true;
  }
  for (let current: number | null = self, steps = 0; current !== null && current > 0 && steps < 256; steps++) {
    current = parentOf(current);
    if (current === pid) return true;
  }
  return false;
}

/** The parent pid, from /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = Number(fields[1]);
    return Number.isInteger(parent) ? parent : null;
  } catch {
    return null;
  }
}

/** Commands' cgroups left by a bot that is gone (killed before it could clean up): empty, removable. */
function removeStale(own: string): void {
  let names: string[];
  try {
    names = readdirSync(own);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^cmd-(\d+)-\d+-\d+$/.exec(name);
    if (match && !processAlive(Number(match[1]))) tryRemoveCgroup(path.join(own, name));
  }
}
