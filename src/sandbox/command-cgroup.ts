// A memory cap for a whole command, not only for each of its processes: a cgroup of its own
// per command, where the host lets the bot make one.
//
// One idea: RLIMIT_AS bounds each process, so a command that starts ten processes may use ten
// times the cap, enough to push the host into its OOM killer (whose victim may be the bot).
// A memory cgroup bounds them together, and when they pass it the kernel's OOM killer picks a
// victim inside that cgroup only: the command loses a process, the bot and other threads lose
// nothing.
//
// Where: cgroup v1's memory hierarchy, in a folder of this bot's own below the cgroup the bot
// runs in (`<mount>/<bot's cgroup>/chat-agent-<pid>/<command>`). That needs write access to
// it, which a root bot in a VM or a privileged container has. cgroup v2 is not used: a bot
// can only give children a memory controller when its own cgroup delegates one and holds no
// process, which is rare outside a systemd unit with Delegate=yes; where no cgroup can be
// made, the start-up line says the cap is per process only.
//
// A command must be in its cgroup before it runs a single instruction, or what it forks
// first escapes. bwrap is therefore started through bash, which waits on a pipe until
// the bot has moved it into the cgroup, then execs bwrap (same pid, so the process group and
// signals are unchanged).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processAlive } from './process-alive.js';

/** Where cgroup v1's memory hierarchy is mounted on every distribution that has one. */
const V1_MEMORY_MOUNT = '/sys/fs/cgroup/memory';

/** rmdir of a cgroup whose last process is still being torn down fails (EBUSY) for a moment. */
const REMOVE_TRIES = 20;
const REMOVE_PAUSE_MS = 25;

export interface CommandCgroup {
  /** Put a process (and everything it will start) in the cgroup; false when the kernel refused. */
  add(pid: number): boolean;
  /** How many of the command's processes the OOM killer ended because the cap was reached. */
  oomKills(): number;
  /** Remove the cgroup once the command is over (retried while the kernel still tears it down). */
  remove(): Promise<void>;
}

/** Several bots may share a process (tests do): each gets a folder of its own. */
let opened = 0;

export class CommandCgroups {
  private next = 0;

  private constructor(
    /** This bot's own folder in the memory hierarchy; one child per command. */
    readonly folder: string,
    readonly maxBytes: number,
  ) {}

  /**
   * A memory cgroup folder of this bot's own, or null where cgroup v1's memory controller
   * cannot be written here. Folders of bots that are gone are removed first.
   */
  static open(maxBytes: number, options: { mount?: string; ownCgroupFile?: string; pid?: number } = {}): CommandCgroups | null {
    const mount = options.mount ?? V1_MEMORY_MOUNT;
    const own = ownMemoryCgroup(options.ownCgroupFile ?? '/proc/self/cgroup');
    if (own === null || !existsSync(path.join(mount, 'memory.limit_in_bytes'))) return null;
    const parent = path.join(mount, own);
    removeStale(parent);
    const folder = path.join(parent, `chat-agent-${options.pid ?? process.pid}-${++opened}`);
    try {
      mkdirSync(folder, { recursive: true });
      const groups = new CommandCgroups(folder, maxBytes);
      // A trial command's cgroup proves the limit can be set, before any command relies on it.
      const trial = groups.create();
      if (!trial) return null;
      void trial.remove();
      return groups;
    } catch {
      return null;
    }
  }

  /** A fresh cgroup capped at maxBytes, or null when one could not be made (the rlimit still holds). */
  create(): CommandCgroup | null {
    const folder = path.join(this.folder, `command-${++this.next}`);
    try {
      mkdirSync(folder);
      writeFileSync(path.join(folder, 'memory.limit_in_bytes'), String(this.maxBytes));
      // With swap, the cap holds for memory and swap together (the file exists only with swap accounting).
      const withSwap = path.join(folder, 'memory.memsw.limit_in_bytes');
      if (existsSync(withSwap)) writeQuietly(withSwap, String(this.maxBytes));
    } catch {
      tryRemove(folder);
      return null;
    }
    return {
      add: (pid) => writeQuietly(path.join(folder, 'cgroup.procs'), String(pid)),
      oomKills: () => oomKills(folder),
      remove: async () => {
        for (let attempt = 0; attempt < REMOVE_TRIES; attempt++) {
          if (tryRemove(folder)) return;
          await new Promise((resolve) => setTimeout(resolve, REMOVE_PAUSE_MS));
        }
      },
    };
  }

  /** Remove this bot's folder (at shutdown; commands' cgroups are gone by then). */
  close(): void {
    tryRemove(this.folder);
  }
}

/** The memory line of /proc/self/cgroup (`4:memory:/some/path`), or null without one. */
function ownMemoryCgroup(file: string): string | null {
  try {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [, controllers, cgroupPath] = line.split(':');
      if (controllers?.split(',').includes('memory') && cgroupPath !== undefined) return cgroupPath;
    }
  } catch {
    return null;
  }
  return null;
}

/** `oom_kill N` in memory.oom_control (kernels since 4.13). */
function oomKills(folder: string): number {
  try {
    const match = /^oom_kill (\d+)$/m.exec(readFileSync(path.join(folder, 'memory.oom_control'), 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Folders left by bots that are gone (killed before they could clean up): empty cgroups, removable. */
function removeStale(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^chat-agent-(\d+)-\d+$/.exec(name);
    if (!match || processAlive(Number(match[1]))) continue;
    const folder = path.join(parent, name);
    try {
      for (const child of readdirSync(folder)) if (child.startsWith('command-')) tryRemove(path.join(folder, child));
    } catch {
      // unreadable: left as it is
    }
    tryRemove(folder);
  }
}


/** rmdir is how a cgroup is removed (its control files are not real files). */
function tryRemove(folder: string): boolean {
  try {
    rmdirSync(folder);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function writeQuietly(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}
