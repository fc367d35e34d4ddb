// What the thread commands (/schedule, /schedules, /unschedule, /forget) and the
// schedule_task tool ask of scheduled work (ScheduleDesk): make one from a person's words
// after the checks (time zone, an instant that comes, the minimum interval, the caps per
// person and per channel), list, end; the store is changed first, then the Scheduler is told.
//
// The caps are exact within one instance (creates here run one at a time). Two instances
// creating at the same moment could both pass a cap by one: a cap is a guard against
// runaway creation, not an invariant, and a lock across instances is not worth it for it.
import { randomBytes } from 'node:crypto';
import type { SessionKey } from '../store/session-store.js';
import { nextRunAfter } from './occurrences.js';
import { cadenceProblem, parseWhen } from './parse-when.js';
import { isKnownTimezone } from './zoned-time.js';
import type { ScheduleStore } from './schedule-store.js';
import type { Schedule, ScheduleDesk, ScheduleOutcome, ScheduleRequest } from './schedule-types.js';
import type { Scheduler } from './scheduler.js';

export interface ScheduleServiceOptions {
  store: ScheduleStore;
  /** Told of every schedule made or ended here. */
  scheduler: Pick<Scheduler, 'add' | 'remove'>;
  clock?: { now(): number };
  /** SCHEDULE_MIN_INTERVAL: a recurring schedule may not fire more often. */
  minIntervalMs: number;
  /** Schedules one person may have on one platform and workspace. */
  maxPerUser: number;
  /** Schedules one channel may have. */
  maxPerChannel: number;
  /** SCHEDULE_TZ: the time zone when the person's is not known (Discord). */
  defaultTimezone: string;
}

/** `s-` and 6 base32 characters: short enough to type after /unschedule, 2^30 of them. */
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const ID_LENGTH = 6;
/** @internal */
export const SCHEDULE_ID_PATTERN = /^s-[a-z2-7]{6}$/;
const ID_ATTEMPTS = 20;

export class ScheduleService implements ScheduleDesk {
  private readonly clock: { now(): number };
  /** Creates and ends, one at a time here: the caps count what the previous one did. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ScheduleServiceOptions) {
    this.clock = options.clock ?? { now: () => Date.now() };
  }

  create(request: ScheduleRequest): Promise<ScheduleOutcome> {
    return this.serially(() => this.createNow(request));
  }

  async list(query: { platform: string; workspace: string; creator?: string; channel?: string }): Promise<Schedule[]> {
    const found = (await this.options.store.all()).filter(
      (s) =>
        s.key.platform === query.platform &&
        s.key.workspace === query.workspace &&
        (query.creator === undefined || s.creator === query.creator) &&
        (query.channel === undefined || s.key.channel === query.channel),
    );
    return found.sort(
      (a, b) =>
        (a.nextRunAt ?? Number.POSITIVE_INFINITY) - (b.nextRunAt ?? Number.POSITIVE_INFINITY) ||
        a.createdAt - b.createdAt,
    );
  }

  end(
    id: string,
    _by: string,
    mayEnd: (schedule: Schedule) => boolean,
  ): Promise<{ ok: true; schedule: Schedule } | { ok: false; reason: string }> {
    return this.serially(async () => {
      const wanted = id.trim().toLowerCase();
      const schedule = SCHEDULE_ID_PATTERN.test(wanted) ? await this.options.store.get(wanted) : undefined;
      if (!schedule)
        return {
          ok: false as const,
          reason: `There is no schedule "${id.trim()}". /schedules lists yours with their ids.`,
        };
      if (!mayEnd(schedule))
        return {
          ok: false as const,
          reason: `Only the person who made schedule ${schedule.id}, the person who started its thread, whoever approves there, or an admin may end it.`,
        };
      await this.options.store.delete(schedule.id);
      this.options.scheduler.remove(schedule.id);
      return { ok: true as const, schedule };
    });
  }

  endForThread(key: SessionKey): Promise<number> {
    return this.serially(async () => {
      const mine = (await this.options.store.all()).filter(
        (s) =>
          s.key.platform === key.platform &&
          s.key.workspace === key.workspace &&
          s.key.channel === key.channel &&
          s.key.thread === key.thread,
      );
      for (const schedule of mine) {
        await this.options.store.delete(schedule.id);
        this.options.scheduler.remove(schedule.id);
      }
      return mine.length;
    });
  }

  private async createNow(request: ScheduleRequest): Promise<ScheduleOutcome> {
    const now = this.clock.now();
    const task = request.task.trim();
    if (!task) return { ok: false, reason: 'Say what to do at each run: /schedule <when> <task>.' };
    const timezone = request.timezone?.trim() || this.options.defaultTimezone;
    if (!isKnownTimezone(timezone))
      return {
        ok: false,
        reason: `"${timezone}" is not a time zone I know: use an IANA name such as Europe/Paris or America/New_York.`,
      };
    const reading = parseWhen(request.when, { timezone, now });
    if (!reading.ok) return { ok: false, reason: reading.reason };
    const problem = cadenceProblem(reading.spec, { now, minIntervalMs: this.options.minIntervalMs });
    if (problem) return { ok: false, reason: problem };
    const nextRunAt = nextRunAfter(reading.spec, now);
    if (nextRunAt === null)
      return { ok: false, reason: `"${request.when.trim()}" never comes after now, so it would never run.` };

    const stored = await this.options.store.all();
    const { platform, workspace, channel } = request.key;
    const place = stored.filter((s) => s.key.platform === platform && s.key.workspace === workspace);
    const theirs = place.filter((s) => s.creator === request.creator).length;
    if (theirs >= this.options.maxPerUser) {
      return {
        ok: false,
        reason: `You have ${theirs} schedules already, the most one person may have here (${this.options.maxPerUser}). End one with /unschedule <id> first (/schedules lists them).`,
      };
    }
    const channels = place.filter((s) => s.key.channel === channel).length;
    if (channels >= this.options.maxPerChannel) {
      return {
        ok: false,
        reason: `This channel has ${channels} schedules already, the most one channel may have (${this.options.maxPerChannel}). An admin can end one with /unschedule <id>.`,
      };
    }

    const id = await this.freshId(new Set(stored.map((s) => s.id)));
    const schedule: Schedule = {
      id,
      key: request.key,
      creator: request.creator,
      task,
      spec: reading.spec,
      when: request.when.trim(),
      timezone,
      nextRunAt,
      createdAt: now,
      via: request.via,
    };
    await this.options.store.save(schedule);
    this.options.scheduler.add(schedule);
    return { ok: true, schedule };
  }

  private async freshId(taken: Set<string>): Promise<string> {
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const id = `s-${randomId()}`;
      // The index was read a moment ago; the record itself says whether another instance took it since.
      if (!taken.has(id) && !(await this.options.store.get(id))) return id;
    }
    throw new Error(`could not find a free schedule id in ${ID_ATTEMPTS} tries`);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

function randomId(): string {
  const bytes = randomBytes(ID_LENGTH);
  let id = '';
  for (const byte of bytes) id += ID_ALPHABET[byte & 31];
  return id;
}
