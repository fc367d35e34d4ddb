// Self-tests of the Discord fakes: the REAL discord.js 14 Client (REST + Gateway) against
// FakeDiscord, with no mocks. Besides proving the fakes, these pin down the discord.js
// behaviour the Discord connector relies on: the only option that redirects it (`rest.api`),
// `clientReady` after GUILD_CREATE, partials for reactions on uncached messages, the 3 s
// interaction window (10062) and the single acknowledgement (40060), the body of a send with
// allowed_mentions and components, 160004 on a second thread, the REST layer waiting out a 429
// by itself, and a Resume that replays what was missed exactly once.
import { once } from 'node:events';
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Routes,
  type ClientEvents,
  type ClientOptions,
  type Message,
  type TextChannel,
} from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { INTENTS, PARTIALS } from '../../connectors/discord/discord-connector.js';
import { DISCORD_IDS, mention, until } from './discord-payloads.js';
import { FakeDiscord, type FakeDiscordOptions } from './discord-server.js';

// The connector's own intents and partials: the fake is proven against what the bot asks for.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  // Clients first (they hold sockets and keep-alive connections to the fake), then the fakes.
  while (cleanups.length) await cleanups.pop()!();
});

async function startFake(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const fake = await new FakeDiscord(options).start();
  cleanups.push(() => fake.stop());
  return fake;
}

/** The bot as the connector will build it, pointed at the fake; resolves on `clientReady`. */
async function startBot(
  fake: FakeDiscord,
  options: Partial<ClientOptions> & { fastReidentify?: boolean } = {},
): Promise<Client<true>> {
  const { fastReidentify, ...overrides } = options;
  const client = new Client({
    intents: INTENTS,
    partials: PARTIALS,
    ...fake.clientOptions({ fastReidentify: fastReidentify ?? false }),
    ...overrides,
  });
  cleanups.push(() => client.destroy());
  const ready = once(client, Events.ClientReady);
  await client.login(fake.token);
  await ready;
  return client as Client<true>;
}

