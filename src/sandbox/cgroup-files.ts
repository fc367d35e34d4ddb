// The few file operations every cgroup version shares: a cgroup is a folder whose files are
// the kernel's, made with mkdir, removed with rmdir (never by deleting its files), and told
// things by writing a line into one of them.
import { readFileSync, rmdirSync, writeFileSync } from 'node:fs';

/** rmdir of a cgroup whose last process is still being torn down fails (EBUSY) for a moment. */
const REMOVE_TRIES = 20;
const REMOVE_PAUSE_MS = 25;

/** rmdir is how a cgroup is removed (its control files are not real files); true when it is gone. */
export function tryRemoveCgroup(folder: string): boolean {
  try {
    rmdirSync(folder);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Removed once the kernel has let its last process go. */
export async function removeCgroup(folder: string): Promise<void> {
  for (let attempt = 0; attempt < REMOVE_TRIES; attempt++) {
    if (tryRemoveCgroup(folder)) return;
    await new Promise((resolve) => setTimeout(resolve, REMOVE_PAUSE_MS));
  }
}

export function writeQuietly(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

/** The `oom_kill N` count in a memory cgroup's events file (v1: memory.oom_control, v2: memory.events); 0 when unread. */
export function oomKillCount(eventsFile: string): number {
  try {
    const match = /^oom_kill (\d+)$/m.exec(readFileSync(eventsFile, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}
