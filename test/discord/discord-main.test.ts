// `npm start` with Discord alone: no Slack variable set, the bot starts, says so, and answers
// a mention. The Discord and model servers are local fakes; the bot is a child process.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INVITE_PERMISSIONS } from '../../connectors/discord/discord-connector.js';
import { DISCORD_IDS, mention } from '../fakes/discord-payloads.js';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { waitFor } from '../support/engine-kit.js';
import { buttonsOf } from './discord-harness.js';
import { discordEnv, startDiscordBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { threadFolder } from '../support/conversation-folders.js';
import { TINY_PNG } from '../support/file-host.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('npm start with Discord alone', () => {
  it('starts with only DISCORD_TOKEN (no Slack variable), logs that Discord is ready, and answers a mention in a thread', async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const { dir, fake, llm } = fakes;
    llm.replyText('Hello from the process.');

    const bot = await BotProcess.start(
      {
        ...discordEnv(fakes),
      },
      dir,
      30_000,
      { waitFor: 'discord' },
    );
    cleanups.push(() => bot.kill());
    expect(bot.startedLine).toMatchObject({ botUserId: DISCORD_IDS.botUserId, guilds: 1 });
    // In a guild already: no invite link needed.
    expect(bot.startedLine.inviteUrl).toBeUndefined();
    expect(bot.stdout).not.toContain('Slack connector started');

    const asked = fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} say hello` });
    const answer = await fake.waitForMessage(asked.id, (m) => m.content.includes('Hello from the process.'), 15_000);
    expect(answer.author.id).toBe(DISCORD_IDS.botUserId);
  });

  it("a call too long for its card gets the arguments attached and Show all, whose Approve runs it (the module graph npm start loads, undici 7 beside discord.js's own)", async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const { dir, fake, llm } = fakes;
    // About 2,400 characters: past what a card shows inline, so the card's update carries
    // the arguments as a file (multipart), which is what failed under npm start.
    const command = `echo ${'0123456789'.repeat(240)} > /dev/null && echo ran-long-command`;
    llm.replyToolCalls([{ name: 'run_shell', arguments: { command } }]).replyText('Done.');

    const bot = await BotProcess.start({ ...discordEnv(fakes) }, dir, 30_000, { waitFor: 'discord' });
    cleanups.push(() => bot.kill());

    const asked = fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} run the long one` });
    const card = await fake
      .waitForMessage(asked.id, (m) => buttonsOf(m).some((b) => b.label === 'Show all to decide'), 20_000)
      .catch((error: unknown) => {
        throw new Error(`no buttons on the card: ${String(error)}\n${bot.stdout.slice(-3000)}`);
      });
    const upload = fake.rest.callsTo('POST /channels/:channel/messages').find((c) => c.files.length > 0);
    expect(upload?.files[0]).toMatchObject({ filename: expect.stringMatching(/arguments\.txt$/) });
    expect(bot.stdout).not.toContain('could not update a tool card');

    // Approve is in the private message Show all answers with, not on a card that holds only part of the call.
    const showAll = fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: buttonsOf(card).find((b) => b.label === 'Show all to decide')!.customId,
    });
    await waitFor(() => fake.interaction(showAll.id)!.followUpIds.length === 1, 20_000);
    const full = fake.message(asked.id, fake.interaction(showAll.id)!.followUpIds[0]!)!;
    fake.clickButton({
      channelId: asked.id,
      messageId: full.id,
      customId: buttonsOf(full).find((b) => b.label === 'Approve')!.customId,
    });
    await fake.waitForMessage(asked.id, (m) => m.content.includes('Done.'), 20_000);
    const toolResult = llm.bodies[1]?.messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(toolResult)).toContain('ran-long-command');
  }, 90_000);

  it('files in and out under npm start: a PNG and a CSV land in uploads/ and the PNG reaches the model as an image; attach_file, approved, posts the CSV back', async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const { dir, fake, llm } = fakes;
    const csv = 'city,temp\nOslo,3\n';
    llm
      .replyToolCalls([{ name: 'attach_file', arguments: { path: 'uploads/temps.csv', comment: 'Your table, back' } }])
      .replyText('Sent it back.');
    const bot = await BotProcess.start({ ...discordEnv(fakes), PERMISSION_MODE: 'interactive' }, dir, 30_000, {
      waitFor: 'discord',
    });
    cleanups.push(() => bot.kill());

    const asked = fake.sendMessage({
      content: `${mention(DISCORD_IDS.botUserId)} send the table back`,
      attachments: [
        { name: 'shot.png', data: TINY_PNG, contentType: 'image/png' },
        { name: 'temps.csv', data: csv, contentType: 'text/csv' },
      ],
    });
    const card = await fake
      .waitForMessage(asked.id, (m) => buttonsOf(m).some((b) => b.label === 'Approve'), 20_000)
      .catch((error: unknown) => {
        throw new Error(`no approval card: ${String(error)}\n${bot.stdout.slice(-3000)}`);
      });
    const uploads = join(
      threadFolder(join(dir, 'workspace'), {
        platform: 'discord',
        workspace: DISCORD_IDS.guildId,
        channel: DISCORD_IDS.generalChannelId,
        thread: asked.id,
      }),
      'uploads',
    );
    expect(await readFile(join(uploads, 'shot.png'))).toEqual(TINY_PNG);
    expect(await readFile(join(uploads, 'temps.csv'), 'utf8')).toBe(csv);
    const user = llm.bodies[0]!.messages.find((m) => m.role === 'user');
    expect(JSON.stringify(user)).toContain(`data:image/png;base64,${TINY_PNG.toString('base64')}`);

    fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: buttonsOf(card).find((b) => b.label === 'Approve')!.customId,
    });
    await fake.waitForMessage(asked.id, (m) => m.content.includes('Sent it back.'), 20_000);
    const upload = fake.rest
      .callsTo('POST /channels/:channel/messages')
      .find((c) => c.files.some((f) => f.filename === 'temps.csv'));
    expect(upload?.files[0]?.bytes.toString('utf8')).toBe(csv);
    expect(fake.thread(asked.id).find((m) => m.attachments.some((a) => a.filename === 'temps.csv'))?.content).toBe(
      'Your table, back',
    );
  }, 90_000);

  it('Slack and Discord in one process: both start, and each answers its own mention', async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const { dir, fake, llm } = fakes;
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    llm.replyText('Answer one.').replyText('Answer two.');

    const bot = await BotProcess.start(
      discordEnv(fakes, {
        SLACK_BOT_TOKEN: 'xoxb-test',
        SLACK_SIGNING_SECRET: 'secret',
        SLACK_API_URL: slack.apiUrl,
        PORT: '0',
      }),
      dir,
      30_000,
      { waitFor: 'discord' },
    );
    cleanups.push(() => bot.kill());
    expect(bot.stdout).toContain('Slack connector started');
    const port = (
      JSON.parse(bot.stdout.split('\n').find((line) => line.includes('Slack connector started'))!) as { port: number }
    ).port;

    const asked = fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} first` });
    await fake.waitForMessage(asked.id, (m) => m.content.includes('Answer one.'), 15_000);
    const slackMention = appMention({ text: 'second' });
    slack.addMessage(slackMention);
    await sendEvent(`http://127.0.0.1:${port}/slack/events`, 'secret', eventCallback(slackMention));
    await waitFor(
      () => slack.thread(SLACK_IDS.channelId, slackMention.ts).some((m) => (m.text ?? '').includes('Answer two.')),
      15_000,
    );
  });

  it('a bot in no server yet logs where to invite it: the application, both scopes, the permissions', async () => {
    const fakes = await startDiscordBotFakes(cleanups, { inGuild: false });
    const { dir } = fakes;

    const bot = await BotProcess.start(
      {
        ...discordEnv(fakes),
      },
      dir,
      30_000,
      { waitFor: 'discord' },
    );
    cleanups.push(() => bot.kill());
    expect(bot.startedLine).toMatchObject({ botUserId: DISCORD_IDS.botUserId, guilds: 0 });
    const invite = new URL(String(bot.startedLine.inviteUrl));
    expect(`${invite.origin}${invite.pathname}`).toBe('https://discord.com/oauth2/authorize');
    expect(invite.searchParams.get('client_id')).toBe(DISCORD_IDS.applicationId);
    expect(String(bot.startedLine.inviteUrl)).toContain('scope=bot%20applications.commands');
    expect(invite.searchParams.get('permissions')).toBe('309237746752');
  });

  it('without DISCORD_GUILD_ID, a public application is a start-up warning that says what it means and how to close it; none once "Public Bot" is off, nor with the servers listed', async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const { dir, fake } = fakes;
    const PUBLIC = 'anyone can add this bot to their own server and approve their own commands there';
    const messages = (bot: BotProcess, level: number): string[] =>
      bot
        .lines()
        .filter((line) => line.level === level)
        .map((line) => String(line.msg));
    const warnings = (bot: BotProcess): string[] => messages(bot, 40);

    // Discord creates applications public: the fake's is, as a new one would be.
    const open = await BotProcess.start(discordEnv(fakes), dir, 30_000, { waitFor: 'discord' });
    cleanups.push(() => open.kill());
    const warning = warnings(open).find((line) => line.includes(PUBLIC));
    expect(warning, open.stdout.slice(-3000)).toBeDefined();
    expect(warning).toContain('DISCORD_GUILD_ID is not set');
    expect(warning).toContain('Set DISCORD_GUILD_ID to your server id');
    expect(warning).toContain('turn off "Public Bot" in the Discord Developer Portal → your application → Bot tab');
    await open.kill();

    fake.rest.botPublic = false;
    const closed = await BotProcess.start(discordEnv(fakes), dir, 30_000, { waitFor: 'discord' });
    cleanups.push(() => closed.kill());
    expect(warnings(closed).filter((line) => /public/i.test(line))).toEqual([]);
    expect(messages(closed, 30)).toContainEqual(
      expect.stringContaining('"Public Bot" is off, so only the application\'s owner can add it to a server'),
    );
    await closed.kill();

    fake.rest.botPublic = true;
    const asked = fake.rest.callsTo('GET /applications/@me').length;
    const listed = await BotProcess.start(discordEnv(fakes, { DISCORD_GUILD_ID: DISCORD_IDS.guildId }), dir, 30_000, {
      waitFor: 'discord',
    });
    cleanups.push(() => listed.kill());
    expect(warnings(listed).filter((line) => /public/i.test(line))).toEqual([]);
    expect(messages(listed, 30)).toContainEqual(
      expect.stringContaining(`home servers ${DISCORD_IDS.guildId} (DISCORD_GUILD_ID): their members are members`),
    );
    expect(fake.rest.callsTo('GET /applications/@me')).toHaveLength(asked);
  }, 120_000);

  it('the invite URL asks for exactly the permissions manifest/discord.md explains', () => {
    expect(INVITE_PERMISSIONS).toBe(309237746752n);
  });
});