/** The next `event` whose arguments match, or a rejection after `timeoutMs`. */
function nextEvent<E extends keyof ClientEvents>(
  client: Client,
  event: E,
  predicate: (...args: ClientEvents[E]) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<ClientEvents[E]> {
  return new Promise((resolve, reject) => {
    const listener = (...args: ClientEvents[E]): void => {
      if (!predicate(...args)) return;
      clearTimeout(timer);
      client.off(event, listener);
      resolve(args);
    };
    const timer = setTimeout(() => {
      client.off(event, listener);
      reject(new Error(`no ${String(event)} within ${timeoutMs} ms`));
    }, timeoutMs);
    client.on(event, listener);
  });
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}

async function general(client: Client<true>): Promise<TextChannel> {
  return (await client.channels.fetch(DISCORD_IDS.generalChannelId)) as TextChannel;
}

function approvalRow(): ActionRowBuilder<ButtonBuilder> {
  return new ActionRowBuilder<ButtonBuilder>().addComponents(
    new ButtonBuilder().setCustomId('approve:1').setLabel('Approve').setStyle(ButtonStyle.Success),
    new ButtonBuilder().setCustomId('deny:1').setLabel('Deny').setStyle(ButtonStyle.Danger),
  );
}

describe('discord.js logs in to the fake', () => {
  it('finds the gateway through GET /gateway/bot, identifies, and is ready with the guild, its channels and its active thread', async () => {
    const fake = await startFake({ heartbeatIntervalMs: 300 });
    const client = await startBot(fake);

    expect(client.user.id).toBe(DISCORD_IDS.botUserId);
    expect(client.application.id).toBe(DISCORD_IDS.applicationId);
    const guild = client.guilds.cache.get(DISCORD_IDS.guildId);
    expect(guild?.available).toBe(true);
    expect(guild?.channels.cache.get(DISCORD_IDS.generalChannelId)?.name).toBe('general');
    const seeded = client.channels.cache.get(DISCORD_IDS.seededThreadId);
    expect(seeded?.isThread()).toBe(true);

    // Only `rest.api` redirected it: the gateway URL came from GET /gateway/bot, sent with the bot token.
    const gatewayBot = await fake.rest.waitForCall('GET /gateway/bot');
    expect(gatewayBot.headers.authorization).toBe(`Bot ${fake.token}`);
    expect(gatewayBot.headers['user-agent']).toMatch(
      /^DiscordBot \(https:\/\/discord\.js\.org, [\d.]+\) discord\.js\/14\./,
    );
    expect(fake.gateway.connections[0]).toMatchObject({
      path: '/gateway',
      query: 'v=10&encoding=json',
      started: 'identify',
    });
    const identify = fake.gateway.received.find((f) => f.op === 2)!.d as {
      intents: number;
      shard: number[];
      compress: boolean;
    };
    expect(identify).toMatchObject({
      intents: 1 | (1 << 9) | (1 << 15) | (1 << 10) | (1 << 12) | (1 << 13),
      shard: [0, 1],
      compress: false,
    });

    // Heartbeats flow and are acknowledged (discord.js measures its ping from the ACK).
    await fake.gateway.waitForHeartbeats(2);
    expect(fake.gateway.sent.some((f) => f.op === 11)).toBe(true);
    expect(client.ws.ping).toBeGreaterThanOrEqual(0);
  });

  it('a wrong token fails login at GET /gateway/bot with TokenInvalid', async () => {
    const fake = await startFake();
    const client = new Client({ intents: INTENTS, ...fake.clientOptions() });
    cleanups.push(() => client.destroy());
    const error = await rejectionOf(client.login('not-the-token'));
    expect(error).toMatchObject({ code: 'TokenInvalid' });
    expect(fake.rest.callsTo('GET /gateway/bot')[0]?.status).toBe(401);
    expect(fake.gateway.connections).toHaveLength(0);
  });
});

describe('what people do reaches the bot', () => {
  it('a mention in a channel arrives as messageCreate with its content and mentions; a reply in a thread arrives from the thread', async () => {
    const fake = await startFake();
    const client = await startBot(fake);

    const received = nextEvent(client, Events.MessageCreate, (m) => m.channelId === DISCORD_IDS.generalChannelId);
    const sent = fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} summarise the launch thread` });
    const [message] = await received;
    expect(message.id).toBe(sent.id);
    expect(message.content).toBe(`<@${DISCORD_IDS.botUserId}> summarise the launch thread`);
    expect(message.author.username).toBe('ada');
    expect(message.mentions.has(client.user)).toBe(true);
    expect(message.mentions.users.map((u) => u.id)).toEqual([DISCORD_IDS.botUserId]);
    expect(message.member?.id).toBe(DISCORD_IDS.humanUserId);

    // The seeded thread came with GUILD_CREATE, so its messages resolve to a ThreadChannel.
    const inThread = nextEvent(client, Events.MessageCreate, (m) => m.channelId === DISCORD_IDS.seededThreadId);
    fake.sendMessage({
      channelId: DISCORD_IDS.seededThreadId,
      content: 'and a second idea',
      authorId: DISCORD_IDS.otherHumanUserId,
    });
    const [threadMessage] = await inThread;
    expect(threadMessage.channel.isThread()).toBe(true);
    expect(threadMessage.content).toBe('and a second idea');
    expect(fake.transcript(DISCORD_IDS.seededThreadId)).toEqual([
      'ada: first idea: a blog post',
      'grace: and a second idea',
    ]);
  });

  it('without the MessageContent intent, content is withheld unless the message mentions the bot', async () => {
    const fake = await startFake();
    const client = await startBot(fake, { intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages] });
    const first = nextEvent(client, Events.MessageCreate);
    fake.sendMessage({ content: 'just chatting' });
    expect((await first)[0].content).toBe('');
    const second = nextEvent(client, Events.MessageCreate);
    fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} are you there?` });
    expect((await second)[0].content).toContain('are you there?');
    // No reaction intent: the fake withholds the dispatch, as Discord does.
    fake.react({ messageId: DISCORD_IDS.seededThreadId, emoji: '👍' });
    expect(fake.gateway.dropped.map((d) => d.t)).toContain('MESSAGE_REACTION_ADD');
  });

  it('a reaction on a message the bot never cached fires messageReactionAdd as a partial, and the message can be fetched', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const reacted = nextEvent(client, Events.MessageReactionAdd);
    fake.react({ messageId: DISCORD_IDS.seededThreadId, emoji: '🛑' });
    const [reaction, user] = await reacted;
    expect(reaction.partial).toBe(true);
    expect(reaction.message.partial).toBe(true);
    expect(reaction.emoji.name).toBe('🛑');
    expect(user.id).toBe(DISCORD_IDS.humanUserId);

    const message = await reaction.message.fetch();
    expect(message.content).toBe('shall we plan the launch?');
    expect(fake.rest.callsTo('GET /channels/:channel/messages/:message')).toHaveLength(1);
  });
});

