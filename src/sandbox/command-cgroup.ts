// A memory cap for a whole command, not only for each of its processes: a cgroup of its own
// per command, where the host lets the bot make one.
//
// One idea: RLIMIT_AS bounds each process, so a command that starts ten processes may use ten
// times the cap, enough to push the host into its OOM killer (whose victim may be the bot).
// A memory cgroup bounds them together, and when they pass it the kernel's OOM killer picks a
// victim inside that cgroup only: the command loses a process, the bot and other threads lose
// nothing.
//
// Where: cgroup v2 where the bot's own cgroup is delegated to it (cgroup-v2.ts: a systemd
// unit with Delegate=yes, a container with a cgroup namespace of its own and a writable cgroup
// file system), else cgroup v1's memory hierarchy where the bot may write it (cgroup-v1.ts: a
// root bot in a VM or a privileged container). Where neither, the cap holds per process only,
// and the start-up line and `npm run doctor` say why and how to get the cgroup.
//
// A command must be in its cgroup before it runs a single instruction, or what it forks
// first escapes. bwrap is therefore started through bash, which waits on a pipe until
// the bot has moved it into the cgroup, then execs bwrap (same pid, so the process group and
// signals are unchanged).
import { CgroupV1Commands } from './cgroup-v1.js';
import { assessCgroupV2, CgroupV2Commands, type CgroupV2Options } from './cgroup-v2.js';
import type { CommandCgroups } from './cgroup-port.js';

export interface MemoryBoundOptions extends CgroupV2Options {
  /** pids.max of each command's cgroup, where the pids controller is there (cgroup v2). */
  maxProcesses?: number;
  /** Where cgroup v1's memory hierarchy is mounted (tests). */
  v1Mount?: string;
  /** Look, change nothing (`npm run doctor`): say which bound a start would get. */
  dryRun?: boolean;
}

export interface MemoryBound {
  /** Null: the cap holds per process only (or a dry run). */
  groups: CommandCgroups | null;
  /** Which memory bound holds a command, for the start-up line and the doctor. */
  kind: 'cgroup v2' | 'cgroup v1' | 'per process';
  /** Why there is no cgroup per command, and how to get one; null when there is. */
  missing: string | null;
}

const HOW_V2 =
  'to bound each command as a whole, give the bot a cgroup of its own to delegate: run it as a systemd service with Delegate=yes (docs/security.md, "The shell sandbox"), ' +
  'or in a container with a cgroup namespace of its own and a writable cgroup file system (docker run --cgroupns=private --privileged; podman run --cgroupns=private --security-opt unmask=/sys/fs/cgroup)';

/** cgroup v2 where it is delegated, else v1 where it is writable, else none, with the reason. */
export function openCommandCgroups(maxBytes: number, options: MemoryBoundOptions = {}): MemoryBound {
  const v2 = assessCgroupV2(options);
  if (v2.kind === 'delegated') {
    if (options.dryRun) return { groups: null, kind: 'cgroup v2', missing: null };
    const groups = CgroupV2Commands.open(maxBytes, { ...options, assessment: v2 });
    if (groups) return { groups, kind: 'cgroup v2', missing: null };
  }
  if (v2.kind === 'not-v2') {
    const groups = CgroupV1Commands.open(maxBytes, {
      mount: options.v1Mount,
      ownCgroupFile: options.selfCgroupFile,
      pid: options.pid,
    });
    if (groups) {
      if (options.dryRun) groups.close();
      return { groups: options.dryRun ? null : groups, kind: 'cgroup v1', missing: null };
    }
    return {
      groups: null,
      kind: 'per process',
      missing:
        "cgroup v1's memory hierarchy cannot be written by the bot (a root bot in a VM or a privileged container can)",
    };
  }
  const why =
    v2.kind === 'delegated' ? `cgroup v2: a trial cgroup could not be made in ${v2.own}` : `cgroup v2: ${v2.why}`;
  return { groups: null, kind: 'per process', missing: `${why}; ${HOW_V2}` };
}
