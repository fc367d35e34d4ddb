// What a schedule's occurrence does when its creator may no longer use the bot in its thread,
// with the real ScheduleRuns, AccessPauses, ScheduleStore (SQLite) and AccessPolicy (a
// channel's members narrowed as a profile narrows them, changed between runs as a reloaded
// file changes them), and a session layer that records what it is asked: the first refused
// run pauses the schedule and its one note goes to the thread's approvers; a run once the
// creator may again resumes it and says so; a one-off's refused run says it has ended; a
// missed run of a paused schedule is counted and not said; the approvers are who approves.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/engine/index.js';
import { AccessPauses, REFUSALS_TO_END } from '../../src/schedules/access-pauses.js';
import { ScheduleRuns, type ScheduleNotice } from '../../src/schedules/schedule-runs.js';
import { ScheduleStore } from '../../src/schedules/schedule-store.js';
import { AccessPolicy, parseAccessConfig } from '../../src/sessions/access-policy.js';
import type { InboundMessage } from '../../src/sessions/session-manager.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { sessionIdOf, type SessionRecord } from '../../src/store/session-store.js';
import { KEY, ManualClock, scheduleOf } from './schedule-kit.js';

const DAILY_AT_9 = { kind: 'cron' as const, pattern: '0 9 * * *', timezone: 'UTC' };
const FRIDAY_9 = Date.UTC(2026, 11, 4, 9, 0);
const DAY = 24 * 60 * 60_000;

let dir: string;
let opened: OpenedStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chat-agent-schedule-runs-'));
  opened = await openKeyvStore(`sqlite://${join(dir, 'bot.sqlite')}`);
});
afterEach(async () => {
  await opened.close();
  await rm(dir, { recursive: true, force: true });
});

/** The thread the schedules run in: U1 started it, under the channel's profile `room`. */
const record: SessionRecord = {
  id: sessionIdOf(KEY),
  key: KEY,
  model: 'm',
  grants: { tools: [], commands: [] },
  compaction: null,
  startedBy: 'U1',
  steerers: [],
  directories: [],
  createdAt: 0,
  updatedAt: 0,
  profile: 'room',
};

function setUp(options: { admins?: string; profileAdmins?: string[] } = {}) {
  const store = new ScheduleStore(opened.keyv);
  const clock = new ManualClock(FRIDAY_9);
  // The channel's members, as its profile's `allowedUsers` says them: the test edits it.
  const members = new Set(['U1', 'U2', 'U_APPROVER']);
  const access = new AccessPolicy(parseAccessConfig('*', options.admins ?? ''));
  access.useProfiles((name) =>
    name === 'room' ? { admins: new Set(options.profileAdmins ?? []), allowedUsers: members } : undefined,
  );
  const delivered: InboundMessage[] = [];
  const notices: ScheduleNotice[] = [];
  const forgotten: string[] = [];
  const runs = new ScheduleRuns({
    manager: {
      deliver: async (_key, message) => {
        delivered.push(message);
        return { status: 'started', sessionId: record.id, inputId: `i${delivered.length}` };
      },
      openThread: async () => record,
      closeWaitingSince: async () => false,
    },
    access,
    pauses: new AccessPauses({ store, clock, forget: (id) => forgotten.push(id) }),
    notify: async (_record, notice) => {
      notices.push(notice);
    },
    clock,
    waitLimitMs: 60 * 60_000,
    logger: silentLogger,
  });
  return { store, clock, members, runs, delivered, notices, forgotten };
}