describe('the bot answers', () => {
  it('a message with allowed_mentions and components is recorded as sent, pings only who it allows, and comes back over the gateway', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const channel = await general(client);

    const echoed = nextEvent(client, Events.MessageCreate, (m) => m.author.id === DISCORD_IDS.botUserId);
    const sent = await channel.send({
      content: `${mention(DISCORD_IDS.humanUserId)} and ${mention(DISCORD_IDS.otherHumanUserId)}: run \`rm -rf build\`?`,
      allowedMentions: { users: [DISCORD_IDS.humanUserId] },
      components: [approvalRow()],
    });
    const call = await fake.rest.waitForCall('POST /channels/:channel/messages');
    expect(call.params.channel).toBe(DISCORD_IDS.generalChannelId);
    expect(call.body).toMatchObject({
      allowed_mentions: { users: [DISCORD_IDS.humanUserId] },
      components: [
        {
          type: 1,
          components: [
            { type: 2, custom_id: 'approve:1', label: 'Approve', style: 3 },
            { type: 2, custom_id: 'deny:1', label: 'Deny', style: 4 },
          ],
        },
      ],
    });
    const stored = fake.message(DISCORD_IDS.generalChannelId, sent.id)!;
    expect(stored.mentions.map((u) => u.id)).toEqual([DISCORD_IDS.humanUserId]);
    expect(stored.components).toHaveLength(1);
    const [echo] = await echoed;
    expect(echo.id).toBe(sent.id);
    expect(echo.author.bot).toBe(true);

    // Over 2,000 characters: Discord's 50035 Invalid Form Body, thrown as DiscordAPIError.
    const tooLong = await rejectionOf(channel.send('x'.repeat(2001)));
    expect(tooLong).toBeInstanceOf(DiscordAPIError);
    expect(tooLong).toMatchObject({ code: 50035, status: 400 });
    expect(tooLong.message).toContain('content[BASE_TYPE_MAX_LENGTH]');
  });

  it('a button click is answered within 3 s with update; a second answer gets 40060, and an answer to a stale click gets 10062', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const channel = await general(client);
    const card = await channel.send({ content: 'Run `rm -rf build`?', components: [approvalRow()] });

    const clicked = nextEvent(client, Events.InteractionCreate);
    const click = fake.clickButton({ messageId: card.id, customId: 'approve:1' });
    const [interaction] = await clicked;
    if (!interaction.isButton()) throw new Error('expected a button interaction');
    expect(interaction.customId).toBe('approve:1');
    expect(interaction.user.id).toBe(DISCORD_IDS.humanUserId);
    expect(interaction.message.id).toBe(card.id);
    await interaction.update({ content: 'Approved by ada', components: [] });

    const callback = fake.rest.callsTo('POST /interactions/:interaction/:token/callback')[0]!;
    expect(callback).toMatchObject({
      status: 204,
      query: { with_response: 'false' },
      body: { type: 7, data: { content: 'Approved by ada', components: [] } },
    });
    expect(callback.headers.authorization).toBeUndefined();
    expect(fake.message(DISCORD_IDS.generalChannelId, card.id)).toMatchObject({
      content: 'Approved by ada',
      components: [],
    });
    expect(fake.interaction(click.id)?.response?.type).toBe(7);

    // The same interaction answered again (a second process, a retry): 40060.
    const again = await rejectionOf(
      client.rest.post(Routes.interactionCallback(click.id, click.token), { body: { type: 6 }, auth: false }),
    );
    expect(again).toMatchObject({ code: 40060, status: 400 });

    // A click made 3.5 s ago: its token is dead before the bot can answer.
    const staleClicked = nextEvent(client, Events.InteractionCreate);
    fake.clickButton({ messageId: card.id, customId: 'deny:1', ageMs: 3_500 });
    const [stale] = await staleClicked;
    if (!stale.isButton()) throw new Error('expected a button interaction');
    const late = await rejectionOf(stale.deferUpdate());
    expect(late).toBeInstanceOf(DiscordAPIError);
    expect(late).toMatchObject({ code: 10062, status: 404 });
  });

  it("a click answered with a modal (type 9): a modal past Discord's limits is 50035; the submit (type 5) carries the values and the clicked message; a modal cannot answer a modal", async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const channel = await general(client);
    const answer = await channel.send({ content: 'The answer.', components: [approvalRow()] });

    const clicked = nextEvent(client, Events.InteractionCreate);
    const click = fake.clickButton({ messageId: answer.id, customId: 'deny:1' });
    const [interaction] = await clicked;
    if (!interaction.isButton()) throw new Error('expected a button interaction');
    const input = { type: 4, custom_id: 'why', label: 'Why (optional)', style: 2, required: false, max_length: 500 };
    // A title past 45 characters, and a row of two inputs, are refused as Discord refuses them.
    const tooLong = await rejectionOf(
      interaction.showModal({ custom_id: 'm', title: 'x'.repeat(46), components: [{ type: 1, components: [input] }] }),
    );
    expect(tooLong).toMatchObject({
      code: 50035,
      rawError: { errors: { data: { title: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } },
    });
    const twoInRow = await rejectionOf(
      interaction.showModal({
        custom_id: 'm',
        title: 'Why?',
        components: [{ type: 1, components: [input, { ...input, custom_id: 'w2' }] }],
      }),
    );
    expect(twoInRow).toMatchObject({ code: 50035 });
    await interaction.showModal({
      custom_id: 'why-modal',
      title: 'Why?',
      components: [{ type: 1, components: [input] }],
    });
    expect(fake.interaction(click.id)?.response?.type).toBe(9);

    const submitted = nextEvent(client, Events.InteractionCreate);
    fake.submitModal({ openedBy: click.id, values: { why: 'it was wrong' } });
    const [submit] = await submitted;
    if (!submit.isModalSubmit()) throw new Error('expected a modal submit');
    expect(submit.customId).toBe('why-modal');
    expect(submit.fields.getTextInputValue('why')).toBe('it was wrong');
    expect(submit.user.id).toBe(DISCORD_IDS.humanUserId);
    expect(submit.message?.id).toBe(answer.id);
    // A modal cannot answer a modal.
    const modalAgain = {
      type: 9,
      data: { custom_id: 'again', title: 'Again?', components: [{ type: 1, components: [input] }] },
    };
    expect(
      await rejectionOf(
        client.rest.post(Routes.interactionCallback(submit.id, submit.token), { body: modalAgain, auth: false }),
      ),
    ).toMatchObject({ code: 50035 });
  });

  it('a modal submit is answered with a private reply', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const channel = await general(client);
    const answer = await channel.send({ content: 'The answer.', components: [approvalRow()] });
    const clicked = nextEvent(client, Events.InteractionCreate);
    const click = fake.clickButton({ messageId: answer.id, customId: 'deny:1' });
    const [interaction] = await clicked;
    if (!interaction.isButton()) throw new Error('expected a button interaction');
    await interaction.showModal({
      custom_id: 'why-modal',
      title: 'Why?',
      components: [{ type: 1, components: [{ type: 4, custom_id: 'why', label: 'Why', style: 1 }] }],
    });
    const submitted = nextEvent(client, Events.InteractionCreate);
    fake.submitModal({ openedBy: click.id, values: { why: '' } });
    const [submit] = await submitted;
    if (!submit.isModalSubmit()) throw new Error('expected a modal submit');
    await submit.reply({ content: 'Thanks.', flags: MessageFlags.Ephemeral });
    const reply = fake.guild.ephemeralMessages.find((m) => m.content === 'Thanks.');
    expect(reply).toBeDefined();
    expect(fake.thread(DISCORD_IDS.generalChannelId).some((m) => m.content === 'Thanks.')).toBe(false);
  });

  it('a slash command is deferred, its first follow-up fills the thinking message, and editReply changes it', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    await client.application.commands.set([
      {
        name: 'ask',
        description: 'Ask the agent',
        options: [
          { type: 3, name: 'question', description: 'What to ask', required: true },
          { type: 6, name: 'for', description: 'Who the answer is for' },
        ],
      },
    ]);
    const registered = fake.rest.callsTo('PUT /applications/:application/commands')[0]!;
    expect(registered.body).toMatchObject([{ name: 'ask', description: 'Ask the agent' }]);

    const received = nextEvent(client, Events.InteractionCreate);
    fake.runSlashCommand({
      name: 'ask',
      options: [
        { type: 3, name: 'question', value: 'what changed?' },
        { type: 6, name: 'for', value: DISCORD_IDS.otherHumanUserId },
      ],
    });
    const [interaction] = await received;
    if (!interaction.isChatInputCommand()) throw new Error('expected a slash command');
    expect(interaction.commandName).toBe('ask');
    expect(interaction.commandId).toBe(fake.guild.commands.get('global')![0]!.id);
    expect(interaction.options.getString('question')).toBe('what changed?');
    expect(interaction.options.getUser('for')?.username).toBe('grace');

    await interaction.deferReply();
    const thinking = fake.thread(DISCORD_IDS.generalChannelId).at(-1)!;
    expect(thinking).toMatchObject({ content: '', flags: 1 << 7, webhook_id: DISCORD_IDS.applicationId });
    const followUp = await interaction.followUp('three files changed');
    expect(followUp.id).toBe(thinking.id);
    await interaction.editReply('three files changed (details in thread)');
    expect(fake.message(DISCORD_IDS.generalChannelId, thinking.id)).toMatchObject({
      content: 'three files changed (details in thread)',
      flags: 0,
    });
    expect(
      fake.rest.calls.map((c) => c.route).filter((r) => r.includes('webhooks') || r.includes('interactions')),
    ).toEqual([
      'POST /interactions/:interaction/:token/callback',
      'POST /webhooks/:application/:token',
      'PATCH /webhooks/:application/:token/messages/:message',
    ]);
  });

  it('starts a thread from a message and posts in it; a second thread on the same message is DiscordAPIError 160004', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const received = nextEvent(client, Events.MessageCreate, (m) => !m.author.bot);
    fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} plan the release` });
    const [question] = await received;

    const thread = await question.startThread({ name: 'plan the release', autoArchiveDuration: 1440 });
    expect(thread.id).toBe(question.id);
    expect(thread.parentId).toBe(DISCORD_IDS.generalChannelId);
    expect(fake.rest.callsTo('POST /channels/:channel/messages/:message/threads')[0]).toMatchObject({
      status: 201,
      body: { name: 'plan the release', type: 11, auto_archive_duration: 1440 },
    });
    await thread.send('On it.');
    expect(fake.transcript(thread.id)).toEqual(['fakebot: On it.']);
    expect(fake.guild.channel(thread.id)).toMatchObject({ message_count: 1 });

    // discord.js' cached message does not know it has a thread now, so the request goes out and Discord refuses it.
    const second = await rejectionOf(question.startThread({ name: 'again' }));
    expect(second).toBeInstanceOf(DiscordAPIError);
    expect(second).toMatchObject({ code: 160004, status: 400 });
  });
});

describe('the rest of what a connector does', () => {
  it('a post with a nonce and enforce_nonce, repeated, returns the first message and creates none; a fetched message has no nonce', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const route = Routes.channelMessages(DISCORD_IDS.generalChannelId);
    const first = (await client.rest.post(route, {
      body: { content: 'card v1', nonce: 'c-abc', enforce_nonce: true },
    })) as { id: string; nonce?: string };
    const again = (await client.rest.post(route, {
      body: { content: 'card v2', nonce: 'c-abc', enforce_nonce: true },
    })) as { id: string; content: string };
    expect(again.id).toBe(first.id);
    expect(again.content).toBe('card v1');
    expect(first.nonce).toBe('c-abc');
    // Without enforce_nonce the nonce is only echoed: a second message is created.
    const loose = (await client.rest.post(route, { body: { content: 'card v3', nonce: 'c-abc' } })) as { id: string };
    expect(loose.id).not.toBe(first.id);
    expect(fake.thread(DISCORD_IDS.generalChannelId).filter((m) => m.content.startsWith('card'))).toHaveLength(2);
    const fetched = (await client.rest.get(Routes.channelMessage(DISCORD_IDS.generalChannelId, first.id))) as Record<
      string,
      unknown
    >;
    expect(fetched).not.toHaveProperty('nonce');
    // Discord takes a nonce of at most 25 characters.
    await expect(client.rest.post(route, { body: { content: 'x', nonce: 'n'.repeat(26) } })).rejects.toMatchObject({
      code: 50035,
    });
  });

  it('a DM arrives with a partial DM channel and the reply goes back to it', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const received = nextEvent(client, Events.MessageCreate, (m) => !m.author.bot);
    const dm = fake.sendDirectMessage({ content: 'can you check the build?' });
    const [message] = await received;
    expect(message.guildId).toBeNull();
    expect(message.channel.isDMBased()).toBe(true);
    expect(message.content).toBe('can you check the build?');

    await message.reply('looking now');
    expect(fake.rest.callsTo('POST /channels/:channel/messages')[0]).toMatchObject({
      params: { channel: dm.channel_id },
      body: { content: 'looking now', message_reference: { message_id: dm.id, fail_if_not_exists: true } },
    });
    expect(fake.transcript(dm.channel_id)).toEqual(['ada: can you check the build?', 'fakebot: looking now']);
  });

  it('reacts, types, edits, uploads a file and reads a thread back, each as the recorded REST call', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const received = nextEvent(client, Events.MessageCreate, (m) => !m.author.bot);
    fake.sendMessage({ channelId: DISCORD_IDS.seededThreadId, content: `${mention(DISCORD_IDS.botUserId)} build it` });
    const [question] = await received;

    const ownReaction = nextEvent(client, Events.MessageReactionAdd, (_r, user) => user.id === DISCORD_IDS.botUserId);
    await question.react('👀');
    expect(fake.rest.callsTo('PUT /channels/:channel/messages/:message/reactions/:emoji/@me')[0]).toMatchObject({
      path: expect.stringContaining('/reactions/%F0%9F%91%80/@me'),
      status: 204,
    });
    expect(fake.guild.reactors(question.id, { id: null, name: '👀' })).toEqual([DISCORD_IDS.botUserId]);
    await ownReaction;

    const thread = question.channel;
    if (!thread.isSendable()) throw new Error('expected a sendable thread');
    await thread.sendTyping();
    expect(fake.rest.callsTo('POST /channels/:channel/typing')[0]).toMatchObject({
      params: { channel: DISCORD_IDS.seededThreadId },
      status: 204,
    });

    const reply = await question.reply('working…');
    await reply.edit('done: 3 files changed');
    expect(fake.message(DISCORD_IDS.seededThreadId, reply.id)).toMatchObject({
      content: 'done: 3 files changed',
      type: 19,
      edited_timestamp: expect.any(String),
    });
    expect(fake.guild.editCount(reply.id)).toBe(1);

    const log = await thread.send({
      content: 'full log attached',
      files: [{ attachment: Buffer.from('line 1\nline 2\n'), name: 'build.log' }],
    });
    const upload = fake.rest.callsTo('POST /channels/:channel/messages').at(-1)!;
    expect(upload.headers['content-type']).toMatch(/^multipart\/form-data/);
    // discord.js puts the JSON in `payload_json` and names each file `files[n]`; `attachments` refers to them by index.
    expect(upload.body).toMatchObject({ content: 'full log attached', attachments: [{ id: '0' }] });
    expect(upload.files).toEqual([
      {
        field: 'files[0]',
        filename: 'build.log',
        size: 14,
        contentType: expect.any(String),
        text: 'line 1\nline 2\n',
        bytes: Buffer.from('line 1\nline 2\n'),
      },
    ]);
    expect(log.attachments.first()?.name).toBe('build.log');

    // History, newest first from Discord, as discord.js fetches it after a restart.
    const history = await thread.messages.fetch({ limit: 3 });
    expect([...history.values()].map((m) => m.content)).toEqual([
      'full log attached',
      'done: 3 files changed',
      `<@${DISCORD_IDS.botUserId}> build it`,
    ]);
    expect(fake.rest.callsTo('GET /channels/:channel/messages')[0]?.query).toEqual({ limit: '3' });
  });

  it('an archived thread reopens when the bot posts, refuses reactions, and a locked one refuses posts with 50083', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const archived = nextEvent(client, Events.ThreadUpdate, (_old, thread) => thread.archived === true);
    fake.setThreadState(DISCORD_IDS.seededThreadId, { archived: true });
    const [, thread] = await archived;

    const refused = await rejectionOf(
      client.rest.put(
        Routes.channelMessageOwnReaction(
          DISCORD_IDS.seededThreadId,
          fake.thread(DISCORD_IDS.seededThreadId)[0]!.id,
          encodeURIComponent('👍'),
        ),
      ),
    );
    expect(refused).toMatchObject({ code: 50083 });

    const reopened = nextEvent(client, Events.ThreadUpdate, (_old, t) => t.archived === false);
    await thread.send('picking this back up');
    await reopened;
    expect(fake.guild.channel(thread.id)).toMatchObject({ thread_metadata: { archived: false } });

    fake.setThreadState(thread.id, { archived: true, locked: true });
    const locked = await rejectionOf(thread.send('one more thing'));
    expect(locked).toMatchObject({ code: 50083, status: 400 });
  });

  it('a scripted 403 surfaces as DiscordAPIError 50013, and two clients with one token both receive every message', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const channel = await general(client);
    fake.rest.failNext('POST /channels/:channel/messages', {
      status: 403,
      code: 50013,
      message: 'Missing Permissions',
    });
    const denied = await rejectionOf(channel.send('hello'));
    expect(denied).toBeInstanceOf(DiscordAPIError);
    expect(denied).toMatchObject({ code: 50013, status: 403, method: 'POST' });

    // A second process with the same token: Discord delivers to both sessions (the duplicate-reply hazard).
    const twin = await startBot(fake);
    const first = nextEvent(client, Events.MessageCreate);
    const second = nextEvent(twin, Events.MessageCreate);
    fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} who answers?` });
    expect((await first)[0].content).toBe((await second)[0].content);
    expect(fake.gateway.activeSessions).toBe(2);
  });
});

