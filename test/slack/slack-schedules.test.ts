// The schedule commands through the real bot on Slack (Bolt in HTTP mode, FakeSlack, the real
// core and its ScheduleService, core.schedules): `/schedule every weekday at 9:00 …` is
// read in the person's Slack time zone (users.info `tz`) and said in the thread; a bystander is
// refused privately; `/schedules` shows a person theirs and an admin every one in the channel;
// `/unschedule` by a stranger is refused, by its creator said in the thread; `/forget` ends them.
import { afterEach, describe, expect, it } from 'vitest';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import type { ScheduleDesk } from '../../src/schedules/schedule-types.js';
import { bootSlackBot, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';
const BOSS = 'U0ADMIN01';

let bot: SlackBot | undefined;
let slack: FakeSlack | undefined;
let desk: { desk: ScheduleDesk } | undefined;
afterEach(async () => {
  await bot?.stop();
  await slack?.stop();
  bot = undefined;
  slack = undefined;
  desk = undefined;
});

async function boot(env: Record<string, string> = {}): Promise<SlackBot> {
  slack = await new FakeSlack({
    users: [
      { id: ADA, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada', tz: 'Europe/Paris' },
      { id: BOB, name: 'bob', realName: 'Bob', displayName: 'bob', tz: 'America/Los_Angeles' },
    ],
  }).start();
  const booted = await bootSlackBot({ slack, env: { ADMINS: BOSS, ...env } });
  desk = { desk: booted.core.schedules! };
  return booted;
}

const whispersTo = (b: SlackBot, user: string): string[] =>
  b.slack
    .ephemerals(C)
    .filter((m) => m.user === user)
    .map((m) => m.text);
const botSays = (b: SlackBot, root: string): string[] =>
  b.slack
    .thread(C, root)
    .filter((m) => m.user === SLACK_IDS.botUserId)
    .map((m) => m.text);

async function whisperMatching(b: SlackBot, user: string, pattern: RegExp): Promise<string> {
  await waitFor(() => whispersTo(b, user).some((text) => pattern.test(text)), 8_000);
  return whispersTo(b, user).find((text) => pattern.test(text))!;
}

async function threadLineMatching(b: SlackBot, root: string, pattern: RegExp): Promise<string> {
  await waitFor(() => botSays(b, root).some((text) => pattern.test(text)), 8_000);
  return botSays(b, root).find((text) => pattern.test(text))!;
}

describe('schedules in a Slack thread', () => {
  it('reads "every weekday at 9:00" in the person’s Slack time zone and says the schedule in the thread', async () => {
    bot = await boot();
    // As Slack sends what a person typed: `<` and `&` as entities, a channel ping as a token.
    const root = await bot.mention(
      '/schedule every weekday at 9:00 summarise the open incidents where load &lt; 80 &amp; tell <!channel>',
    );
    const said = await threadLineMatching(bot, root, /set schedule/);
    const [stored] = await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId });
    expect(stored).toMatchObject({
      creator: ADA,
      key: { channel: C, thread: root },
      timezone: 'Europe/Paris',
      spec: { kind: 'cron', pattern: '0 9 * * 1-5', timezone: 'Europe/Paris' },
      via: 'command',
    });
    expect(said).toContain(`<@${ADA}> set schedule \`${stored!.id}\``);
    expect(said).toContain('every weekday at 09:00 (Europe/Paris)');
    expect(said).toMatch(/Next run: \w{3} \d+ \w{3} \d{4}, 09:00 \(Europe\/Paris\)/);
    expect(said).toContain(`\`/unschedule ${stored!.id}\``);
    // The person's words are shown as they wrote them, and inert: no one is notified by a schedule's task.
    expect(stored!.task).toMatch(/^summarise the open incidents where load < 80 & tell @\u2060?channel$/);
    expect(said).toContain('where load &lt; 80 &amp; tell');
    expect(said).not.toContain('<!channel>');
    // Their zone came from users.info, once.
    expect(bot.slack.callsOf('users.info').filter((call) => call.args.user === ADA).length).toBe(1);
    // The schedule's thread has a session, started by its creator: bystanders may not manage it.
    expect((await bot.core.store.getSession((await bot.core.store.listSessionIds())[0]!))?.startedBy).toBe(ADA);
    // Nothing reached the model.
    expect(bot.llm.requests).toHaveLength(0);
    // The schedule_task tool reads the same zone through core.personZones, from the same cache.
    expect(await bot.core.personZones.zoneOf('slack', ADA)).toBe('Europe/Paris');
    expect(await bot.core.personZones.zoneOf('discord', ADA)).toBe('UTC');
    expect(bot.slack.callsOf('users.info').filter((call) => call.args.user === ADA).length).toBe(1);
  });

  it('refuses a bystander, a cadence under the minimum, words it cannot read and one past the cap, each privately', async () => {
    bot = await boot({ SCHEDULES_PER_USER: '1' });
    const root = await bot.mention('/schedule in 2 hours check whether the deploy finished');
    await threadLineMatching(bot, root, /set schedule/);

    await bot.mention('/schedule in 3 hours check again', { threadTs: root, user: BOB });
    expect(await whisperMatching(bot, BOB, /cannot set schedules in this thread/)).toBeTruthy();

    await bot.mention('/schedule every minute ping the build', { threadTs: root });
    expect(await whisperMatching(bot, ADA, /SCHEDULE_MIN_INTERVAL/)).toMatch(
      /more often than the minimum of 5 minutes/,
    );

    await bot.mention('/schedule whenever you like tidy up', { threadTs: root });
    expect(await whisperMatching(bot, ADA, /couldn't find when/)).toContain('/schedule in 2 hours');

    await bot.mention('/schedule every day at 7:00 check the backups', { threadTs: root });
    // Escaped for mrkdwn, which Slack shows as "<id>".
    expect(await whisperMatching(bot, ADA, /You have 1 schedules already/)).toContain(
      'End one with /unschedule &lt;id&gt; first',
    );

    // Only the first one was made, and only it was said in the thread.
    expect(await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId })).toHaveLength(1);
    expect(botSays(bot, root).filter((text) => text.includes('set schedule'))).toHaveLength(1);
  });

  it('/schedules shows a person theirs and an admin every one in the channel; /unschedule by a stranger is refused, by its creator said in the thread', async () => {
    bot = await boot();
    const adas = await bot.mention('/schedule every monday at 8:30 plan the week');
    await threadLineMatching(bot, adas, /set schedule/);
    const bobs = await bot.mention('/schedule tomorrow at 10:00 remind me of the demo', { user: BOB });
    await threadLineMatching(bot, bobs, /set schedule/);
    const [adaSchedule] = await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId, creator: ADA });
    const [bobSchedule] = await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId, creator: BOB });
    expect(bobSchedule?.timezone).toBe('America/Los_Angeles');

    await bot.mention('/schedules', { threadTs: bobs, user: BOB });
    const bobList = await whisperMatching(bot, BOB, /Your schedules here/);
    expect(bobList).toContain(bobSchedule!.id);
    expect(bobList).toContain('remind me of the demo');
    expect(bobList).toMatch(/next \w{3} \d+ \w{3} \d{4}, 10:00 \(America\/Los_Angeles\)/);
    expect(bobList).not.toContain(adaSchedule!.id);

    await bot.mention('/schedules', { threadTs: adas, user: BOSS });
    const bossList = await whisperMatching(bot, BOSS, /every schedule in this channel/);
    expect(bossList).toContain(adaSchedule!.id);
    expect(bossList).toContain(bobSchedule!.id);
    expect(bossList).toContain(`by <@${ADA}>`);

    // Bob neither made Ada's schedule nor may manage her thread.
    await bot.mention(`/unschedule ${adaSchedule!.id}`, { threadTs: bobs, user: BOB });
    expect(await whisperMatching(bot, BOB, /Only the person who made schedule/)).toContain(adaSchedule!.id);
    expect(await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId, creator: ADA })).toHaveLength(1);
    await bot.mention('/unschedule s-zzzzzz', { threadTs: bobs, user: BOB });
    expect(await whisperMatching(bot, BOB, /There is no schedule "s-zzzzzz"/)).toBeTruthy();

    await bot.mention(`/unschedule ${adaSchedule!.id}`, { threadTs: adas });
    expect(await threadLineMatching(bot, adas, /was ended by/)).toBe(
      `⏰ Schedule \`${adaSchedule!.id}\` (plan the week) was ended by <@${ADA}>.`,
    );
    expect(await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId, creator: ADA })).toEqual([]);

    // An admin may end anyone's, and the schedule's own thread says so.
    await bot.mention(`/unschedule ${bobSchedule!.id}`, { threadTs: adas, user: BOSS });
    expect(await threadLineMatching(bot, bobs, /was ended by/)).toContain(`<@${BOSS}>`);
    expect(await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId })).toEqual([]);
  });

  it('/forget ends the thread’s schedules and says how many', async () => {
    bot = await boot();
    const root = await bot.mention('/schedule every day at 7:00 check the backups');
    await threadLineMatching(bot, root, /set schedule/);
    await bot.mention('/schedule in 2 hours check the restore test', { threadTs: root });
    await waitFor(() => botSays(bot!, root).filter((text) => text.includes('set schedule')).length === 2, 8_000);
    const elsewhere = await bot.mention('/schedule every friday at 16:00 write the weekly notes');
    await threadLineMatching(bot, elsewhere, /set schedule/);

    await bot.mention('/forget', { threadTs: root });
    expect(await whisperMatching(bot, ADA, /^Forgotten/)).toBe(
      'Forgotten: everything I stored for this thread is deleted. Its 2 schedules are ended too.',
    );
    const left = await desk!.desk.list({ platform: 'slack', workspace: SLACK_IDS.teamId });
    expect(left.map((one) => one.key.thread)).toEqual([elsewhere]);
  });
});
