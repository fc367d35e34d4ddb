// The coordinator's periodic work (renew, limits, poll, sweep), each check on its own timer.
// A check never overlaps itself: a tick that finds the previous run still going is skipped, so
// a slow Redis cannot pile calls up. The timers are unref'd: they never keep the process alive.
import type { EngineLogger } from '../engine/index.js';

/** A background check that keeps failing (Redis down) warns on its 1st, 50th, 100th… failure. */
const FAILURES_BETWEEN_WARNINGS = 50;

export class BackgroundChecks {
  private readonly timers: NodeJS.Timeout[] = [];

  /** `stopped` is asked at every tick: once true, no check starts again. */
  constructor(
    private readonly logger: EngineLogger,
    private readonly stopped: () => boolean,
  ) {}

  every(check: string, ms: number, work: () => Promise<void>): void {
    let running = false;
    // While Redis is down every check fails, every sweep period (200 ms in the cluster
    // tests): say so on the first failure, then every FAILURES_BETWEEN_WARNINGS-th, and once
    // when it works again, instead of a stack trace per attempt.
    let failures = 0;
    const timer = setInterval(() => {
      if (running || this.stopped()) return;
      running = true;
      work()
        .then(() => {
          if (failures > 0) this.logger.info({ check, failures }, 'cluster: background check works again');
          failures = 0;
        })
        .catch((error: unknown) => {
          failures++;
          if (failures === 1 || failures % FAILURES_BETWEEN_WARNINGS === 0)
            this.logger.warn({ err: error, check, failures }, 'cluster: background check failed');
        })
        .finally(() => (running = false));
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Clear every timer (a run under way finishes). */
  stopAll(): void {
    for (const timer of this.timers) clearInterval(timer);
  }
}
