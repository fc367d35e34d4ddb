// Which Discord servers are home (DISCORD_GUILD_ID), end to end: the real discord.js client
// against a fake Discord where the bot is in three servers, the real core and connector. With
// two listed, the members of both use the bot, in their servers and by DM; the member of the
// third, a server nobody listed (anyone may add a public bot to theirs), is refused there and
// by DM. Unset, the start-up asks Discord whether the application is public.
import { afterEach, describe, expect, it } from 'vitest';
import { mention } from '../fakes/discord-payloads.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { waitFor } from '../support/engine-kit.js';
import { botMessages, bootDiscordBot, DISCORD_IDS, waitForBotMessage, type DiscordBot } from './discord-harness.js';

const HOME = DISCORD_IDS.guildId;
const SECOND = '222222222222222222';
const STRANGERS = '333333333333333333';
const BOB = '900000000000000002';
const CAROL = '900000000000000003';
const REFUSED = 'not a member of the workspace this bot belongs to';

let bot: DiscordBot | undefined;
let fake: FakeDiscord | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await fake?.stop();
  fake = undefined;
});

/** The fake guild (ada, grace), a second server (bob) and a stranger's server (carol). */
async function threeServers(): Promise<FakeDiscord> {
  fake = await new FakeDiscord({
    users: [
      { id: BOB, username: 'bob', globalName: 'Bob', outsider: true },
      { id: CAROL, username: 'carol', globalName: 'Carol', outsider: true },
    ],
    otherGuilds: [
      { id: SECOND, name: 'Second server', memberIds: [BOB] },
      { id: STRANGERS, name: "A stranger's server", memberIds: [CAROL] },
    ],
  }).start();
  return fake;
}

function generalOf(discord: FakeDiscord, guildId: string): string {
  return discord.guild.otherGuilds.get(guildId)!.channelId;
}

describe('DISCORD_GUILD_ID with two servers', () => {
  it("members of both are members, in their server and by DM; a third server's member is refused in either", async () => {
    const discord = await threeServers();
    bot = await bootDiscordBot({ fake: discord, env: { DISCORD_GUILD_ID: `${HOME}, ${SECOND}` } });

    bot.llm.replyText('Hello home.');
    const fromHome = bot.mention('hello from the first server');
    await waitForBotMessage(bot, fromHome.id, (m) => m.content.includes('Hello home.'));
    await bot.idle();

    bot.llm.replyText('Hello second server.');
    const fromSecond = discord.sendMessage({
      channelId: generalOf(discord, SECOND),
      authorId: BOB,
      content: `${mention(DISCORD_IDS.botUserId)} hello from the second server`,
    });
    await waitForBotMessage(bot, fromSecond.id, (m) => m.content.includes('Hello second server.'));
    await bot.idle();
    const sessions = await Promise.all(
      (await bot.core.store.listSessionIds()).map((id) => bot!.core.store.getSession(id)),
    );
    expect(sessions.map((session) => session?.key.workspace).sort()).toEqual([HOME, SECOND].sort());

    bot.llm.replyText('Hello Bob, in private.');
    const bobDm = discord.sendDirectMessage({ content: 'hello by DM', authorId: BOB });
    await waitForBotMessage(bot, bobDm.channel_id, (m) => m.content.includes('Hello Bob, in private.'));
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(3);

    // Carol added the bot to her own server: there she is an outsider, and so she is by DM.
    const fromStranger = discord.sendMessage({
      channelId: generalOf(discord, STRANGERS),
      authorId: CAROL,
      content: `${mention(DISCORD_IDS.botUserId)} run my commands`,
    });
    const carolDm = discord.guild.dmChannelFor(CAROL).id;
    await waitForBotMessage(bot, carolDm, (m) => m.content.includes(REFUSED));
    expect(discord.guild.channel(fromStranger.id)).toBeUndefined(); // no thread started for it
    discord.sendDirectMessage({ content: 'then by DM', authorId: CAROL });
    await waitFor(() => botMessages(bot!, carolDm).filter((m) => m.content.includes(REFUSED)).length === 2);
    expect(bot.llm.requests).toHaveLength(3);

    // The commands are registered in each listed server, neither globally nor in hers.
    const registered = discord.rest
      .callsTo('PUT /applications/:application/guilds/:guild/commands')
      .map((call) => call.params.guild);
    expect(registered.sort()).toEqual([HOME, SECOND].sort());
    expect(discord.rest.callsTo('PUT /applications/:application/commands')).toHaveLength(0);
    // The start-up said the bot is in a server nobody listed, and asked nothing of the application.
    const warned = bot.logs.lines.find(
      (line) => line.level === 'warn' && line.message.includes('servers not in DISCORD_GUILD_ID'),
    );
    expect(JSON.stringify(warned?.details)).toContain(STRANGERS);
    expect(discord.rest.callsTo('GET /applications/@me')).toHaveLength(0);
  });

  it('a listed server the bot is not in is named at start-up, and the others still get their commands', async () => {
    const discord = await threeServers();
    const MISSING = '444444444444444444';
    bot = await bootDiscordBot({ fake: discord, env: { DISCORD_GUILD_ID: `${MISSING},${SECOND}` } });
    const absent = bot.logs.lines.find(
      (line) => line.level === 'warn' && line.message.includes('lists servers the bot is not in'),
    );
    expect(absent?.details).toMatchObject({ guilds: [MISSING] });
    expect(
      discord.rest
        .callsTo('PUT /applications/:application/guilds/:guild/commands')
        .map((call) => [call.params.guild, call.status]),
    ).toEqual([
      [MISSING, 403],
      [SECOND, 200],
    ]);
  });
});

