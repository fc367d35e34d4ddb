// Whether a process id names a live process: for folders a process left behind (a command's
// cgroup, a playground run's files) that may be removed once their owner is gone.

/** Whether a process with this id exists (EPERM: it does, as another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
