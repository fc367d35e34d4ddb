// CPU time, for tests that check how much work something is: a busy machine stretches the
// wall clock (this process waits for a core), far less the CPU time the work itself takes.
// (Threads of this process count too: keep the work measured synchronous and alone.)

/** The CPU time (user and system, ms) `work` took. */
export function cpuMsOf(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1_000;
}
