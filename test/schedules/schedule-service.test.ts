// ScheduleService: what /schedule, /schedules, /unschedule, /forget and the schedule_task
// tool get. Through the real store (SQLite), the real parser and a real Scheduler on a
// manual clock, so "made" also means "runs at its instant" and "ended" means "never runs".
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScheduleService, SCHEDULE_ID_PATTERN } from '../../src/schedules/schedule-service.js';
import { ScheduleStore } from '../../src/schedules/schedule-store.js';
import type { ScheduleRequest } from '../../src/schedules/schedule-types.js';
import { InProcessCoordinator } from '../../src/sessions/coordination.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { SessionStore } from '../../src/store/session-store.js';
import { KEY, ManualClock, recordingScheduler, type RecordingScheduler } from './schedule-kit.js';

const MINUTE = 60_000;
const t = (iso: string): number => Date.parse(iso);

let dir: string;
let opened: OpenedStore;
let clock: ManualClock;
let store: ScheduleStore;
let recording: RecordingScheduler;

function service(caps: { maxPerUser?: number; maxPerChannel?: number } = {}): ScheduleService {
  return new ScheduleService({
    store,
    scheduler: recording.scheduler,
    clock,
    minIntervalMs: 5 * MINUTE,
    maxPerUser: caps.maxPerUser ?? 10,
    maxPerChannel: caps.maxPerChannel ?? 20,
    defaultTimezone: 'UTC',
  });
}

function request(when: string, more: Partial<ScheduleRequest> = {}): ScheduleRequest {
  return { key: KEY, creator: 'U1', when, task: 'summarise the open incidents', via: 'command', ...more };
}

