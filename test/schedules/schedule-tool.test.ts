// The schedule_task tool through a real TurnEngine turn: a scripted model calls it, the real
// permission policy in interactive mode asks like a write, and a real ScheduleService makes
// the schedule for the person who approved it (or, in auto mode, for the person whose request
// the turn answers), in their time zone; a `when` it cannot read comes back to the model as
// the tool's error, in words it can pass on.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message, PermissionRequest } from '../../src/engine/index.js';
import { createPermissionPolicy, type PermissionMode } from '../../src/permissions/index.js';
import { SCHEDULE_TOOL_NAMES, scheduleTaskTool } from '../../src/schedules/schedule-tool.js';
import { call, callTools, say, type Step } from '../fakes/scripted-provider.js';
import { collect, engineWith, only } from '../support/engine-kit.js';
import { openTestDesk, type TestDesk } from './desk-kit.js';

const KEY = { platform: 'slack', workspace: 'T1', channel: 'C1', thread: '1700000000.000100' };
const ZONES: Record<string, string> = { U1: 'Europe/Paris', U9: 'America/New_York' };

let desk: TestDesk;
beforeEach(async () => {
  desk = await openTestDesk();
});
afterEach(async () => {
  await desk.close();
});

function turn(
  steps: Step[],
  mode: PermissionMode,
  approve: (request: PermissionRequest) => { outcome: 'once' | 'deny'; by: string },
) {
  const asked: PermissionRequest[] = [];
  const zonesAsked: string[] = [];
  const tool = scheduleTaskTool({
    desk: desk.desk,
    key: KEY,
    timezone: (creator) => {
      zonesAsked.push(creator);
      return Promise.resolve(ZONES[creator] ?? 'UTC');
    },
  });
  const { engine, provider } = engineWith(steps, {
    tools: [tool],
    ports: {
      policy: createPermissionPolicy({ mode }),
      approver: async (request) => {
        asked.push(request);
        return approve(request);
      },
    },
  });
  return { engine, provider, asked, zonesAsked };
}

const toolResults = (messages: readonly Message[]): string[] =>
  messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
const fromU1 = { source: { platform: 'slack', userId: 'U1' } };

describe('the schedule_task tool', () => {
  it('interactive: asks like a write, and on approval makes the schedule for the approver, in their time zone', async () => {
    const { engine, asked, zonesAsked } = turn(
      [
        callTools(
          call('schedule_task', {
            when: 'every weekday at 9:00',
            task: 'Summarise the open incidents in this channel',
          }),
        ),
        say('Scheduled.'),
      ],
      'interactive',
      () => ({ outcome: 'once', by: 'U9' }),
    );
    const events = await collect(engine.run('every weekday at 9, summarise the open incidents here', fromU1));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      toolName: 'schedule_task',
      metadata: { category: 'write' },
      reason: expect.stringContaining('schedule_task is write-risk'),
    });
    expect(only(events, 'permission_required')).toHaveLength(1);
    expect(only(events, 'tool_finished')[0]).toMatchObject({ name: 'schedule_task', status: 'ok' });

    const [made] = await desk.desk.list({ platform: 'slack', workspace: 'T1' });
    expect(made).toMatchObject({
      key: KEY,
      creator: 'U9',
      via: 'tool',
      task: 'Summarise the open incidents in this channel',
      timezone: 'America/New_York',
      spec: { kind: 'cron', pattern: '0 9 * * 1-5', timezone: 'America/New_York' },
    });
    expect(zonesAsked).toEqual(['U9']);
    const result = JSON.parse(toolResults(engine.messages)[0]!) as Record<string, unknown>;
    expect(result).toMatchObject({
      id: made!.id,
      recurring: true,
      created_for: 'U9',
      how_to_end: `/unschedule ${made!.id}`,
    });
    expect(result.next_run).toMatch(/09:00 \(America\/New_York\)$/);
  });

  it('interactive: a denied call makes nothing', async () => {
    const { engine } = turn(
      [callTools(call('schedule_task', { when: 'in 2 hours', task: 'Check the deploy' })), say('Not scheduled.')],
      'interactive',
      () => ({ outcome: 'deny', by: 'U1' }),
    );
    const events = await collect(engine.run('in two hours check the deploy', fromU1));
    expect(only(events, 'tool_finished')[0]).toMatchObject({ status: 'denied' });
    expect(await desk.desk.list({ platform: 'slack', workspace: 'T1' })).toEqual([]);
  });

  it('auto: nobody is asked, and the schedule is the requester’s, in their zone', async () => {
    const { engine, asked } = turn(
      [
        callTools(call('schedule_task', { when: 'in 2 hours', task: 'Check whether the deploy finished' })),
        say('Will do.'),
      ],
      'auto',
      () => ({ outcome: 'once', by: 'U9' }),
    );
    const started = Date.now();
    await collect(engine.run('in two hours, check whether the deploy finished', fromU1));
    expect(asked).toEqual([]);
    const [made] = await desk.desk.list({ platform: 'slack', workspace: 'T1' });
    expect(made).toMatchObject({ creator: 'U1', timezone: 'Europe/Paris', spec: { kind: 'once' } });
    const due = made!.spec.kind === 'once' ? made!.spec.at : 0;
    // Two hours after the request (the service reads "in 2 hours" at its own now).
    expect(due - started).toBeGreaterThanOrEqual(2 * 3_600_000 - 1_000);
    expect(due - started).toBeLessThan(2 * 3_600_000 + 60_000);
  });

  it('a when it cannot read, or one too frequent, comes back as the tool’s error for the model to pass on', async () => {
    const { engine, provider } = turn(
      [
        callTools(call('schedule_task', { when: 'whenever it feels right', task: 'Tidy up' })),
        callTools(call('schedule_task', { when: 'every minute', task: 'Ping the build' })),
        say('I could not schedule that.'),
      ],
      'auto',
      () => ({ outcome: 'once', by: 'U1' }),
    );
    const events = await collect(engine.run('tidy up sometime', fromU1));
    expect(only(events, 'tool_finished').map((e) => e.status)).toEqual(['error', 'error']);
    const [unread, tooOften] = toolResults(engine.messages).map(
      (content) => (JSON.parse(content) as { error: string }).error,
    );
    expect(unread).toMatch(/^refused: I couldn't read "whenever it feels right" as a time\. Try "in 2 hours"/);
    expect(tooOften).toMatch(
      /^refused: .*more often than the minimum of 5 minutes between runs \(SCHEDULE_MIN_INTERVAL\)/,
    );
    // The model read both before answering.
    expect(provider.requests).toHaveLength(3);
    expect(await desk.desk.list({ platform: 'slack', workspace: 'T1' })).toEqual([]);
  });

  it('a turn no person asked for makes no schedule', async () => {
    const { engine } = turn(
      [callTools(call('schedule_task', { when: 'in 2 hours', task: 'Check' })), say('no')],
      'auto',
      () => ({ outcome: 'once', by: 'U1' }),
    );
    await collect(engine.run('check later'));
    expect((JSON.parse(toolResults(engine.messages)[0]!) as { error: string }).error).toContain(
      'no person asked for this schedule',
    );
    expect(await desk.desk.list({ platform: 'slack', workspace: 'T1' })).toEqual([]);
  });

  it('is a name a profile may list', () => {
    expect(SCHEDULE_TOOL_NAMES).toEqual(['schedule_task']);
  });
});
