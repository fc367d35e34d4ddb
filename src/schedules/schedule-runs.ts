// What a schedule's occurrence does (the Scheduler's `fire` and `skipped`): a turn in the
// schedule's thread, asked by its creator, as if they had written the task there. It is the
// creator's turn in every way the bot judges one: their membership and the thread's profile,
// their spend limits, their grants; approvals go to whoever approves in that thread. The thread
// is told each run, with the next one; a run that waits for a decision longer than
// SCHEDULE_WAIT_LIMIT is closed with a note, so a forgotten approval does not hold the thread
// until the next run.
//
// Access is checked before anything is posted: a creator who may no longer use the bot in the
// thread gets no run and no note. The first such run pauses the schedule and tells the thread's
// approvers, once; later ones say nothing, and the schedule resumes or ends by itself
// (access-pauses.ts). `deliver` checks the same again as it takes the task.
import type { EngineLogger } from '../engine/index.js';
import type { AccessPolicy } from '../sessions/access-policy.js';
import type { DeliverResult, InboundMessage } from '../sessions/session-manager.js';
import type { ThreadNotice } from '../sessions/session-observer.js';
import { sessionIdOf, type SessionKey, type SessionRecord } from '../store/session-store.js';
import type { AccessPauses } from './access-pauses.js';
import { describeInstant } from './parse-when.js';
import type { Schedule } from './schedule-types.js';

/** What a schedule's run tells its thread. */
export type ScheduleNotice = Extract<ThreadNotice, { kind: 'schedule' | 'schedule_paused' }>;

export interface ScheduleRunsOptions {
  manager: {
    deliver(key: SessionKey, message: InboundMessage): Promise<DeliverResult>;
    openThread(key: SessionKey, starter: string): Promise<SessionRecord>;
    closeWaitingSince(sessionId: string, since: number): Promise<boolean>;
  };
  /** Who may run a turn in the thread (as `deliver` judges it) and who approves there. */
  access: Pick<AccessPolicy, 'mayStartOrSteer' | 'approversOf'>;
  /** Pauses and ends of schedules whose creator lost access. */
  pauses: AccessPauses;
  /** Show a note in the thread (observers.onNotice). */
  notify: (record: SessionRecord, notice: ScheduleNotice) => Promise<void>;
  clock: { now(): number; setTimer(fn: () => void, ms: number): unknown; clearTimer(handle: unknown): void };
  /** SCHEDULE_WAIT_LIMIT. */
  waitLimitMs: number;
  logger: EngineLogger;
}

export class ScheduleRuns {
  private readonly waits = new Set<unknown>();

  constructor(private readonly options: ScheduleRunsOptions) {}

  /** One occurrence: its creator's access, the note (with the next run), then the creator's turn. */
  readonly fire = async (schedule: Schedule, dueAt: number): Promise<void> => {
    const { manager } = this.options;
    const record = await manager.openThread(schedule.key, schedule.creator);
    const admitted = await this.admitted(schedule, record);
    if (admitted === 'refused') return;
    const resumed = admitted === 'resumed' ? ' (resumed: its creator may use the bot here again)' : '';
    // No mention in the note: the platforms show notes as inert text (the task is a person's words).
    await this.say(record, `Scheduled run of ${schedule.id}${resumed}: “${schedule.task}”. ${nextWords(schedule)}`);
    // The inbox stamps prompts with the system's time, whatever clock the schedules run on.
    const firedAt = Date.now();
    const result = await manager.deliver(schedule.key, {
      text: taskText(schedule, dueAt),
      userId: schedule.creator,
      // One turn per occurrence, whatever delivers it twice (the event ledger, or Redis in cluster mode).
      eventId: `schedule-run:${schedule.id}:${dueAt}`,
    });
    if (result.status === 'refused') {
      await this.say(record, `Skipped this run of ${schedule.id}: ${result.reason}`);
      return;
    }
    if (result.status === 'duplicate') return;
    this.watchWait(record, schedule, firedAt);
  };

  /** An occurrence found past SCHEDULE_GRACE (the bot was down then): said once, not run. */
  readonly skipped = async (schedule: Schedule, dueAt: number): Promise<void> => {
    const record = await this.options.manager.openThread(schedule.key, schedule.creator);
    if ((await this.admitted(schedule, record)) === 'refused') return;
    await this.say(
      record,
      `Skipped the run of ${schedule.id} due ${describeInstant(dueAt, schedule.timezone)}: I was not running then, and it is too late now (SCHEDULE_GRACE). ${nextWords(schedule)}`,
    );
  };