const settle = (): Promise<void> => recording.scheduler.idle();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chat-agent-schedule-service-'));
  opened = await openKeyvStore(`sqlite://${join(dir, 'bot.sqlite')}`);
  store = new ScheduleStore(opened.keyv);
  clock = new ManualClock(t('2027-03-11T23:00:00Z')); // a Thursday
  const coordinator = new InProcessCoordinator(new SessionStore(opened.keyv));
  recording = recordingScheduler(clock, { store, claim: (id) => coordinator.claimEvent(id), graceMs: 15 * MINUTE });
  await recording.scheduler.start();
});
afterEach(async () => {
  await recording.scheduler.close();
  await opened.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the schedule service', () => {
  it('makes a one-off and a weekday cron in the person’s time zone, stores them, and they run at those instants', async () => {
    const desk = service();
    const once = await desk.create(request('2027-03-12 10:30', { timezone: 'America/New_York' }));
    const weekly = await desk.create(request('0 9 * * 1-5', { timezone: 'Asia/Tokyo', via: 'tool' }));
    expect(once).toMatchObject({
      ok: true,
      schedule: {
        spec: { kind: 'once', at: t('2027-03-12T15:30:00Z') },
        nextRunAt: t('2027-03-12T15:30:00Z'),
        timezone: 'America/New_York',
        via: 'command',
      },
    });
    expect(weekly).toMatchObject({
      ok: true,
      schedule: {
        spec: { kind: 'cron', pattern: '0 9 * * 1-5', timezone: 'Asia/Tokyo' },
        nextRunAt: t('2027-03-12T00:00:00Z'),
        via: 'tool',
      },
    });
    if (!once.ok || !weekly.ok) throw new Error('not made');
    expect(once.schedule.id).toMatch(SCHEDULE_ID_PATTERN);
    expect(await store.get(weekly.schedule.id)).toEqual(weekly.schedule);

    await clock.advanceTo(t('2027-03-16T00:00:00Z'), settle);
    // Tokyo's 9:00 is midnight UTC: Friday the 12th, Monday the 15th, Tuesday the 16th.
    expect(recording.fired.map((r) => [r.id, new Date(r.dueAt).toISOString()])).toEqual([
      [weekly.schedule.id, '2027-03-12T00:00:00.000Z'],
      [once.schedule.id, '2027-03-12T15:30:00.000Z'],
      [weekly.schedule.id, '2027-03-15T00:00:00.000Z'],
      [weekly.schedule.id, '2027-03-16T00:00:00.000Z'],
    ]);
  });

  it('reads "every weekday at 9:00" in Paris and Los Angeles and "in 2 hours", and runs each at its instant', async () => {
    const desk = service();
    const paris = await desk.create(request('every weekday at 9:00', { timezone: 'Europe/Paris' }));
    const angeles = await desk.create(request('every weekday at 9:00', { timezone: 'America/Los_Angeles' }));
    const soon = await desk.create(request('in 2 hours'));
    if (!paris.ok || !angeles.ok || !soon.ok) throw new Error('not made');
    expect(soon.schedule.nextRunAt).toBe(t('2027-03-12T01:00:00Z'));
    await clock.advanceTo(t('2027-03-16T00:00:00Z'), settle);
    const at = (id: string): string[] =>
      recording.fired.filter((r) => r.id === id).map((r) => new Date(r.dueAt).toISOString());
    expect(at(soon.schedule.id)).toEqual(['2027-03-12T01:00:00.000Z']);
    // Paris on UTC+1; Los Angeles on UTC-8 on Friday the 12th, UTC-7 from Sunday the 14th.
    expect(at(paris.schedule.id)).toEqual(['2027-03-12T08:00:00.000Z', '2027-03-15T08:00:00.000Z']);
    expect(at(angeles.schedule.id)).toEqual(['2027-03-12T17:00:00.000Z', '2027-03-15T16:00:00.000Z']);
    for (const run of recording.fired) expect(run.at).toBe(run.dueAt);
  });

  it('reads "when" in SCHEDULE_TZ when the person’s zone is unknown, and refuses a zone that does not exist', async () => {
    const desk = service();
    const made = await desk.create(request('0 9 * * *'));
    expect(made).toMatchObject({ ok: true, schedule: { timezone: 'UTC', nextRunAt: t('2027-03-12T09:00:00Z') } });
    const refused = await desk.create(request('0 9 * * *', { timezone: 'Mars/Olympus_Mons' }));
    expect(refused).toEqual({ ok: false, reason: expect.stringContaining('"Mars/Olympus_Mons" is not a time zone') });
    expect(await store.ids()).toHaveLength(1);
  });

  it('refuses a "when" it cannot read, one too frequent, one already past, and an empty task, storing nothing', async () => {
    const desk = service();
    for (const bad of [
      request('whenever you like'),
      request('* * * * *'),
      request('2020-01-01 09:00'),
      request('0 9 * * *', { task: '   ' }),
    ]) {
      const outcome = await desk.create(bad);
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.reason.length).toBeGreaterThan(20);
    }
    expect(await store.ids()).toEqual([]);
    expect(clock.armed).toBe(1); // the refresh timer only
  });

  it('caps schedules per person (per workspace) and per channel, with a sentence saying so', async () => {
    const desk = service({ maxPerUser: 2, maxPerChannel: 3 });
    expect((await desk.create(request('0 9 * * *'))).ok).toBe(true);
    expect((await desk.create(request('0 10 * * *'))).ok).toBe(true);
    expect(await desk.create(request('0 11 * * *'))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^You have 2 schedules already, the most one person may have here \(2\)/),
    });
    // Another workspace is another count.
    expect((await desk.create(request('0 11 * * *', { key: { ...KEY, workspace: 'T2' } }))).ok).toBe(true);
    expect((await desk.create(request('0 11 * * *', { creator: 'U2' }))).ok).toBe(true);
    expect(await desk.create(request('0 12 * * *', { creator: 'U3' }))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^This channel has 3 schedules already, the most one channel may have \(3\)/),
    });
    // Another channel of the workspace still has room.
    expect((await desk.create(request('0 12 * * *', { creator: 'U3', key: { ...KEY, channel: 'C2' } }))).ok).toBe(true);
    // Made at once, the cap still holds: creates here run one at a time.
    const burst = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        desk.create(request(`0 ${i} * * *`, { creator: 'U9', key: { ...KEY, channel: 'C9' } })),
      ),
    );
    expect(burst.filter((outcome) => outcome.ok)).toHaveLength(2);
  });

  it('gives each schedule a short id of its own', async () => {
    const desk = service({ maxPerUser: 100, maxPerChannel: 100 });
    const ids = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const outcome = await desk.create(request(`${i % 60} 9 * * *`));
      if (!outcome.ok) throw new Error(outcome.reason);
      expect(outcome.schedule.id).toMatch(/^s-[a-z2-7]{6}$/);
      ids.add(outcome.schedule.id);
    }
    expect(ids.size).toBe(60);
  });

  it('lists a person’s schedules, or a channel’s, soonest first', async () => {
    const desk = service();
    const late = await desk.create(request('0 18 * * *'));
    const early = await desk.create(request('0 7 * * *'));
    const theirs = await desk.create(request('0 8 * * *', { creator: 'U2' }));
    await desk.create(request('0 8 * * *', { key: { ...KEY, channel: 'C2' } }));
    if (!late.ok || !early.ok || !theirs.ok) throw new Error('not made');
    const mine = await desk.list({ platform: 'slack', workspace: 'T1', creator: 'U1' });
    expect(mine.map((s) => s.when)).toEqual(['0 7 * * *', '0 8 * * *', '0 18 * * *']);
    const channel = await desk.list({ platform: 'slack', workspace: 'T1', channel: 'C1' });
    expect(channel.map((s) => s.id)).toEqual([early.schedule.id, theirs.schedule.id, late.schedule.id]);
    expect(await desk.list({ platform: 'discord', workspace: 'T1', creator: 'U1' })).toEqual([]);
  });

  it('ends a schedule for whom mayEnd allows: it never runs again; an unknown id and a refusal say why', async () => {
    const desk = service();
    const made = await desk.create(request('0 9 * * *'));
    if (!made.ok) throw new Error(made.reason);
    const id = made.schedule.id;
    await clock.advanceTo(t('2027-03-12T10:00:00Z'), settle);
    expect(recording.fired).toHaveLength(1);

    expect(await desk.end('s-zzzzzz', 'U1', () => true)).toEqual({
      ok: false,
      reason: expect.stringContaining('There is no schedule "s-zzzzzz"'),
    });
    expect(await desk.end('not an id', 'U1', () => true)).toEqual({
      ok: false,
      reason: expect.stringContaining('There is no schedule "not an id"'),
    });
    expect(await desk.end(id, 'U2', (s) => s.creator === 'U2')).toEqual({
      ok: false,
      reason: `Only the person who made schedule ${id}, the person who started its thread, whoever approves there, or an admin may end it.`,
    });
    expect(await store.get(id)).toBeDefined();
    expect(await desk.end(` ${id.toUpperCase()} `, 'U1', (s) => s.creator === 'U1')).toMatchObject({
      ok: true,
      schedule: { id },
    });
    expect(await store.get(id)).toBeUndefined();

    await clock.advanceTo(t('2027-03-15T10:00:00Z'), settle);
    expect(recording.fired).toHaveLength(1);
  });

  it('ends every schedule of a thread on /forget, and only those', async () => {
    const desk = service();
    await desk.create(request('0 9 * * *'));
    await desk.create(request('2027-03-12 12:00'));
    const other = await desk.create(request('0 9 * * *', { key: { ...KEY, thread: '1700000000.000200' } }));
    if (!other.ok) throw new Error(other.reason);
    expect(await desk.endForThread(KEY)).toBe(2);
    expect(await store.ids()).toEqual([other.schedule.id]);
    await clock.advanceTo(t('2027-03-13T00:00:00Z'), settle);
    expect(recording.fired.map((r) => r.id)).toEqual([other.schedule.id]);
  });
});
