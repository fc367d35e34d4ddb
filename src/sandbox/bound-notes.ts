// Which of the sandbox's bounds a finished command ran into, in words for the model.
//
// One idea: an rlimit does not announce itself. A process past RLIMIT_AS sees malloc fail and
// prints its own complaint (Python's MemoryError, V8's "Failed to reserve virtual memory",
// "Cannot allocate memory"); past RLIMIT_NPROC, fork fails with EAGAIN; past RLIMIT_FSIZE the
// kernel sends SIGXFSZ ("File size limit exceeded"); a full tmpfs says "No space left on
// device". Those words in a command's output point at the bound, and the note says which
// setting holds it, so the model changes its approach instead of retrying. The output is
// read whatever the exit code (`big-job | tail` exits 0), so the note says what the output
// shows rather than claiming the cap was hit.
import type { SandboxLimits } from './bwrap-sandbox.js';
import { thousands } from '../text/thousands.js';

const MB = 1024 * 1024;

const MEMORY =
  /Cannot allocate memory|MemoryError|out of memory|std::bad_alloc|memory exhausted|Failed to reserve virtual memory|Allocation failed|ENOMEM/i;
const PROCESSES =
  /fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't fork|BlockingIOError: \[Errno 11\]/i;
const FILE_SIZE = /File size limit exceeded|EFBIG|File too large/i;
const NO_SPACE = /No space left on device|ENOSPC/i;

export interface FinishedCommand {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  /** The file size limit this command had (less than the sandbox's when the workspace is nearly full). */
  maxFileBytes: number;
  /** Processes the kernel ended because the command's memory cgroup was full (command-cgroup.ts). */
  oomKills?: number;
  /** Set when the workspace's own disk (workspace-disks.ts) is full after the command: its size, in bytes. */
  workspaceDiskFullAt?: number;
}

export function boundNotes(limits: SandboxLimits, finished: FinishedCommand): string[] {
  const { output } = finished;
  const notes: string[] = [];
  if ((finished.oomKills ?? 0) > 0) {
    const kills = finished.oomKills === 1 ? 'one of its processes' : `${finished.oomKills} of its processes`;
    notes.push(
      `the command reached its memory cap (${mb(limits.maxMemoryBytes)} for all its processes together, SHELL_MAX_MEMORY_MB) and the kernel ended ${kills}; use less memory (smaller inputs, fewer processes at once, streaming)`,
    );
  } else if (MEMORY.test(output)) {
    notes.push(
      `the output shows memory running out: the memory cap allows each process at most ${mb(limits.maxMemoryBytes)} of address space (SHELL_MAX_MEMORY_MB); use less memory (smaller inputs, streaming)`,
    );
  }
  if (PROCESSES.test(output)) {
    notes.push(
      `the output shows a process that could not start: the process cap allows at most ${thousands(limits.maxProcesses)} processes at once; start fewer`,
    );
  }
  if (FILE_SIZE.test(output) || finished.signal === 'SIGXFSZ') {
    notes.push(
      finished.maxFileBytes < limits.maxFileBytes
        ? `the output shows a file stopped at what was left of the workspace's cap (${mb(finished.maxFileBytes)}, WORKSPACE_MAX_MB); delete files in the workspace before writing more`
        : `the output shows a file stopped at the largest size a command may write (${mb(limits.maxFileBytes)})`,
    );
  }
  if (NO_SPACE.test(output)) {
    notes.push(
      finished.workspaceDiskFullAt !== undefined
        ? `the output shows a full disk: the workspace is full, at its cap of ${mb(finished.workspaceDiskFullAt)} (WORKSPACE_MAX_MB, held by a disk of its own); delete files in the workspace (rm) before writing more`
        : `the output shows a full disk: the private /tmp (and /dev/shm) holds at most ${mb(limits.tmpBytes)} (SHELL_TMP_MB); write large files in the workspace instead`,
    );
  }
  return notes;
}

function mb(bytes: number): string {
  const value = bytes / MB;
  return `${value < 10 ? value.toFixed(2) : thousands(Math.round(value))} MB`;
}
