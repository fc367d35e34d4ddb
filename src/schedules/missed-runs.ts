// Which occurrence to act on when a schedule's due instant has passed: the latest instant of
// its spec that is not in the future. A bot down for a day with an hourly schedule acts once
// (fires if that latest instant is within the grace, else skips it with a note), never 24
// times in a row. Read with croner's previousRuns, the same library occurrences.ts uses.
import { Cron } from 'croner';
import type { ScheduleSpec } from './schedule-types.js';

/**
 * The latest instant of `spec` at or before `now`, and no earlier than `due` (the instant the
 * schedule was waiting for, itself an instant of the spec and at or before `now`).
 */
export function latestDue(spec: ScheduleSpec, due: number, now: number): number {
  if (spec.kind === 'once' || now <= due) return due;
  const cron = new Cron(spec.pattern, { timezone: spec.timezone, paused: true });
  // previousRuns includes a run in the same second as the reference: +1 ms makes `now` itself count.
  const latest = cron.previousRuns(1, new Date(now + 1))[0]?.getTime();
  return latest !== undefined && latest > due && latest <= now ? latest : due;
}