describe('a server that adds the bot while it runs', () => {
  it('is logged with what it counts as: outside DISCORD_GUILD_ID, its members are refused there', async () => {
    fake = await new FakeDiscord({
      users: [{ id: CAROL, username: 'carol', globalName: 'Carol', outsider: true }],
    }).start();
    bot = await bootDiscordBot({ fake, env: { DISCORD_GUILD_ID: HOME } });
    const joined = fake.joinGuild({ id: STRANGERS, name: "A stranger's server", memberIds: [CAROL] });
    await waitFor(() =>
      bot!.logs.lines.some((line) => line.message.includes('added to a server not in DISCORD_GUILD_ID')),
    );
    const line = bot.logs.lines.find((entry) => entry.message.includes('added to a server not in DISCORD_GUILD_ID'))!;
    expect(line).toMatchObject({ level: 'warn', details: { guild: `A stranger's server (${STRANGERS})` } });

    fake.sendMessage({
      channelId: joined.channelId,
      authorId: CAROL,
      content: `${mention(DISCORD_IDS.botUserId)} hello`,
    });
    await waitForBotMessage(bot, fake.guild.dmChannelFor(CAROL).id, (m) => m.content.includes(REFUSED));
    expect(bot.llm.requests).toHaveLength(0);
  });
});

describe('DISCORD_GUILD_ID unset', () => {
  it('every server the bot is in counts; a start-up whose application lookup fails warns that it could not check, and the bot runs', async () => {
    const discord = await threeServers();
    discord.rest.failNext('GET /applications/@me', { status: 403, code: 50001, message: 'Missing Access' });
    bot = await bootDiscordBot({ fake: discord });
    const warned = bot.logs.lines.find(
      (line) => line.level === 'warn' && line.message.includes('could not be checked'),
    );
    expect(warned?.message).toContain('Missing Access');
    expect(warned?.message).toContain('"Public Bot"');

    // Carol's server is as much home as any: what the warning is about.
    bot.llm.replyText('Hello Carol.');
    const fromStranger = discord.sendMessage({
      channelId: generalOf(discord, STRANGERS),
      authorId: CAROL,
      content: `${mention(DISCORD_IDS.botUserId)} hello`,
    });
    await waitForBotMessage(bot, fromStranger.id, (m) => m.content.includes('Hello Carol.'));
    await bot.idle();
  });
});
