// Scheduled work through the real bot on Slack (Bolt in HTTP mode, FakeSlack, the real core
// and the OpenAI SDK against FakeOpenAI), on a manual clock: a weekday schedule set in Ada's
// thread runs at 9:00 in her zone as her turn (the model reads the task; the thread is told
// the run and the next one); the write it needs waits for Ada, and Bob's click is refused
// privately; a run nobody approves is closed after SCHEDULE_WAIT_LIMIT with a note; a run past
// its creator's spend limit is skipped with a note, the model never called; a run
// missed while the bot was down runs at start within SCHEDULE_GRACE, and past it is skipped
// with a note; a schedule made before a restart still runs after it. A schedule whose creator
// is taken off ALLOWED_USERS: its next run posts nothing but one note to the people who
// approve in its thread and pauses it, later ones post nothing, the third refused run ends it;
// its thread's approver (a profile's, not an admin) may end it at once, a bystander may not.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import type { Schedule } from '../../src/schedules/schedule-types.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { ManualClock } from '../schedules/schedule-kit.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';
const MINUTE = 60_000;
// Friday 4 December 2026, 07:00 UTC = 08:00 in Paris.
const FRIDAY_7_UTC = Date.UTC(2026, 11, 4, 7, 0);
const FRIDAY_9_PARIS = Date.UTC(2026, 11, 4, 8, 0);

let bot: SlackBot | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** After each instant of the manual clock: the occurrences due are claimed, recorded and handed to their runs. */
const settle = async (): Promise<void> => {
  await bot?.core.schedulesIdle();
};
const notes = (b: SlackBot, root: string) =>
  b.slack.thread(C, root).filter((m) => m.user === SLACK_IDS.botUserId && m.text.includes('s-'));
const userText = (b: SlackBot, i: number) =>
  JSON.stringify((b.llm.requests[i]!.body as { messages: unknown[] }).messages.at(-1));

async function threadOf(b: SlackBot): Promise<string> {
  b.llm.replyText('Hello Ada.');
  const root = await b.mention('hi');
  await waitFor(() => b.llm.requests.length === 1);
  await b.idle();
  return root;
}

async function schedule(b: SlackBot, root: string, when: string, task: string): Promise<Schedule> {
  const made = await b.core.schedules!.create({
    key: { platform: 'slack', workspace: SLACK_IDS.teamId, channel: C, thread: root },
    creator: ADA,
    when,
    task,
    timezone: 'Europe/Paris',
    via: 'command',
  });
  if (!made.ok) throw new Error(made.reason);
  return made.schedule;
}

