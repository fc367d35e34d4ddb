// The scheduler runtime on one instance, with a manual clock (advancing it runs the timers at
// their instants) and the real store and claim core uses: a SQLite Keyv store, the
// in-process coordinator's claimEvent over the session store's event ledger.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fenceScope } from '../../src/cluster/fence-scope.js';
import { ScheduleStore } from '../../src/schedules/schedule-store.js';
import type { Schedule } from '../../src/schedules/schedule-types.js';
import type { Scheduler } from '../../src/schedules/scheduler.js';
import { InProcessCoordinator } from '../../src/sessions/coordination.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { SessionStore } from '../../src/store/session-store.js';
import { ManualClock, recordingScheduler, scheduleOf, type RecordingScheduler } from './schedule-kit.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const GRACE = 15 * MINUTE;
const WEEKDAYS_AT_9 = '0 9 * * 1-5';
const t = (iso: string): number => Date.parse(iso);

let dir: string;
const opened: OpenedStore[] = [];
const running: Scheduler[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chat-agent-schedules-'));
});
afterEach(async () => {
  for (const scheduler of running.splice(0)) await scheduler.close();
  for (const store of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

interface Instance extends RecordingScheduler {
  store: ScheduleStore;
  opened: OpenedStore;
}

/** One bot instance's scheduler on the SQLite file of this test (a restart opens it again). */
async function instance(
  clock: ManualClock,
  options: { fire?: (schedule: Schedule, dueAt: number) => Promise<void>; refreshMs?: number } = {},
): Promise<Instance> {
  const store = await openKeyvStore(`sqlite://${join(dir, 'bot.sqlite')}`);
  opened.push(store);
  const schedules = new ScheduleStore(store.keyv);
  const coordinator = new InProcessCoordinator(new SessionStore(store.keyv));
  const recording = recordingScheduler(clock, {
    store: schedules,
    claim: (id) => coordinator.claimEvent(id),
    graceMs: GRACE,
    refreshMs: options.refreshMs,
    fire: options.fire,
  });
  running.push(recording.scheduler);
  return { ...recording, store: schedules, opened: store };
}

async function shutDown(one: Instance): Promise<void> {
  await one.scheduler.close();
  opened.splice(opened.indexOf(one.opened), 1);
  await one.opened.close();
}

/** A schedule stored and handed to the scheduler, as the service does. */
async function create(one: Instance, schedule: Schedule): Promise<void> {
  await one.store.save(schedule);
  one.scheduler.add(schedule);
}

const iso = (list: { id: string; dueAt: number }[], id: string): string[] =>
  list.filter((r) => r.id === id).map((r) => new Date(r.dueAt).toISOString());

describe('the scheduler', () => {
  it("fires a one-off and a weekday 9:00 cron in Paris and New York at their instants, across New York's change to summer time, each once", async () => {
    const clock = new ManualClock(t('2027-03-11T23:00:00Z'));
    const one = await instance(clock);
    await one.scheduler.start();
    const paris = { kind: 'cron' as const, pattern: WEEKDAYS_AT_9, timezone: 'Europe/Paris' };
    const newYork = { kind: 'cron' as const, pattern: WEEKDAYS_AT_9, timezone: 'America/New_York' };
    await create(one, scheduleOf('s-paris', paris, t('2027-03-12T08:00:00Z')));
    await create(one, scheduleOf('s-nyc', newYork, t('2027-03-12T14:00:00Z')));
    await create(one, scheduleOf('s-once', { kind: 'once', at: t('2027-03-12T10:30:00Z') }, t('2027-03-12T10:30:00Z')));

    await clock.advanceTo(t('2027-03-20T00:00:00Z'), () => one.scheduler.idle());

    // Paris stays on winter time (UTC+1) all week; New York moves to UTC-4 on Sunday the 14th.
    expect(iso(one.fired, 's-paris')).toEqual(
      ['12', '15', '16', '17', '18', '19'].map((day) => `2027-03-${day}T08:00:00.000Z`),
    );
    expect(iso(one.fired, 's-nyc')).toEqual([
      '2027-03-12T14:00:00.000Z',
      ...['15', '16', '17', '18', '19'].map((day) => `2027-03-${day}T13:00:00.000Z`),
    ]);
    expect(iso(one.fired, 's-once')).toEqual(['2027-03-12T10:30:00.000Z']);
    // Each at its instant, not late, and the schedule handed to fire already says its next run.
    for (const run of one.fired) expect(run.at).toBe(run.dueAt);
    expect(one.fired.find((r) => r.id === 's-paris')?.next).toBe(t('2027-03-15T08:00:00Z'));
    expect(one.skipped).toEqual([]);
    // A finished one-off leaves the store; the cron ones record what they ran.
    expect(await one.store.get('s-once')).toBeUndefined();
    expect(await one.store.get('s-paris')).toMatchObject({
      lastDueAt: t('2027-03-19T08:00:00Z'),
      nextRunAt: t('2027-03-22T08:00:00Z'),
    });
    // Thousands of wakes (one per 30 s refresh at most), never more than one timer.
    expect(clock.maxArmed).toBe(1);
  });

  it('keeps schedules over a restart between creation and the run, and a second restart runs nothing twice', async () => {
    const clock = new ManualClock(t('2027-01-04T07:00:00Z'));
    const first = await instance(clock);
    await first.scheduler.start();
    await create(
      first,
      scheduleOf('s-once', { kind: 'once', at: t('2027-01-04T08:30:00Z') }, t('2027-01-04T08:30:00Z')),
    );
    await create(
      first,
      scheduleOf('s-daily', { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z')),
    );
    await clock.advance(10 * MINUTE, () => first.scheduler.idle());
    await shutDown(first);

    const second = await instance(clock);
    await second.scheduler.start();
    await clock.advanceTo(t('2027-01-04T09:05:00Z'), () => second.scheduler.idle());
    expect(second.fired.map((r) => [r.id, r.dueAt])).toEqual([
      ['s-once', t('2027-01-04T08:30:00Z')],
      ['s-daily', t('2027-01-04T09:00:00Z')],
    ]);
    await shutDown(second);

    // Within the grace of both runs: a store that had not recorded them would run them again here.
    const third = await instance(clock);
    await third.scheduler.start();
    await third.scheduler.idle();
    await clock.advanceTo(t('2027-01-05T09:00:00Z'), () => third.scheduler.idle());
    expect(third.fired.map((r) => [r.id, r.dueAt])).toEqual([['s-daily', t('2027-01-05T09:00:00Z')]]);
    expect(third.skipped).toEqual([]);
  });

  it('runs an occurrence missed while the bot was down once at start when it is within the grace', async () => {
    const clock = new ManualClock(t('2027-01-04T08:50:00Z'));
    const before = await instance(clock);
    await before.store.save(
      scheduleOf('s-daily', { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z')),
    );
    await shutDown(before);

    await clock.advanceTo(t('2027-01-04T09:14:00Z'), () => Promise.resolve()); // down over 9:00
    const after = await instance(clock);
    await after.scheduler.start();
    await after.scheduler.idle();
    expect(after.fired).toEqual([
      {
        id: 's-daily',
        dueAt: t('2027-01-04T09:00:00Z'),
        at: t('2027-01-04T09:14:00Z'),
        next: t('2027-01-05T09:00:00Z'),
      },
    ]);
    await clock.advanceTo(t('2027-01-05T08:59:00Z'), () => after.scheduler.idle());
    expect(after.fired).toHaveLength(1);
    expect(after.skipped).toEqual([]);
  });

  it('skips one missed past the grace, once, with a note, and keeps the next instant', async () => {
    const clock = new ManualClock(t('2027-01-04T08:50:00Z'));
    const before = await instance(clock);
    await before.store.save(
      scheduleOf('s-daily', { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z')),
    );
    await before.store.save(
      scheduleOf('s-once', { kind: 'once', at: t('2027-01-04T09:01:00Z') }, t('2027-01-04T09:01:00Z')),
    );
    await shutDown(before);

    await clock.advanceTo(t('2027-01-04T09:16:00Z'), () => Promise.resolve()); // 16 min after 9:00, 15 after 9:01
    const after = await instance(clock);
    await after.scheduler.start();
    await after.scheduler.idle();
    // The one-off is 15 minutes late, exactly the grace: it still runs.
    expect(after.fired.map((r) => r.id)).toEqual(['s-once']);
    expect(after.skipped).toEqual([
      {
        id: 's-daily',
        dueAt: t('2027-01-04T09:00:00Z'),
        at: t('2027-01-04T09:16:00Z'),
        next: t('2027-01-05T09:00:00Z'),
      },
    ]);
    expect(await after.store.get('s-daily')).toMatchObject({
      lastDueAt: t('2027-01-04T09:00:00Z'),
      nextRunAt: t('2027-01-05T09:00:00Z'),
    });
    await clock.advanceTo(t('2027-01-05T09:00:00Z'), () => after.scheduler.idle());
    expect(after.fired.map((r) => [r.id, r.dueAt])).toEqual([
      ['s-once', t('2027-01-04T09:01:00Z')],
      ['s-daily', t('2027-01-05T09:00:00Z')],
    ]);
    expect(after.skipped).toHaveLength(1);
  });

  it('acts once on the latest of many instants missed, not on each', async () => {
    const clock = new ManualClock(t('2027-01-04T06:00:00Z'));
    const before = await instance(clock);
    await before.store.save(
      scheduleOf('s-hourly', { kind: 'cron', pattern: '0 * * * *', timezone: 'UTC' }, t('2027-01-04T07:00:00Z')),
    );
    await shutDown(before);
    await clock.advanceTo(t('2027-01-04T11:10:00Z'), () => Promise.resolve());
    const after = await instance(clock);
    await after.scheduler.start();
    await after.scheduler.idle();
    expect(after.fired.map((r) => new Date(r.dueAt).toISOString())).toEqual(['2027-01-04T11:00:00.000Z']);
    expect(after.skipped).toEqual([]);
  });

  it('does not fire a schedule ended elsewhere (deleted from the store, this scheduler not told)', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    const one = await instance(clock, { refreshMs: 24 * HOUR });
    await one.scheduler.start();
    await create(
      one,
      scheduleOf('s-ended', { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z')),
    );
    await create(
      one,
      scheduleOf('s-kept', { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z')),
    );
    await one.store.delete('s-ended');
    await clock.advanceTo(t('2027-01-04T10:00:00Z'), () => one.scheduler.idle());
    expect(one.fired.map((r) => r.id)).toEqual(['s-kept']);
    expect(one.scheduler.size).toBe(1);
  });

  it('ends a schedule the service removes: it never runs again', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    const one = await instance(clock);
    await one.scheduler.start();
    await create(
      one,
      scheduleOf('s-daily', { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z')),
    );
    await clock.advanceTo(t('2027-01-04T10:00:00Z'), () => one.scheduler.idle());
    await one.store.delete('s-daily');
    one.scheduler.remove('s-daily');
    await clock.advanceTo(t('2027-01-07T10:00:00Z'), () => one.scheduler.idle());
    expect(one.fired.map((r) => r.dueAt)).toEqual([t('2027-01-04T09:00:00Z')]);
  });

  it('never fires an occurrence at or before the one recorded as handled', async () => {
    const clock = new ManualClock(t('2027-01-04T09:05:00Z'));
    const one = await instance(clock);
    // Its nextRunAt is stale (an older copy), but lastDueAt says 9:00 was handled.
    await one.store.save(
      scheduleOf('s-daily', { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z'), {
        lastDueAt: t('2027-01-04T09:00:00Z'),
      }),
    );
    await one.scheduler.start();
    await clock.advanceTo(t('2027-01-05T09:00:00Z'), () => one.scheduler.idle());
    expect(one.fired.map((r) => r.dueAt)).toEqual([t('2027-01-05T09:00:00Z')]);
    expect(one.skipped).toEqual([]);
  });

  it('logs a fire that throws and goes on with the later ones', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    const errors: string[] = [];
    let calls = 0;
    const one = await instance(clock, {
      fire: () => {
        calls++;
        return calls === 1 ? Promise.reject(new Error('the turn broke')) : Promise.resolve();
      },
    });
    (one.scheduler as unknown as { logger: { error: (d: object, m: string) => void } }).logger.error = (
      _details,
      message,
    ) => errors.push(message);
    await one.scheduler.start();
    for (let i = 0; i < 3; i++)
      await create(
        one,
        scheduleOf(
          `s-${i}`,
          { kind: 'once', at: t('2027-01-04T09:00:00Z') + i * MINUTE },
          t('2027-01-04T09:00:00Z') + i * MINUTE,
        ),
      );
    await create(
      one,
      scheduleOf('s-cron', { kind: 'cron', pattern: '30 9 * * *', timezone: 'UTC' }, t('2027-01-04T09:30:00Z')),
    );
    await clock.advanceTo(t('2027-01-05T10:00:00Z'), () => one.scheduler.idle());
    expect(one.fired.map((r) => r.id)).toEqual(['s-0', 's-1', 's-2', 's-cron', 's-cron']);
    expect(errors).toEqual(['schedules: a scheduled run failed']);
  });

  it('holds 1,200 schedules on one timer and fires each at its instant', async () => {
    const clock = new ManualClock(t('2027-01-04T00:00:00Z'));
    const one = await instance(clock, { refreshMs: 24 * HOUR });
    await one.scheduler.start();
    const start = clock.now();
    // Instants in a scrambled order, a few sharing one instant.
    const instants = Array.from({ length: 1200 }, (_, i) => start + ((i * 7919) % 1000) * MINUTE + MINUTE);
    await Promise.all(instants.map((at, i) => create(one, scheduleOf(`s-${i}`, { kind: 'once', at }, at))));
    expect(clock.armed).toBe(1);
    await clock.advanceTo(start + 1002 * MINUTE, () => one.scheduler.idle());
    expect(one.fired).toHaveLength(1200);
    for (const run of one.fired) expect(run.at).toBe(run.dueAt);
    expect(one.fired.map((r) => r.dueAt)).toEqual([...instants].sort((a, b) => a - b));
    expect(clock.maxArmed).toBe(1);
    expect(await one.store.ids()).toEqual([]);
  });
});

describe('the scheduler and its refresh', () => {
  it('keeps a schedule added while the index is being read, though the index read has not got it', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    const opened = await openKeyvStore('memory://');
    let holding = false;
    let release: () => void = () => undefined;
    const hold = new Promise<void>((resolve) => (release = resolve));
    // The index as it was when the read began, returned only once the test lets it.
    class SlowIndexStore extends ScheduleStore {
      override async ids(): Promise<string[]> {
        const ids = await super.ids();
        if (holding) await hold;
        return ids;
      }
    }
    const store = new SlowIndexStore(opened.keyv);
    const coordinator = new InProcessCoordinator(new SessionStore(opened.keyv));
    const { scheduler, fired } = recordingScheduler(clock, {
      store,
      claim: (id) => coordinator.claimEvent(id),
      graceMs: GRACE,
    });
    running.push(scheduler);
    await scheduler.start();
    holding = true;
    const stepping = clock.advance(30_000, () => scheduler.idle()); // the refresh starts, and waits
    const schedule = scheduleOf('s-new', { kind: 'once', at: t('2027-01-04T08:00:45Z') }, t('2027-01-04T08:00:45Z'));
    await store.save(schedule);
    scheduler.add(schedule);
    release();
    await stepping;
    await clock.advanceTo(t('2027-01-04T08:05:00Z'), () => scheduler.idle());
    expect(fired).toEqual([
      { id: 's-new', dueAt: t('2027-01-04T08:00:45Z'), at: t('2027-01-04T08:00:45Z'), next: null },
    ]);
    await opened.close();
  });
});

describe('the scheduler and async context', () => {
  it('runs occurrences outside the cluster fence scope of the turn that added the schedule', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    const one = await instance(clock, {
      fire: () => {
        scopes.push(fenceScope.getStore()?.sessionId ?? 'none');
        return Promise.resolve();
      },
    });
    const scopes: string[] = [];
    await one.scheduler.start();
    // As the schedule_task tool would: inside the turn's fence scope.
    await fenceScope.run(
      { sessionId: 'slack:T1:C1:1', leaseKey: 'lease:{slack:T1:C1:1}', token: 'node-a:7' },
      async () => {
        // Due before the timer armed now (the refresh's): the add arms the timer, in this scope.
        await create(
          one,
          scheduleOf('s-tool', { kind: 'cron', pattern: '10 * * * * *', timezone: 'UTC' }, t('2027-01-04T08:00:10Z')),
        );
      },
    );
    await clock.advanceTo(t('2027-01-04T08:03:00Z'), () => one.scheduler.idle());
    expect(scopes).toEqual(['none', 'none', 'none']);
  });
});

describe('the scheduler when the claim fails', () => {
  it('tries an occurrence again when the claim throws (Redis down), and runs it once when it works', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    const opened = await openKeyvStore('memory://');
    const coordinator = new InProcessCoordinator(new SessionStore(opened.keyv));
    const store = new ScheduleStore(opened.keyv);
    let failures = 3;
    const warnings: string[] = [];
    const { scheduler, fired } = recordingScheduler(clock, {
      store,
      claim: (id) => (failures-- > 0 ? Promise.reject(new Error('connect ECONNREFUSED')) : coordinator.claimEvent(id)),
      graceMs: GRACE,
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (_d, message) => warnings.push(message),
        error: () => undefined,
      },
    });
    running.push(scheduler);
    await scheduler.start();
    const schedule = scheduleOf(
      's-daily',
      { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' },
      t('2027-01-04T09:00:00Z'),
    );
    await store.save(schedule);
    scheduler.add(schedule);
    await clock.advanceTo(t('2027-01-05T08:00:00Z'), () => scheduler.idle());
    expect(fired.map((r) => [r.dueAt, r.at])).toEqual([[t('2027-01-04T09:00:00Z'), t('2027-01-04T09:00:15Z')]]);
    expect(warnings).toEqual(Array(3).fill('schedules: could not claim an occurrence; trying again soon'));
    await opened.close();
  });
});

describe('closing the scheduler', () => {
  it('does not wait for a run under way (a turn may wait hours for an approval), and starts no more', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    let finish: () => void = () => undefined;
    const turn = new Promise<void>((resolve) => (finish = resolve));
    let began: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (began = resolve));
    const one = await instance(clock, {
      fire: () => {
        began();
        return turn;
      },
    });
    await one.scheduler.start();
    await create(
      one,
      scheduleOf('s-hourly', { kind: 'cron', pattern: '0 * * * *', timezone: 'UTC' }, t('2027-01-04T09:00:00Z')),
    );
    // Settled once idle, or once the run has begun (idle would wait for the turn).
    await clock.advanceTo(t('2027-01-04T09:00:00Z'), () => Promise.race([one.scheduler.idle(), running]));
    expect(one.fired).toHaveLength(1);
    await one.scheduler.close();
    expect(clock.armed).toBe(0);
    await clock.advanceTo(t('2027-01-04T12:00:00Z'), () => Promise.resolve());
    expect(one.fired).toHaveLength(1);
    finish();
    await one.scheduler.idle();
    // The run was recorded before it began: a restart would not run 9:00 again.
    expect(await one.store.get('s-hourly')).toMatchObject({
      lastDueAt: t('2027-01-04T09:00:00Z'),
      nextRunAt: t('2027-01-04T10:00:00Z'),
    });
  });
});

describe('an end that races a run', () => {
  it('ends a schedule for good when it is ended between a run’s claim and its record (it is not put back, and does not run)', async () => {
    const clock = new ManualClock(t('2027-01-04T08:00:00Z'));
    const opened = await openKeyvStore('memory://');
    let holding = false;
    let reading: () => void = () => undefined;
    const readDone = new Promise<void>((resolve) => (reading = resolve));
    let release: () => void = () => undefined;
    const hold = new Promise<void>((resolve) => (release = resolve));
    // The winner's re-read returns what it read only once the test lets it.
    class SlowReadStore extends ScheduleStore {
      override async get(id: string): Promise<Schedule | undefined> {
        const found = await super.get(id);
        if (holding) {
          reading();
          await hold;
        }
        return found;
      }
    }
    const store = new SlowReadStore(opened.keyv);
    const coordinator = new InProcessCoordinator(new SessionStore(opened.keyv));
    const { scheduler, fired } = recordingScheduler(clock, {
      store,
      claim: (id) => coordinator.claimEvent(id),
      graceMs: GRACE,
      refreshMs: HOUR,
    });
    running.push(scheduler);
    await scheduler.start();
    const schedule = scheduleOf(
      's-daily',
      { kind: 'cron', pattern: '0 9 * * *', timezone: 'UTC' },
      t('2027-01-04T09:00:00Z'),
    );
    await store.save(schedule);
    scheduler.add(schedule);
    holding = true;
    const stepping = clock.advanceTo(t('2027-01-04T09:00:00Z'), () => scheduler.idle());
    await readDone;
    holding = false;
    // /unschedule, as the service does it, while the run holds the record it read.
    await store.delete('s-daily');
    scheduler.remove('s-daily');
    release();
    await stepping;
    expect(fired).toEqual([]);
    expect(await store.get('s-daily')).toBeUndefined();
    expect(await store.ids()).toEqual([]);
    await opened.close();
  });
});
