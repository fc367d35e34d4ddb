// What the workspace's cap (WORKSPACE_MAX_MB) does to one shell command: whether it may start,
// the largest file it may write, whether it is watched while it runs, and, after it, whether
// the workspace's own disk is what ran full.
//
// One idea: a command that only deletes is never held back. It starts in a full workspace
// (deleting is what the words ask for) and is never watched; any other command is ended only
// if it took the workspace past its cap while it ran, so one started over the cap that frees
// space (an `rm -rf` of part of it) carries on. Where the folder has a disk of its own the
// size of the cap (src/sandbox/workspace-disks.ts), the kernel holds it: nothing to watch.
import type { DiskState, WorkspaceDisk } from '../sandbox/workspace-disks.js';
import { onlyDeletes, type WorkspaceQuota, type WorkspaceUsage } from './workspace-usage.js';

/**
 * A disk up to this much larger than the cap holds it well enough (ext4's overhead is measured
 * and added, so a disk is within a percent of its cap); a larger one, made for a higher cap
 * since lowered, is watched as well.
 */
const DISK_SIZE_SLACK = 1.1;
/** A disk with less than this free (or a hundredth of it) is full: where ENOSPC came from. */
const DISK_FULL_BYTES = 64 * 1024;

export interface CommandCap {
  /** RLIMIT_FSIZE for the command: what is left of the cap (undefined: no cap). */
  maxFileBytes?: number;
  /** Watch the running command every `everyMs`; `stop` ends it. A no-op where nothing needs watching. */
  watch(everyMs: number, stop: () => void, done: () => boolean, later: (ms: number, action: () => void) => void): void;
  /** After the command: the disk's size, when the workspace's own disk is full. */
  diskFullAt(): number | undefined;
}

/** Before a command: refused (with the words why), or its cap. The disk comes first: at the first command the folder's files move onto it. */
export async function commandCap(
  command: string,
  quota: WorkspaceQuota | undefined,
  disk: WorkspaceDisk | undefined,
): Promise<{ refused: string } | CommandCap> {
  const state = await disk?.ensure();
  const deletesOnly = onlyDeletes(command);
  if (!quota) return { watch: () => undefined, diskFullAt: () => diskFullAt(state) };
  const check = await quota.check();
  if (check.full && !deletesOnly) return { refused: check.full };
  const heldByDisk = state?.held === true && state.usableBytes <= quota.maxBytes * DISK_SIZE_SLACK;
  return {
    maxFileBytes: Math.max(check.left, 1),
    watch: (everyMs, stop, done, later) => {
      if (!deletesOnly && !heldByDisk) watchQuota(quota, check.usage, everyMs, stop, done, later);
    },
    diskFullAt: () => diskFullAt(state),
  };
}

/**
 * Measure the workspace every `everyMs` while the command runs; past its cap, end the command,
 * but only if it added to the workspace since it started: a workspace that was over its cap
 * already, and is shrinking, is what the model was asked to do. One walk at a time (each
 * bounded by the walk's entry count).
 */
function watchQuota(
  quota: WorkspaceQuota,
  before: WorkspaceUsage,
  everyMs: number,
  stop: () => void,
  done: () => boolean,
  later: (ms: number, action: () => void) => void,
): void {
  const grew = (now: WorkspaceUsage): boolean => now.bytes > before.bytes || (before.complete && !now.complete);
  const tick = (): void => {
    if (done()) return;
    void quota.check().then(
      (check) => {
        if (done()) return;
        if (check.full && grew(check.usage)) stop();
        else later(everyMs, tick);
      },
      () => later(everyMs, tick),
    );
  };
  later(everyMs, tick);
}

/** The disk's size, when the workspace's own disk is (nearly) full. */
function diskFullAt(disk: DiskState | undefined): number | undefined {
  if (!disk?.held) return undefined;
  try {
    return disk.freeBytes() < Math.max(DISK_FULL_BYTES, disk.usableBytes / 100) ? disk.usableBytes : undefined;
  } catch {
    return undefined; // unmounted meanwhile
  }
}