describe('scheduled work in a Slack thread', () => {
  it("runs at 9:00 in Ada's zone as her turn; its write waits for Ada, Bob's click is refused; the thread is told the next run", async () => {
    const clock = new ManualClock(FRIDAY_7_UTC);
    bot = await bootSlackBot({ scheduleClock: clock, env: { SCHEDULE_TZ: 'UTC' } });
    const root = await threadOf(bot);
    const made = await schedule(bot, root, 'every weekday at 9:00', 'write the incident summary to summary.md');
    expect(made.nextRunAt).toBe(FRIDAY_9_PARIS);

    // A minute before: nothing.
    await clock.advanceTo(FRIDAY_9_PARIS - MINUTE, settle);
    expect(bot.llm.requests).toHaveLength(1);

    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'summary.md', content: 'no incidents' } }]);
    bot.llm.replyText('Summary written.');
    await clock.advanceTo(FRIDAY_9_PARIS, settle);
    await waitFor(() => bot!.llm.requests.length === 2, 15_000);
    expect(userText(bot, 1)).toContain('write the incident summary to summary.md');
    expect(userText(bot, 1)).toContain(`Scheduled task ${made.id}`);
    await waitFor(() => notes(bot!, root).length > 0, 8_000);
    expect(notes(bot, root)[0]!.text).toContain(`Scheduled run of ${made.id}`);
    // The next weekday is Monday.
    expect(notes(bot, root)[0]!.text).toContain('Next run: Mon 7 Dec 2026, 09:00 (Europe/Paris)');

    const card = await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    const refused = await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' }, { user: BOB });
    expect(JSON.stringify(await bot.slack.waitForResponse(refused))).toContain(
      'Only the person who started this thread can approve this.',
    );
    expect(bot.llm.requests).toHaveLength(2);
    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Summary written.')), 15_000);
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(3);
  });

  it('a run nobody approves is closed after SCHEDULE_WAIT_LIMIT, with a note', async () => {
    const clock = new ManualClock(FRIDAY_7_UTC);
    bot = await bootSlackBot({ scheduleClock: clock, env: { SCHEDULE_WAIT_LIMIT: '30m' } });
    const root = await threadOf(bot);
    const made = await schedule(bot, root, 'in 2 hours', 'write the deploy report to deploy.md');
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'deploy.md', content: 'done' } }]);
    await clock.advanceTo(FRIDAY_7_UTC + 120 * MINUTE, settle);
    await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    const sessionId = (await bot.core.store.getSession(`slack:${SLACK_IDS.teamId}:${C}:${encodeURIComponent(root)}`))!
      .id;
    expect(bot.core.manager.isWorking(sessionId)).toBe(true);

    await clock.advanceTo(FRIDAY_7_UTC + 149 * MINUTE, settle);
    expect(notes(bot, root).some((m) => m.text.includes('Closed'))).toBe(false);
    await clock.advanceTo(FRIDAY_7_UTC + 151 * MINUTE, settle);
    await waitFor(() => notes(bot!, root).some((m) => m.text.includes(`Closed this run of ${made.id}`)), 15_000);
    await bot.idle();
    expect(bot.core.manager.isWorking(sessionId)).toBe(false);
    expect(notes(bot, root).find((m) => m.text.includes('Closed'))!.text).toContain('30 minutes');
    // A one-off is gone once it ran.
    expect(await bot.core.schedules!.list({ platform: 'slack', workspace: SLACK_IDS.teamId, creator: ADA })).toEqual(
      [],
    );
  });

  it("runs count against the creator's spend limits: past hers, the run is skipped with a note and the model is not called", async () => {
    const clock = new ManualClock(FRIDAY_7_UTC);
    // The first call's estimate (its input and up to gpt-4.1's 32,768 output tokens) fits; what it spends does not leave room.
    bot = await bootSlackBot({ scheduleClock: clock, env: { BUDGET_USER_DAILY: '40000 tokens' } });
    bot.llm.replyText('Hello Ada.', { usage: { prompt_tokens: 39_000, completion_tokens: 1_500 } });
    const root = await bot.mention('hi');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();
    const made = await schedule(bot, root, 'in 1 hour', 'check the error rate');
    await clock.advanceTo(FRIDAY_7_UTC + 60 * MINUTE, settle);
    await waitFor(() => notes(bot!, root).some((m) => m.text.includes(`Skipped this run of ${made.id}`)), 15_000);
    expect(notes(bot, root).find((m) => m.text.includes('Skipped'))!.text).toMatch(/daily budget/);
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(1);
  });

  it('across a restart: a schedule made before it runs after it; a missed run within the grace runs at start, one past it is skipped with a note', async () => {
    const dir = await tempDir();
    cleanups.push(() => dir.remove());
    const llm = await new FakeOpenAI().start();
    cleanups.push(() => llm.stop());
    const slack = await new FakeSlack({
      users: [{ id: ADA, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada' }],
    }).start();
    cleanups.push(() => slack.stop());
    let clock = new ManualClock(FRIDAY_7_UTC);
    bot = await bootSlackBot({ dir: dir.path, llm, slack, scheduleClock: clock });
    const root = await threadOf(bot);
    const soon = await schedule(bot, root, 'in 30 minutes', 'check whether the deploy finished');
    const later = await schedule(bot, root, 'in 3 hours', 'check the error rate');
    await bot.stop();

    // Down for 40 minutes: the first run is 10 minutes late (within SCHEDULE_GRACE's 15) and runs at start.
    clock = new ManualClock(FRIDAY_7_UTC + 40 * MINUTE);
    llm.replyText('The deploy finished.');
    bot = await bootSlackBot({ dir: dir.path, llm, slack, scheduleClock: clock });
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('The deploy finished.')), 15_000);
    expect(llm.requests.at(-1)!.body).toMatchObject({
      messages: expect.arrayContaining([
        expect.objectContaining({ content: expect.stringContaining('check whether the deploy finished') }),
      ]),
    });
    await bot.idle();
    await bot.stop();

    // Down again until well past the second run: skipped with a note, no model call.
    clock = new ManualClock(FRIDAY_7_UTC + 240 * MINUTE);
    const requests = llm.requests.length;
    bot = await bootSlackBot({ dir: dir.path, llm, slack, scheduleClock: clock });
    await waitFor(() => notes(bot!, root).some((m) => m.text.includes(`Skipped the run of ${later.id}`)), 15_000);
    expect(notes(bot, root).find((m) => m.text.includes('Skipped'))!.text).toContain('That was its last run.');
    await bot.idle();
    expect(llm.requests).toHaveLength(requests);
    expect(soon.id).not.toBe(later.id);
  });
});

