// A schedule whose creator may no longer use the bot in its thread (taken off ALLOWED_USERS
// or the profile's `allowedUsers`): each run would be their turn, so none runs. The first
// refused run pauses it and its thread's approvers are told once (schedule-runs.ts posts the
// note); while it is paused, nothing more is posted for it; each later occurrence looks again.
//
// - It resumes by itself at the first occurrence its creator may run again (an admin put them
//   back on the list): nobody resumes it for someone without access, since its runs are that
//   person's turns, and with access back nobody needs to.
// - REFUSALS_TO_END refused runs in a row end it: a schedule its creator could not run for that
//   long is not theirs to keep. Before that, whoever may end it (its creator, its thread's
//   approvers and starter, an admin: /unschedule) may do so at any time.
//
// The record is the truth (re-read here before each change, so a run on one instance sees what
// another recorded); an update never brings back a schedule ended meanwhile (ScheduleStore.update).
import type { ScheduleStore } from './schedule-store.js';
import type { Schedule } from './schedule-types.js';

/**
 * Refused runs in a row that end a schedule. The first pauses it and tells the approvers;
 * the next two are their time to put its creator back (two days for a daily schedule, two
 * weeks for a weekly one) or end it themselves.
 */
export const REFUSALS_TO_END = 3;

export type RefusalOutcome =
  /** The first refusal: now paused; its approvers are to be told, once. */
  | { kind: 'paused'; runsLeft: number }
  /** Paused already: nothing is said. */
  | { kind: 'still_paused'; runsLeft: number }
  /** The last refusal allowed: the schedule is deleted (its approvers were told at the first). */
  | { kind: 'ended' }
  /** There is no record to pause: it was ended meanwhile, or that was a one-off's only run. */
  | { kind: 'gone' };

export interface AccessPausesOptions {
  store: ScheduleStore;
  /** The Scheduler lets go of an ended schedule (it would also find out at its next claim). */
  forget: (id: string) => void;
  clock: { now(): number };
}

export class AccessPauses {
  constructor(private readonly options: AccessPausesOptions) {}

  /** A run refused because its creator lacks access: counted, and the schedule paused or ended. */
  async refused(schedule: Schedule): Promise<RefusalOutcome> {
    const { store, forget, clock } = this.options;
    const current = await store.get(schedule.id);
    if (!current) return { kind: 'gone' };
    const refusals = (current.accessRefusals ?? 0) + 1;
    if (refusals >= REFUSALS_TO_END) {
      await store.delete(current.id);
      forget(current.id);
      return { kind: 'ended' };
    }
    if (!(await store.update({ ...current, pausedAt: current.pausedAt ?? clock.now(), accessRefusals: refusals })))
      return { kind: 'gone' };
    const runsLeft = REFUSALS_TO_END - refusals;
    return current.pausedAt === undefined ? { kind: 'paused', runsLeft } : { kind: 'still_paused', runsLeft };
  }

  /** Its creator may run it: a pause (or a count of refusals) is lifted. Resolves whether it was paused. */
  async admitted(schedule: Schedule): Promise<boolean> {
    if (schedule.pausedAt === undefined && schedule.accessRefusals === undefined) return false;
    const current = await this.options.store.get(schedule.id);
    if (!current || (current.pausedAt === undefined && current.accessRefusals === undefined))
      return schedule.pausedAt !== undefined;
    const { pausedAt, accessRefusals: _count, ...running } = current;
    await this.options.store.update(running);
    return pausedAt !== undefined;
  }
}
