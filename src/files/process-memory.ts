// How much memory another process holds, as the kernel counts it: its resident set now and
// the most it has held (VmRSS and VmHWM of /proc/<pid>/status), for a parent that bounds a
// child's memory by watching it. Linux only; elsewhere (macOS) there is nothing to read and
// the answer is undefined, which the caller must treat as "not watched".
import { readFileSync } from 'node:fs';

export interface ResidentMemory {
  /** Resident now, in bytes. */
  rss: number;
  /** The most it has been resident at any moment so far (the kernel's high-water mark), in bytes. */
  peak: number;
}

/** The process's resident memory, or undefined when it is gone or the system has no /proc. */
export function residentMemory(pid: number): ResidentMemory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return undefined;
  }
  const rss = kilobytes(status, 'VmRSS');
  // A zombie (exited, not yet reaped) has no memory lines left.
  if (rss === undefined) return undefined;
  return { rss, peak: Math.max(rss, kilobytes(status, 'VmHWM') ?? 0) };
}

function kilobytes(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  return match ? Number(match[1]) * 1024 : undefined;
}
