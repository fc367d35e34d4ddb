// A schedule's instants, read with croner (a kept cron library that knows time zones and
// daylight-saving gaps). Only its date arithmetic is used: the scheduler keeps its own timers
// so that one process holds thousands of schedules on one timer, and tests inject the clock.
import { Cron } from 'croner';
import type { ScheduleSpec } from './schedule-types.js';

/** The first instant of `spec` strictly after `after` (epoch ms), or null when none is left. */
export function nextRunAfter(spec: ScheduleSpec, after: number): number | null {
  if (spec.kind === 'once') return spec.at > after ? spec.at : null;
  const next = cronOf(spec).nextRun(new Date(after));
  return next ? next.getTime() : null;
}

/** The next `count` instants after `after`: for the minimum-interval check and for /schedules. */
export function nextRuns(spec: ScheduleSpec, after: number, count: number): number[] {
  if (spec.kind === 'once') return spec.at > after ? [spec.at] : [];
  return cronOf(spec)
    .nextRuns(count, new Date(after))
    .map((date) => date.getTime());
}

function cronOf(spec: Extract<ScheduleSpec, { kind: 'cron' }>): Cron {
  // `paused`: croner must not start a timer of its own. Its default keeps the usual cron rule
  // that a day-of-month and a day-of-week both given mean either (`domAndDow: false`).
  return new Cron(spec.pattern, { timezone: spec.timezone, paused: true });
}