describe('a schedule whose creator lost access', () => {
  const CAROL = 'U0HUMAN003';
  const DAY = 24 * 60 * MINUTE;
  const botPosts = (b: SlackBot, root: string) => b.slack.thread(C, root).filter((m) => m.user === SLACK_IDS.botUserId);
  const stored = (b: SlackBot) => b.core.schedules!.list({ platform: 'slack', workspace: SLACK_IDS.teamId });

  /**
   * Ada's daily 9:00 schedule in her thread of a channel whose profile names Carol its approver
   * (no ADMINS), made while Ada, Bob and Carol are members; then the bot restarts with Ada
   * taken off ALLOWED_USERS. Resolves with the bot, the thread and the schedule.
   */
  async function adaRemovedAfterScheduling(): Promise<{ root: string; made: Schedule; clock: ManualClock }> {
    const dir = await tempDir();
    cleanups.push(() => dir.remove());
    const llm = await new FakeOpenAI().start();
    cleanups.push(() => llm.stop());
    const slack = await new FakeSlack({
      users: [{ id: ADA, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada' }],
    }).start();
    cleanups.push(() => slack.stop());
    const profiles = join(dir.path, 'profiles.yaml');
    await writeFile(profiles, `profiles:\n  - name: room\n    match: { slackChannel: ${C} }\n    admins: [${CAROL}]\n`);
    const env = (members: string[]) => ({ PROFILES: profiles, ALLOWED_USERS: members.join(','), SCHEDULE_TZ: 'UTC' });
    bot = await bootSlackBot({
      dir: dir.path,
      llm,
      slack,
      scheduleClock: new ManualClock(FRIDAY_7_UTC),
      env: env([ADA, BOB, CAROL]),
    });
    const root = await threadOf(bot);
    const made = await schedule(bot, root, 'every day at 9:00', 'summarise the open incidents');
    await bot.stop();

    const clock = new ManualClock(FRIDAY_7_UTC + MINUTE);
    bot = await bootSlackBot({ dir: dir.path, llm, slack, scheduleClock: clock, env: env([BOB, CAROL]) });
    return { root, made, clock };
  }

  it("the next run posts only one note, to the thread's approver, and pauses it; the next posts nothing; the third refused run ends it", async () => {
    const { root, made, clock } = await adaRemovedAfterScheduling();
    const before = botPosts(bot!, root).length;
    const requests = bot!.llm.requests.length;

    await clock.advanceTo(FRIDAY_9_PARIS, settle);
    // Runs are handed over and done when settle returns: the note is posted, or never will be.
    const posted = botPosts(bot!, root).slice(before);
    expect(posted).toHaveLength(1);
    const note = posted[0]!.text;
    expect(note).toContain(
      `<@${CAROL}>: schedule \`${made.id}\` (“summarise the open incidents”) is paused: <@${ADA}>, who set it, may no longer use the bot here`,
    );
    expect(note).toContain('It resumes by itself at a run once they may use the bot here again');
    expect(note).toContain(
      'ends by itself after 2 more refused runs (the next is due Sat 5 Dec 2026, 09:00 (Europe/Paris))',
    );
    expect(note).toContain(`End it now with \`/unschedule ${made.id}\``);
    expect(note).not.toMatch(/Scheduled run|Skipped/);
    expect(await stored(bot!)).toEqual([
      expect.objectContaining({ id: made.id, pausedAt: FRIDAY_9_PARIS, accessRefusals: 1 }),
    ]);

    // Saturday: refused again, counted (the record says so once settle returns), and nothing said.
    await clock.advanceTo(FRIDAY_9_PARIS + DAY, settle);
    expect(await stored(bot!)).toEqual([expect.objectContaining({ id: made.id, accessRefusals: 2 })]);
    expect(botPosts(bot!, root).slice(before)).toHaveLength(1);

    // Sunday: the third refused run in a row ends it, silently (the approver was told at the first).
    await clock.advanceTo(FRIDAY_9_PARIS + 2 * DAY, settle);
    expect(await stored(bot!)).toEqual([]);
    expect(botPosts(bot!, root).slice(before)).toHaveLength(1);
    await clock.advanceTo(FRIDAY_9_PARIS + 3 * DAY, settle);
    expect(botPosts(bot!, root).slice(before)).toHaveLength(1);
    expect(bot!.llm.requests).toHaveLength(requests);
  });

  it("/schedules shows it paused; Bob may not /unschedule it; Carol, who approves in its thread (a profile's approver, not an admin), may", async () => {
    const { root, made, clock } = await adaRemovedAfterScheduling();
    await clock.advanceTo(FRIDAY_9_PARIS, settle);
    await waitFor(() => botPosts(bot!, root).some((m) => m.text.includes('is paused')), 8_000);

    await bot!.mention('/schedules', { threadTs: root });
    await waitFor(() => bot!.slack.ephemerals(C).some((m) => m.user === ADA && m.text.includes(made.id)), 8_000);
    expect(bot!.slack.ephemerals(C).find((m) => m.user === ADA && m.text.includes(made.id))!.text).toContain(
      '⏸️ paused: <@U0HUMAN001> may no longer use the bot there; it resumes by itself once they may, and ends after 2 more refused runs',
    );

    await bot!.mention(`/unschedule ${made.id}`, { threadTs: root, user: BOB });
    await waitFor(() => bot!.slack.ephemerals(C).some((m) => m.user === BOB), 8_000);
    expect(bot!.slack.ephemerals(C).find((m) => m.user === BOB)!.text).toContain(
      `Only the person who made schedule ${made.id}, the person who started its thread, whoever approves there, or an admin may end it.`,
    );
    expect(await stored(bot!)).toHaveLength(1);

    await bot!.mention(`/unschedule ${made.id}`, { threadTs: root, user: CAROL });
    await waitFor(() => botPosts(bot!, root).some((m) => m.text.includes(`was ended by <@${CAROL}>`)), 8_000);
    expect(await stored(bot!)).toEqual([]);
  });
});
