// What the schedule tests share: a manual clock whose advance runs the timers that came due,
// each at its own instant and in order (no wall-clock waits), a schedule fixture, and a
// Scheduler whose fire and skipped calls are recorded with the clock's time when they came.
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
    this.timers.set(handle, { at: this.current + Math.max(0, ms), fn });
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
   * Move to `target`, running every timer due by then at its own instant, earliest first, and
   * awaiting `settle` (the schedulers' idle) after each so their work is done before time moves on.
   */
  async advanceTo(target: number, settle: () => Promise<void>): Promise<void> {
    for (let steps = 0; ; steps++) {
      if (steps > 1_000_000) throw new Error('ManualClock: timers keep coming due without end');
      let earliest: [number, ManualTimer] | undefined;
      for (const entry of this.timers) if (entry[1].at <= target && (!earliest || entry[1].at < earliest[1].at)) earliest = entry;
      if (!earliest) break;
      this.timers.delete(earliest[0]);
      this.current = Math.max(this.current, earliest[1].at);
      earliest[1].fn();
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

export function scheduleOf(id: string, spec: ScheduleSpec, nextRunAt: number | null, more: Partial<Schedule> = {}): Schedule {
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

export interface Recorded {
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

export function recordingScheduler(clock: ManualClock, options: Omit<SchedulerOptions, 'fire' | 'skipped' | 'clock'> & { fire?: SchedulerOptions['fire'] }): RecordingScheduler {
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
