// A channel a profile names that does not exist, or that the bot cannot see, is a start-up
// warning naming the profile and the id, on Slack (`conversations.info` through the bot's
// WebClient against FakeSlack) and on Discord (`GET /channels/:id` through discord.js's REST
// against FakeDiscord). Never fatal: the bot runs, and the channel may be made or the bot
// invited later.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DISCORD_IDS } from '../fakes/discord-payloads.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { bootDiscordBot } from '../discord/discord-harness.js';
import { bootSlackBot } from '../slack/slack-harness.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function profilesFile(lines: string[]): Promise<{ dir: string; path: string }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const path = join(dir.path, 'profiles.yaml');
  await writeFile(path, ['profiles:', ...lines, ''].join('\n'));
  return { dir: dir.path, path };
}

type Logs = { lines: { level: string; message: string; details: object }[] };
const warnings = (logs: Logs): string[] =>
  logs.lines
    .filter((line) => line.level === 'warn' && line.message.startsWith('profile "'))
    .map((line) => line.message);
const summary = (logs: Logs): object | undefined =>
  logs.lines.find((line) => line.message === 'profile channels checked')?.details;

describe('the channels a profile names, looked up at start', () => {
  it('Slack: an unknown id and a channel the bot is not in are warnings naming the profile; a known one is quiet', async () => {
    const { dir, path } = await profilesFile([
      '  - name: ops',
      `    match: { slackChannel: ${SLACK_IDS.channelId} }`,
      '  - name: ghost',
      `    match: { slackChannel: [C0GHOST01, ${SLACK_IDS.channelId}] }`,
      '  - name: lobby',
      '    match: { slackChannel: C0LOBBY01 }',
      '  - name: dms',
      '    match: { dm: true }',
    ]);
    const slack = await new FakeSlack({ channels: [{ id: 'C0LOBBY01', name: 'lobby', member: false }] }).start();
    cleanups.push(() => slack.stop());
    const bot = await bootSlackBot({ dir, slack, env: { PROFILES: path } });
    cleanups.push(() => bot.stop());
    await bot.connector.profileChannels;

    expect(warnings(bot.logs)).toEqual([
      'profile "ghost": Slack channel C0GHOST01 does not exist or the bot cannot see it (channel_not_found); invite the bot there, or fix the id in PROFILES',
      'profile "lobby": Slack channel C0LOBBY01: the bot is not a member yet: invite it there (/invite @the-bot) so it hears mentions',
    ]);
    expect(summary(bot.logs)).toEqual({ platform: 'Slack', checked: 3, unseen: 1 });
    // Each id asked once, through the bot's token, after auth.test.
    expect(
      slack.calls
        .filter((call) => call.method === 'conversations.info')
        .map((call) => call.args.channel)
        .sort(),
    ).toEqual(['C0GHOST01', 'C0LOBBY01', SLACK_IDS.channelId].sort());
    // Not fatal: the bot still answers where its profiles point.
    const ts = await bot.mention('hello');
    await bot.idle();
    expect(slack.thread(SLACK_IDS.channelId, ts).some((message) => message.user === SLACK_IDS.botUserId)).toBe(true);
  }, 60_000);

  it('Slack: without PROFILES nothing is looked up', async () => {
    const bot = await bootSlackBot();
    cleanups.push(() => bot.stop());
    await bot.connector.profileChannels;
    expect(bot.slack.calls.filter((call) => call.method === 'conversations.info')).toEqual([]);
    expect(summary(bot.logs)).toEqual({ platform: 'Slack', checked: 0, unseen: 0 });
  }, 60_000);

  it('Discord: an unknown channel (404, 10003) and one the bot may not view (403, 50001) are warnings naming the profile; a channel it sees is quiet', async () => {
    const unknown = '112233445566778899';
    const hidden = '998877665544332211';
    const { dir, path } = await profilesFile([
      '  - name: general',
      `    match: { discordChannel: "${DISCORD_IDS.generalChannelId}" }`,
      '  - name: gone',
      `    match: { discordChannel: ["${unknown}", "${DISCORD_IDS.randomChannelId}"] }`,
      '  - name: staff',
      `    match: { discordChannel: "${hidden}" }`,
      '  - name: server',
      `    match: { discordGuild: "${DISCORD_IDS.guildId}" }`,
    ]);
    const fake = await new FakeDiscord().start();
    cleanups.push(() => fake.stop());
    fake.rest.hiddenChannels.add(hidden);
    const bot = await bootDiscordBot({ dir, fake, env: { PROFILES: path } });
    cleanups.push(() => bot.stop());
    await bot.connector.profileChannels;

    expect(warnings(bot.logs)).toEqual([
      `profile "gone": Discord channel ${unknown} does not exist or the bot cannot see it (10003 Unknown Channel); invite the bot there, or fix the id in PROFILES`,
      `profile "staff": Discord channel ${hidden} does not exist or the bot cannot see it (50001 Missing Access); invite the bot there, or fix the id in PROFILES`,
    ]);
    expect(summary(bot.logs)).toEqual({ platform: 'Discord', checked: 4, unseen: 2 });
    const asked = bot.fake.rest.callsTo('GET /channels/:channel');
    expect(asked.filter((call) => call.params.channel === unknown).map((call) => call.status)).toEqual([404]);
    for (const id of [DISCORD_IDS.generalChannelId, DISCORD_IDS.randomChannelId])
      expect(asked.filter((call) => call.params.channel === id).map((call) => call.status)).toContain(200);
  }, 60_000);
});