describe('a scheduled run whose creator may no longer use the bot in its thread', () => {
  it('pauses it with one note to the approvers; a later run, once its creator may again, resumes it and says so', async () => {
    const { store, members, runs, delivered, notices } = setUp({ profileAdmins: ['U_APPROVER'] });
    const schedule = scheduleOf('s-aaaaaa', DAILY_AT_9, FRIDAY_9 + DAY);
    await store.save(schedule);

    members.delete('U1');
    await runs.fire((await store.get(schedule.id))!, FRIDAY_9);
    expect(delivered).toEqual([]);
    expect(notices).toEqual([
      {
        kind: 'schedule_paused',
        scheduleId: 's-aaaaaa',
        task: 'task of s-aaaaaa',
        creator: 'U1',
        approvers: ['U_APPROVER'],
        runsLeft: REFUSALS_TO_END - 1,
        next: 'Sat 5 Dec 2026, 09:00 (UTC)',
      },
    ]);
    expect(await store.get(schedule.id)).toMatchObject({ pausedAt: FRIDAY_9, accessRefusals: 1 });

    members.add('U1');
    await runs.fire((await store.get(schedule.id))!, FRIDAY_9 + DAY);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ userId: 'U1', text: expect.stringContaining('task of s-aaaaaa') });
    expect(notices[1]).toEqual({
      kind: 'schedule',
      text: expect.stringContaining('Scheduled run of s-aaaaaa (resumed: its creator may use the bot here again)'),
    });
    const resumed = (await store.get(schedule.id))!;
    expect([resumed.pausedAt, resumed.accessRefusals]).toEqual([undefined, undefined]);

    // The count starts over: a refusal after that is a first one again, told again.
    members.delete('U1');
    await runs.fire(resumed, FRIDAY_9 + 2 * DAY);
    expect(notices.filter((notice) => notice.kind === 'schedule_paused')).toHaveLength(2);
    runs.close();
  });

  it(`ends it after ${REFUSALS_TO_END} refusals in a row, saying nothing after the first; a missed run counts as one`, async () => {
    const { store, members, runs, delivered, notices, forgotten } = setUp();
    const schedule = scheduleOf('s-bbbbbb', DAILY_AT_9, FRIDAY_9 + DAY);
    await store.save(schedule);
    members.delete('U1');
    await runs.fire((await store.get(schedule.id))!, FRIDAY_9);
    // Missed while the bot was down: not said (it would be "skipped"), but counted.
    await runs.skipped((await store.get(schedule.id))!, FRIDAY_9 + DAY);
    expect(await store.get(schedule.id)).toMatchObject({ accessRefusals: 2 });
    await runs.fire((await store.get(schedule.id))!, FRIDAY_9 + 2 * DAY);
    expect(await store.get(schedule.id)).toBeUndefined();
    expect(forgotten).toEqual(['s-bbbbbb']);
    expect(notices.map((notice) => notice.kind)).toEqual(['schedule_paused']);
    expect(delivered).toEqual([]);
  });

  it("a one-off's only run: not made, and one note says the schedule has ended", async () => {
    const { members, runs, delivered, notices } = setUp({ admins: 'A1,A2' });
    members.delete('U1');
    // As the Scheduler hands over a one-off's run: its record already gone, no next run.
    await runs.fire(scheduleOf('s-cccccc', { kind: 'once', at: FRIDAY_9 }, null), FRIDAY_9);
    expect(delivered).toEqual([]);
    expect(notices).toEqual([
      {
        kind: 'schedule_paused',
        scheduleId: 's-cccccc',
        task: 'task of s-cccccc',
        creator: 'U1',
        approvers: ['A1', 'A2'],
        runsLeft: 0,
      },
    ]);
  });

  it('a run whose creator may use the bot goes on as before: no pause, no word about access', async () => {
    const { store, runs, delivered, notices } = setUp();
    const schedule = scheduleOf('s-dddddd', DAILY_AT_9, FRIDAY_9 + DAY);
    await store.save(schedule);
    await runs.fire(schedule, FRIDAY_9);
    expect(delivered).toHaveLength(1);
    expect(notices).toEqual([
      {
        kind: 'schedule',
        text: 'Scheduled run of s-dddddd: “task of s-dddddd”. Next run: Sat 5 Dec 2026, 09:00 (UTC).',
      },
    ]);
    expect(await store.get(schedule.id)).toEqual(schedule);
    runs.close();
  });
});

describe('who approves in a thread (AccessPolicy.approversOf)', () => {
  const people = { startedBy: 'U1', steerers: ['U2'] };
  it("ADMINS and the profile's approvers who are members; else the starter", () => {
    const withAdmins = new AccessPolicy(parseAccessConfig('U1,U2,P1', 'A1'));
    withAdmins.useProfiles((name) => (name === 'room' ? { admins: new Set(['P1', 'P_OUT']) } : undefined));
    // P_OUT is not a member under ALLOWED_USERS: a profile cannot make an approver of them.
    expect(withAdmins.approversOf({ ...people, profile: 'room' })).toEqual(['A1', 'P1']);
    expect(withAdmins.approversOf(people)).toEqual(['A1']);
    const none = new AccessPolicy(parseAccessConfig('*', ''));
    expect(none.approversOf(people)).toEqual(['U1']);
  });
});
