// What the schedule tests share: a manual clock whose advance runs the timers that came due,
// each at its own instant and in order (no wall-clock waits), a schedule fixture, and a
// Scheduler whose fire and skipped calls are recorded with the clock's time when they came.
import { AsyncResource } from 'node:async_hooks';
import type { Schedule, ScheduleSpec } from '../../src/schedules/schedule-types.js';
import { Scheduler, type ScheduleClock, type SchedulerOptions } from '../../src/schedules/scheduler.js';

interface ManualTimer {
  at: number;
  fn: () => void;
}

export class ManualClock implements ScheduleClock {
  private readonly timers = new Map<number, ManualTimer>();
  private nextHandle = 1;
  /** The most timers ever armed at once (the scheduler keeps one). */
  maxArmed = 0;

  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    // Bound to the context it was set in, as setTimeout's callbacks are (AsyncLocalStorage).
    this.timers.set(handle, { at: this.current + Math.max(0, ms), fn: AsyncResource.bind(fn) });
    this.maxArmed = Math.max(this.maxArmed, this.timers.size);
    return handle;
  }

  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get armed(): number {
    return this.timers.size;
  }

  /**
   * Move to `target`, running the timers due by then at their own instants, earliest first
   * (those due at one instant all together, so two schedulers on this clock race as two
   * instances would), and awaiting `settle` (the schedulers' idle) after each instant.
   */
  async advanceTo(target: number, settle: () => Promise<void>): Promise<void> {
    for (let steps = 0; ; steps++) {
      if (steps > 1_000_000) throw new Error('ManualClock: timers keep coming due without end');
      let at = Number.POSITIVE_INFINITY;
      for (const timer of this.timers.values()) if (timer.at <= target) at = Math.min(at, timer.at);
      if (at === Number.POSITIVE_INFINITY) break;
      const due = [...this.timers].filter(([, timer]) => timer.at === at);
      for (const [handle] of due) this.timers.delete(handle);
      this.current = Math.max(this.current, at);
      for (const [, timer] of due) timer.fn();
      await settle();
    }
    this.current = Math.max(this.current, target);
    await settle();
  }

  advance(ms: number, settle: () => Promise<void>): Promise<void> {
    return this.advanceTo(this.current + ms, settle);
  }
}

export const KEY = { platform: 'slack', workspace: 'T1', channel: 'C1', thread: '1700000000.000100' };

export function scheduleOf(
  id: string,
  spec: ScheduleSpec,
  nextRunAt: number | null,
  more: Partial<Schedule> = {},
): Schedule {
  return {
    id,
    key: KEY,
    creator: 'U1',
    task: `task of ${id}`,
    spec,
    when: spec.kind === 'once' ? new Date(spec.at).toISOString() : spec.pattern,
    timezone: spec.kind === 'cron' ? spec.timezone : 'UTC',
    nextRunAt,
    createdAt: 0,
    via: 'command',
    ...more,
  };
}

interface Recorded {
  id: string;
  dueAt: number;
  /** The clock when the call came. */
  at: number;
  /** What the schedule said its next run was. */
  next: number | null;
}

export interface RecordingScheduler {
  scheduler: Scheduler;
  fired: Recorded[];
  skipped: Recorded[];
}

export function recordingScheduler(
  clock: ManualClock,
  options: Omit<SchedulerOptions, 'fire' | 'skipped' | 'clock'> & { fire?: SchedulerOptions['fire'] },
): RecordingScheduler {
  const fired: Recorded[] = [];
  const skipped: Recorded[] = [];
  const scheduler = new Scheduler({
    ...options,
    clock,
    fire: async (schedule, dueAt) => {
      fired.push({ id: schedule.id, dueAt, at: clock.now(), next: schedule.nextRunAt });
      await options.fire?.(schedule, dueAt);
    },
    skipped: (schedule, dueAt) => {
      skipped.push({ id: schedule.id, dueAt, at: clock.now(), next: schedule.nextRunAt });
      return Promise.resolve();
    },
  });
  return { scheduler, fired, skipped };
}
