// What the sandbox holds of a command's memory cgroup, whichever cgroup version made it
// (cgroup-v2.ts, cgroup-v1.ts; command-cgroup.ts picks the one the host allows). Apart from
// the picker so that each version names it without importing the picker that imports them.

export interface CommandCgroup {
  /** Put a process (and everything it will start) in the cgroup; false when the kernel refused. */
  add(pid: number): boolean;
  /** How many of the command's processes the OOM killer ended because the cap was reached. */
  oomKills(): number;
  /** Remove the cgroup once the command is over (retried while the kernel still tears it down). */
  remove(): Promise<void>;
}

/** The bot's cgroups for commands: one per command, made in `folder`. */
export interface CommandCgroups {
  readonly version: 1 | 2;
  /** Where the commands' cgroups are made. */
  readonly folder: string;
  readonly maxBytes: number;
  /** A fresh cgroup capped at maxBytes, or null when one could not be made (the rlimit still holds). */
  create(): CommandCgroup | null;
  /** At shutdown (or after a check): what the bot made for its commands goes. */
  close(): void;
}
