// cgroup v1's memory controller: a folder of this bot's own below the cgroup it runs in
// (`<mount>/<bot's cgroup>/chat-agent-<pid>/command-<n>`), one memory cgroup per command
// capped with memory.limit_in_bytes (and memory.memsw.limit_in_bytes where swap is counted,
// so memory and swap together hold the cap). Writable by a root bot in a VM or a privileged
// container; the kernel's rules for v1 let any writer make children anywhere it may write.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { removeCgroup, tryRemoveCgroup, writeQuietly, oomKillCount } from './cgroup-files.js';
import type { CommandCgroup, CommandCgroups } from './cgroup-port.js';
import { processAlive } from './process-alive.js';

/** Where cgroup v1's memory hierarchy is mounted on every distribution that has one. */
const V1_MEMORY_MOUNT = '/sys/fs/cgroup/memory';

/** Several bots may share a process (tests do): each gets a folder of its own. */
let opened = 0;

export class CgroupV1Commands implements CommandCgroups {
  readonly version = 1;
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
  static open(
    maxBytes: number,
    options: { mount?: string; ownCgroupFile?: string; pid?: number } = {},
  ): CgroupV1Commands | null {
    const mount = options.mount ?? V1_MEMORY_MOUNT;
    const own = ownMemoryCgroup(options.ownCgroupFile ?? '/proc/self/cgroup');
    if (own === null || !existsSync(path.join(mount, 'memory.limit_in_bytes'))) return null;
    const parent = path.join(mount, own);
    removeStale(parent);
    const folder = path.join(parent, `chat-agent-${options.pid ?? process.pid}-${++opened}`);
    try {
      mkdirSync(folder, { recursive: true });
      const groups = new CgroupV1Commands(folder, maxBytes);
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
      tryRemoveCgroup(folder);
      return null;
    }
    return {
      add: (pid) => writeQuietly(path.join(folder, 'cgroup.procs'), String(pid)),
      // memory.oom_control counts them on kernels since 4.13
      oomKills: () => oomKillCount(path.join(folder, 'memory.oom_control')),
      remove: () => removeCgroup(folder),
    };
  }

  /** Remove this bot's folder (at shutdown; commands' cgroups are gone by then). */
  close(): void {
    tryRemoveCgroup(this.folder);
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
      for (const child of readdirSync(folder))
        if (child.startsWith('command-')) tryRemoveCgroup(path.join(folder, child));
    } catch {
      // unreadable: left as it is
    }
    tryRemoveCgroup(folder);
  }
}