  close(): void {
    for (const handle of this.waits) this.options.clock.clearTimer(handle);
    this.waits.clear();
  }

  /** After SCHEDULE_WAIT_LIMIT, a decision this run still waits for closes it (prompts opened before the run are a person's, left alone). */
  private watchWait(record: SessionRecord, schedule: Schedule, firedAt: number): void {
    const { clock, waitLimitMs, manager, logger } = this.options;
    const handle = clock.setTimer(() => {
      this.waits.delete(handle);
      void manager
        .closeWaitingSince(sessionIdOf(schedule.key), firedAt)
        .then((closed) =>
          closed
            ? this.say(
                record,
                `Closed this run of ${schedule.id}: it waited ${minutes(waitLimitMs)} for a decision nobody made (SCHEDULE_WAIT_LIMIT). ${nextWords(schedule)}`,
              )
            : undefined,
        )
        .catch((error: unknown) =>
          logger.warn({ err: error, schedule: schedule.id }, 'could not close a scheduled run that waited too long'),
        );
    }, waitLimitMs);
    this.waits.add(handle);
  }

  /**
   * Whether the creator may run a turn in the thread now, judged as `deliver` will judge the
   * task. A refusal is counted (access-pauses.ts); the first pauses the schedule and is the one
   * thing its thread is told, addressed to the people who approve there.
   */
  private async admitted(schedule: Schedule, record: SessionRecord): Promise<'admitted' | 'resumed' | 'refused'> {
    const { access, pauses, logger } = this.options;
    if (access.mayStartOrSteer(schedule.creator, {}, record.profile).allowed) {
      // A pause that could not be lifted now (the store is down) does not cost the run: the next run lifts it.
      const resumed = await pauses.admitted(schedule).catch((error: unknown) => {
        logger.warn(
          { err: error, schedule: schedule.id },
          'schedules: could not lift the pause of a schedule whose creator may run it again',
        );
        return false;
      });
      return resumed ? 'resumed' : 'admitted';
    }
    const outcome = await pauses.refused(schedule);
    logger.info(
      { schedule: schedule.id, creator: schedule.creator, outcome: outcome.kind },
      'schedules: a run refused, its creator may no longer use the bot in its thread',
    );
    const told = {
      scheduleId: schedule.id,
      task: schedule.task,
      creator: schedule.creator,
      approvers: access.approversOf(record),
    };
    if (outcome.kind === 'paused') {
      await this.say(record, {
        kind: 'schedule_paused',
        ...told,
        runsLeft: outcome.runsLeft,
        ...(schedule.nextRunAt !== null ? { next: describeInstant(schedule.nextRunAt, schedule.timezone) } : {}),
      });
    } else if (outcome.kind === 'gone' && schedule.nextRunAt === null && schedule.pausedAt === undefined) {
      // A one-off's only run (its record went when it was claimed): said once, as it ends.
      await this.say(record, { kind: 'schedule_paused', ...told, runsLeft: 0 });
    }
    return 'refused';
  }

  private async say(record: SessionRecord, note: string | ScheduleNotice): Promise<void> {
    try {
      await this.options.notify(record, typeof note === 'string' ? { kind: 'schedule', text: note } : note);
    } catch (error) {
      this.options.logger.warn({ err: error, sessionId: record.id }, 'could not show a schedule note');
    }
  }
}

/** What the model reads: the task, framed as the scheduled request it is (the creator is not typing now). */
function taskText(schedule: Schedule, dueAt: number): string {
  return `[Scheduled task ${schedule.id}, set by <@${schedule.creator}> (${schedule.when}); this run was due ${describeInstant(dueAt, schedule.timezone)}. Its author may not be watching: do the task and report in the thread.]\n${schedule.task}`;
}

function nextWords(schedule: Schedule): string {
  return schedule.nextRunAt === null
    ? 'That was its last run.'
    : `Next run: ${describeInstant(schedule.nextRunAt, schedule.timezone)}.`;
}

function minutes(ms: number): string {
  const count = Math.round(ms / 60_000);
  return count >= 120 && count % 60 === 0 ? `${count / 60} hours` : `${count} minute${count === 1 ? '' : 's'}`;
}
