// What one workspace holds on disk, against its cap (WORKSPACE_MAX_MB).
//
// One idea: the cap is measured here; where the workspace has a disk of its own
// (src/sandbox/workspace-disks.ts), the kernel holds it too. Before a command, the workspace
// is walked: past the cap, the command is refused with words telling the model to delete
// files; under it, the command may write no file larger than what is left (RLIMIT_FSIZE, set
// by the sandbox). Without a disk of its own, the walk is repeated while the command runs, and
// a command that takes the workspace past its cap is ended (shell-session.ts): best effort,
// since a command can write faster than a walk looks. write_file and edit_file ask the same
// question before writing.
//
// The walk is bounded by work, not time: at most `maxEntries` files and folders are looked
// at, and a workspace holding more counts as full (inodes are disk too). Disk use is counted
// as the file system does (allocated blocks), so a sparse file costs what it really takes,
// and a file with several names (hard links) is counted once, by its inode; symbolic links
// are not followed (what they point at is outside, or counted where it is).
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import path from 'node:path';
import { thousands } from '../text/thousands.js';

/** More than this many files and folders and the workspace counts as full. */
const DEFAULT_MAX_WORKSPACE_ENTRIES = 200_000;

export interface WorkspaceUsage {
  /** Bytes the walk found (a lower bound when `complete` is false). */
  bytes: number;
  entries: number;
  /** False when the walk stopped at the entry bound. */
  complete: boolean;
}

export interface QuotaCheck {
  usage: WorkspaceUsage;
  /** Bytes that may still be written (0 when full). */
  left: number;
  /** Why the workspace is full, in words for the model; null when it is not. */
  full: string | null;
}

/**
 * Walk `root` without following links, counting allocated bytes, stopping past `maxEntries`.
 * Synchronous calls in slices of SLICE_ENTRIES, the event loop free between them: one awaited
 * lstat per entry took 0.8 s for 20,000 files (a thread-pool hop each), the slices about 60 ms.
 */
export async function measureFolder(root: string, maxEntries = DEFAULT_MAX_WORKSPACE_ENTRIES): Promise<WorkspaceUsage> {
  let bytes = 0;
  let entries = 0;
  let slice = 0;
  const folders = [root];
  // Files with more than one name, by device and inode: the second name costs nothing.
  const linked = new Set<string>();
  const rootStats = lstatOrNull(root);
  if (rootStats) bytes += rootStats.blocks * 512;
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue; // gone meanwhile, or not a folder any more
    }
    for (const name of names) {
      if (++entries > maxEntries) return { bytes, entries: entries - 1, complete: false };
      if (++slice >= SLICE_ENTRIES) {
        slice = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const entry = path.join(folder, name);
      const stats = lstatOrNull(entry);
      if (!stats) continue;
      if (stats.isDirectory()) folders.push(entry);
      else if (stats.nlink > 1) {
        const inode = `${stats.dev}:${stats.ino}`;
        if (linked.has(inode)) continue;
        linked.add(inode);
      }
      bytes += stats.blocks * 512;
    }
  }
  return { bytes, entries, complete: true };
}

/** Entries looked at between two turns of the event loop. */
const SLICE_ENTRIES = 2_000;

function lstatOrNull(entry: string): Stats | null {
  try {
    return lstatSync(entry);
  } catch {
    return null; // gone between the listing and the look
  }
}

export class WorkspaceQuota {
  constructor(
    /** The workspace folder measured (a function: the folder is the session's). */
    private readonly root: () => string,
    readonly maxBytes: number,
    private readonly maxEntries = DEFAULT_MAX_WORKSPACE_ENTRIES,
  ) {
    if (!Number.isFinite(maxBytes) || maxBytes <= 0)
      throw new Error(`the workspace cap must be a positive number of bytes, got ${maxBytes}`);
  }

  /** Measure now. `adding` bytes about to be written, `replacing` bytes they replace (a rewritten file). */
  async check(adding = 0, replacing = 0): Promise<QuotaCheck> {
    const usage = await measureFolder(this.root(), this.maxEntries);
    const cap = `its cap of ${megabytes(this.maxBytes)} (WORKSPACE_MAX_MB)`;
    const advice = 'delete files in the workspace (rm) you no longer need, then try again';
    if (!usage.complete) {
      return {
        usage,
        left: 0,
        full: `the workspace holds more than ${thousands(this.maxEntries)} files and folders, the most it may hold; ${advice}`,
      };
    }
    const after = usage.bytes + adding - Math.min(replacing, usage.bytes);
    if (after > this.maxBytes) {
      const what =
        adding > 0
          ? `writing ${megabytes(adding)} would take the workspace to ${megabytes(after)}`
          : `the workspace holds ${megabytes(usage.bytes)}`;
      return { usage, left: 0, full: `${what}, past ${cap}; ${advice}` };
    }
    return { usage, left: this.maxBytes - after, full: null };
  }

  /** The words for a command ended because the workspace passed its cap while it ran. */
  endedText(): string {
    return `ended: the workspace passed its cap of ${megabytes(this.maxBytes)} (WORKSPACE_MAX_MB) while the command ran; delete files in the workspace (rm) before writing more`;
  }
}

function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${mb < 10 ? mb.toFixed(2) : thousands(Math.round(mb))} MB`;
}

/**
 * A command line of `rm`, `rmdir` and `cd` alone (joined by `;` or `&&`): it frees
 * space, which is what a full workspace asks for, so it runs. No pipes, substitutions or
 * redirections, which could write.
 */
export function onlyDeletes(command: string): boolean {
  const parts = command
    .split(/&&|;|\n/)
    .map((part) => part.trim())
    .filter(Boolean);
  return parts.length > 0 && parts.every((part) => /^(rm|rmdir|cd)(\s|$)/.test(part) && !/[|`$<>(]/.test(part));
}