describe('the fake fails the way Discord does', () => {
  it('a send answered with 429 and retry_after is retried by discord.js after the wait: one 429, one success', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const channel = await general(client);
    const rateLimited = new Promise((resolve) => client.rest.once('rateLimited', resolve));
    fake.rest.rateLimitNext('POST /channels/:channel/messages', 1, { retryAfterMs: 300 });

    const message = await channel.send('after the wait');
    const calls = fake.rest.callsTo('POST /channels/:channel/messages');
    expect(calls.map((c) => c.status)).toEqual([429, 200]);
    expect(calls[0]!.answer).toEqual({ message: 'You are being rate limited.', retry_after: 0.3, global: false });
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(280);
    // discord.js adds its `rest.offset` (50 ms by default) to the wait it reports and sleeps.
    expect(await rateLimited).toMatchObject({ global: false, route: '/channels/:id/messages' });
    expect(fake.transcript(DISCORD_IDS.generalChannelId).at(-1)).toBe('fakebot: after the wait');
    expect(message.content).toBe('after the wait');

    // A global limit (X-RateLimit-Global) is waited out the same way.
    fake.rest.rateLimitNext('POST /channels/:channel/messages', 1, { retryAfterMs: 200, global: true });
    await channel.send('after the global wait');
    expect(fake.rest.callsTo('POST /channels/:channel/messages').map((c) => c.status)).toEqual([429, 200, 429, 200]);
  });

  it('after op 7 the client resumes on resume_gateway_url and receives, exactly once, a message sent while it was away', async () => {
    const fake = await startFake();
    const client = await startBot(fake);
    const seen: string[] = [];
    client.on(Events.Raw, (packet: { t: string | null; d: { id?: string } }) => {
      if (packet.t === 'MESSAGE_CREATE' && packet.d.id) seen.push(packet.d.id);
    });
    const created: Message[] = [];
    client.on(Events.MessageCreate, (m) => void created.push(m));
    const resumed = nextEvent(client, Events.ShardResume);

    await fake.forceReconnect();
    expect(fake.gateway.connections[0]).toMatchObject({ closedBy: 'client', closeCode: 4200 });
    const missed = fake.sendMessage({ content: 'sent while the bot was reconnecting' });
    await fake.gateway.waitForResumed(1);
    await resumed;
    await until(() => (created.length ? true : undefined), 'the replayed messageCreate');

    expect(fake.gateway.connections[1]).toMatchObject({ path: '/gateway/resume', started: 'resume' });
    const resume = fake.gateway.received.find((f) => f.op === 6)!.d as { seq: number; session_id: string };
    expect(resume.session_id).toBe(fake.gateway.connections[0]!.sessionId);
    expect(resume.seq).toBe(2); // READY (1) and GUILD_CREATE (2) were all it had seen
    expect(created.map((m) => m.content)).toEqual(['sent while the bot was reconnecting']);
    expect(seen).toEqual([missed.id]);
    expect(fake.gateway.connections.filter((c) => c.started === 'identify')).toHaveLength(1);

    // Still live afterwards.
    const after = nextEvent(client, Events.MessageCreate);
    fake.sendMessage({ content: 'and after' });
    expect((await after)[0].content).toBe('and after');
  });

  it('a connection the server closes with 4000, or one whose heartbeats go unanswered, is resumed', async () => {
    const fake = await startFake({ heartbeatIntervalMs: 200 });
    const client = await startBot(fake);

    let resumed = nextEvent(client, Events.ShardResume);
    await fake.gateway.closeConnections(4000);
    await resumed;
    expect(fake.gateway.connections[1]).toMatchObject({ path: '/gateway/resume', started: 'resume' });

    // No ACK before the next beat: discord.js calls it a zombie, closes (4200) and resumes.
    fake.gateway.ackHeartbeats = false;
    await until(() => (fake.gateway.connections[1]!.closedAt ? true : undefined), 'the zombie connection to close');
    fake.gateway.ackHeartbeats = true;
    resumed = nextEvent(client, Events.ShardResume);
    await resumed;
    expect(fake.gateway.connections[1]).toMatchObject({ closedBy: 'client', closeCode: 4200 });
    expect(fake.gateway.identifyCount).toBe(1);
  });

  it('op 9 Invalid Session: resumable resumes on the same socket; not resumable re-identifies and is ready again', async () => {
    const fake = await startFake();
    const client = await startBot(fake, { fastReidentify: true });

    const resumed = nextEvent(client, Events.ShardResume);
    fake.gateway.invalidateSession(true);
    await resumed;
    expect(fake.gateway.resumeCount).toBe(1);
    expect(fake.gateway.connections).toHaveLength(1);
    expect(fake.gateway.received.filter((f) => f.op === 6).map((f) => f.connection)).toEqual([0]);

    fake.gateway.invalidateSession(false);
    await fake.gateway.waitForIdentified(2);
    expect(fake.gateway.connections.at(-1)).toMatchObject({ path: '/gateway', started: 'identify' });
    const received = nextEvent(client, Events.MessageCreate);
    fake.sendMessage({ content: 'hello again' });
    expect((await received)[0].content).toBe('hello again');
  });
});
