// What a Discord user sees, end to end: the real discord.js client against the fake Discord,
// the real core and the real OpenAI SDK against a fake server.
import type { APIMessage } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeDiscord } from '../fakes/discord-server.js';
import { waitFor } from '../support/engine-kit.js';
import {
  BARRIER,
  barrier,
  botMessages,
  bootDiscordBot,
  buttonsOf,
  DISCORD_IDS,
  waitForBotMessage,
  type DiscordBot,
} from './discord-harness.js';

const GENERAL = DISCORD_IDS.generalChannelId;
const ADA = DISCORD_IDS.humanUserId;
const GRACE = DISCORD_IDS.otherHumanUserId;

let bot: DiscordBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

/** Every message the bot posted or edited said it may ping nobody. */
function expectNoPingsAllowed(b: DiscordBot): void {
  const sends = b.fake.rest.calls.filter(
    (c) => (c.method === 'POST' || c.method === 'PATCH') && /\/messages(\/\d+)?$|\/webhooks\//.test(c.path),
  );
  expect(sends.length).toBeGreaterThan(0);
  for (const call of sends)
    expect((call.body as { allowed_mentions?: { parse?: unknown } }).allowed_mentions?.parse, `${call.route}`).toEqual(
      [],
    );
}

type Body = { messages: { role: string; content?: unknown }[] };

describe('a mention starts a conversation in a thread', () => {
  it('starts a thread named from the request on the message, and the answer appears there', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('Hello Ada! The build is green.');
    const asked = bot.mention('how is the build?');
    const answer = await waitForBotMessage(bot, asked.id, (m) => m.content.includes('The build is green.'));
    await bot.idle();
    expect(answer.channel_id).toBe(asked.id);
    expect(bot.fake.rest.callsTo('POST /channels/:channel/messages/:message/threads')[0]).toMatchObject({
      params: { channel: GENERAL, message: asked.id },
      body: { name: 'how is the build?' },
      status: 201,
    });
    // The model got the request without the bot's mention, with where it came from.
    const user = (bot.llm.requests[0]!.body as Body).messages.find((m) => m.role === 'user')!;
    expect(String(user.content)).toMatch(/^how is the build\?/);
    const sessionId = (await bot.core.store.listSessionIds())[0]!;
    expect(await bot.core.store.getSession(sessionId)).toMatchObject({
      key: { platform: 'discord', workspace: DISCORD_IDS.guildId, channel: GENERAL, thread: asked.id },
    });
    // The person's message got its mark; the thread showed the bot typing.
    expect(bot.fake.guild.reactors(asked.id, { id: null, name: '👀' })).toEqual([DISCORD_IDS.botUserId]);
    expect(bot.fake.rest.callsTo('POST /channels/:channel/typing').length).toBeGreaterThan(0);
    expectNoPingsAllowed(bot);
  });

  it('a reply in the thread starts the next turn without a mention; other threads and channels are ignored', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('First answer.');
    const asked = bot.mention('first question');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('First answer.'));
    await bot.idle();

    bot.fake.sendMessage({ content: 'unrelated chatter', channelId: DISCORD_IDS.seededThreadId });
    bot.fake.sendMessage({ content: 'more chatter in the channel' });
    bot.llm.replyText('Second answer.');
    const reply = bot.fake.sendMessage({ channelId: asked.id, content: 'and a follow-up' });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Second answer.'));
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(2);
    const last = (bot.llm.requests[1]!.body as Body).messages.at(-1)!;
    expect(String(last.content)).toContain('and a follow-up');
    expect(bot.fake.guild.reactors(reply.id, { id: null, name: '👀' })).toEqual([DISCORD_IDS.botUserId]);
  });

  it('a reply while a text answer streams: the answer to it is a new message below the reply, not glued onto the first', async () => {
    bot = await bootDiscordBot();
    const held = bot.llm.replyTextHeld('The first answer, to the end.');
    bot.llm.replyText('You said: actually, shorter.');
    const asked = bot.mention('tell me something');
    await waitForBotMessage(bot, asked.id, (m) => m.content.length > 0);
    const steer = bot.fake.sendMessage({ channelId: asked.id, content: 'actually, shorter' });
    await waitFor(() => bot!.fake.guild.reactors(steer.id, { id: null, name: '👀' }).length === 1);
    held.release();
    const second = await waitForBotMessage(bot, asked.id, (m) => m.content.includes('You said'));
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(2);
    const first = botMessages(bot, asked.id).find((m) => m.content.includes('The first answer'))!;
    expect(first.content).not.toContain('You said');
    // Discord ids grow with time: the first answer was posted before the reply, the second after it.
    expect(BigInt(first.id) < BigInt(steer.id)).toBe(true);
    expect(BigInt(second.id) > BigInt(steer.id)).toBe(true);
  });

  it('a reply while the bot works steers the running turn', async () => {
    bot = await bootDiscordBot();
    // The first call is held until the reply is queued: the reply lands while the bot works, however slow the machine.
    const firstCall = bot.llm.replyAnswerHeld({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    bot.llm.replyText('Listed, in French.');
    const asked = bot.mention('list the files');
    await waitFor(() => bot!.llm.requests.length === 1);
    const steer = bot.fake.sendMessage({ channelId: asked.id, content: 'answer in French' });
    await waitFor(() => bot!.fake.guild.reactors(steer.id, { id: null, name: '👀' }).length === 1);
    firstCall.release();
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Listed, in French.'));
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(2);
    expect(JSON.stringify(bot.llm.requests[1]!.body)).toContain('answer in French');
    await waitFor(() => bot!.fake.guild.reactors(steer.id, { id: null, name: '✅' }).length === 1);
  });

  it("a DM from someone in none of the bot's servers is refused under ALLOWED_USERS=*, unless listed by id", async () => {
    const STRANGER = '900000000000000001';
    const fake = await new FakeDiscord({
      users: [{ id: STRANGER, username: 'stranger', globalName: 'Stranger', outsider: true }],
    }).start();
    try {
      bot = await bootDiscordBot({ fake });
      const dm = bot.fake.sendDirectMessage({ content: 'read your secrets', authorId: STRANGER });
      await waitForBotMessage(bot, dm.channel_id, (m) =>
        m.content.includes('not a member of the workspace this bot belongs to'),
      );
      expect(bot.llm.requests).toHaveLength(0);
      await bot.stop();

      bot = await bootDiscordBot({ fake, env: { ALLOWED_USERS: `${ADA},${STRANGER}` } });
      bot.llm.replyText('Hello, listed guest.');
      const again = bot.fake.sendDirectMessage({ content: 'hello', authorId: STRANGER });
      await waitForBotMessage(bot, again.channel_id, (m) => m.content.includes('Hello, listed guest.'));
      await bot.idle();
    } finally {
      await bot?.stop();
      bot = undefined;
      await fake.stop();
    }
  });

  it('with DISCORD_GUILD_ID, a mention in another server is from an outsider', async () => {
    bot = await bootDiscordBot({ env: { DISCORD_GUILD_ID: '123456789012345678' } });
    const asked = bot.mention('hello from a server the bot was not set up for');
    await waitForBotMessage(bot, bot.fake.guild.dmChannelFor(ADA).id, (m) =>
      m.content.includes('not a member of the workspace this bot belongs to'),
    );
    expect(bot.llm.requests).toHaveLength(0);
    expect(bot.fake.guild.channel(asked.id)).toBeUndefined(); // no thread started for it
  });

  it('a DM is its own conversation', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('Hi in private.');
    const dm = bot.fake.sendDirectMessage({ content: 'hello bot' });
    await waitForBotMessage(bot, dm.channel_id, (m) => m.content.includes('Hi in private.'));
    await bot.idle();
    expect(bot.fake.rest.callsTo('POST /channels/:channel/messages/:message/threads')).toHaveLength(0);
    expectNoPingsAllowed(bot);
  });

  it('the same MESSAGE_CREATE delivered twice (a gateway replay) starts one turn and one thread', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('Only once.');
    const asked = bot.mention('do it once');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Only once.'));
    await bot.idle();
    // Discord sends the very same event again (a Resume replays what it thinks was missed, or
    // a restarted bot gets it again). discord.js skips a message it has cached, so forget it
    // first, as a restarted process would have.
    const general = bot.connector.client.channels.cache.get(GENERAL);
    if (!general?.isTextBased()) throw new Error('expected #general in the cache');
    general.messages.cache.delete(asked.id);
    const replay = bot.fake.gateway.dispatch.bind(bot.fake.gateway);
    const { gatewayMessage } = await import('../fakes/discord-payloads.js');
    replay(
      'MESSAGE_CREATE',
      gatewayMessage(bot.fake.guild.requireMessage(GENERAL, asked.id), DISCORD_IDS.guildId, (id) =>
        bot!.fake.guild.user(id),
      ),
    );
    // The replay got as far as asking for the thread again (refused, below); then a later mention, answered.
    await waitFor(() => bot!.fake.rest.callsTo('POST /channels/:channel/messages/:message/threads').length === 2);
    await barrier(bot);
    expect(bot.llm.requests).toHaveLength(2);
    expect(String((bot.llm.requests[1]!.body as Body).messages.at(-1)!.content)).toContain(BARRIER.ask);
    expect(botMessages(bot, asked.id).filter((m) => m.content.includes('Only once.'))).toHaveLength(1);
    // A second thread on the message was refused by Discord (160004): the first one is used.
    expect(bot.fake.rest.callsTo('POST /channels/:channel/messages/:message/threads').map((c) => c.status)).toEqual([
      201, 400, 201,
    ]);
  });

  it('@everyone, @here, a role and <!channel>-like text from the model never ping', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText(`Attention @everyone and @here, <@&${DISCORD_IDS.teamRoleId}> too: <!channel>`);
    const asked = bot.mention('announce it');
    const answer = await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Attention'));
    await bot.idle();
    expect(answer.content).not.toMatch(/@everyone|@here|<@&\d/);
    expect(answer.mention_everyone).toBe(false);
    expect(answer.mention_roles).toEqual([]);
    expectNoPingsAllowed(bot);
  });

  it("a bot's message, even one that mentions this bot, starts nothing", async () => {
    bot = await bootDiscordBot();
    bot.fake.sendMessage({
      content: `<@${DISCORD_IDS.botUserId}> hello from a bot`,
      authorId: DISCORD_IDS.otherBotUserId,
    });
    await barrier(bot);
    expect(bot.llm.requests).toHaveLength(1);
    expect(String((bot.llm.requests[0]!.body as Body).messages.at(-1)!.content)).toContain(BARRIER.ask);
    expect(bot.fake.rest.callsTo('POST /channels/:channel/messages/:message/threads')).toHaveLength(1);
  });
});

describe('tool cards and approvals', () => {
  it('a call needing approval shows a card with buttons; a refused click is answered privately; Approve runs it and says who', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'a.txt', content: 'hello\u202Eworld' } }]);
    bot.llm.replyText('Written.');
    const asked = bot.mention('write a.txt');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    expect(card.content).toContain('write_file');
    expect(card.content).toContain('a.txt');
    // Every character is shown, the hidden one revealed.
    expect(card.content).toContain('hello⟨U+202E⟩world');
    const buttons = buttonsOf(card);
    expect(buttons.map((b) => b.label)).toEqual(expect.arrayContaining(['Approve', 'Deny']));
    for (const button of buttons) expect(button.customId.length).toBeLessThanOrEqual(100);
    const approve = buttons.find((b) => b.label === 'Approve')!;

    // grace did not start the thread: refused, privately, and the card still waits.
    const refused = bot.fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: approve.customId,
      userId: GRACE,
    });
    await waitFor(() => bot!.fake.interaction(refused.id)!.followUpIds.length === 1);
    const followUp = bot.fake.rest.callsTo('POST /webhooks/:application/:token').at(-1)!;
    expect(followUp.body).toMatchObject({
      flags: 64,
      content: expect.stringMatching(/Only the person who started this thread can approve this/),
    });
    expect(buttonsOf(bot.fake.message(asked.id, card.id)!).length).toBeGreaterThan(0);

    const click = bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: approve.customId });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Written.'));
    await bot.idle();
    // Acknowledged at once (deferUpdate: type 6).
    expect(
      bot.fake.rest
        .callsTo('POST /interactions/:interaction/:token/callback')
        .find((c) => c.params.interaction === click.id),
    ).toMatchObject({ status: 204, body: { type: 6 } });
    const final = bot.fake.message(asked.id, card.id)!;
    expect(buttonsOf(final)).toEqual([]);
    expect(final.content).toContain(`Approved by <@${ADA}>`);
    expect(final.content).toContain('Done');
    expectNoPingsAllowed(bot);
  });

  it('a call too long for a card is attached in full as a file before the buttons', async () => {
    bot = await bootDiscordBot();
    const content = `${'line of text\n'.repeat(200)}the end`;
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'big.txt', content } }]);
    bot.llm.replyText('Not written.');
    const asked = bot.mention('write big.txt');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    expect(card.content).toContain('attached file');
    const upload = bot.fake.rest.callsTo('POST /channels/:channel/messages').find((c) => c.files.length > 0)!;
    expect(upload.files[0]).toMatchObject({ filename: expect.stringMatching(/arguments\.txt$/) });
    expect(upload.at).toBeLessThan(
      bot.fake.rest
        .callsTo('PATCH /channels/:channel/messages/:message')
        .find((c) => c.params.message === card.id && JSON.stringify(c.body).includes('custom_id'))?.at ?? Infinity,
    );
    const deny = buttonsOf(card).find((b) => b.label === 'Deny')!;
    bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: deny.customId });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Not written.'));
    await bot.idle();
  });
});

describe('stopping', () => {
  it("🛑 on the thread's starter message stops a stalled answer and the thread says who", async () => {
    bot = await bootDiscordBot();
    bot.llm.replyStall();
    const asked = bot.mention('think forever');
    await waitFor(() => bot!.llm.requests.length === 1);
    await waitFor(() => bot!.fake.guild.channel(asked.id) !== undefined);
    bot.fake.react({ messageId: asked.id, emoji: '🛑' });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Stopped'));
    await bot.idle();
    expect(botMessages(bot, asked.id).some((m) => m.content.includes(`Stopped by <@${ADA}>`))).toBe(true);
    await bot.llm.waitForClientClose(0);
  });

  it('🛑 from someone with no part in the thread is refused privately (a DM) and the turn goes on', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyStall();
    const asked = bot.mention('work');
    await waitFor(() => bot!.llm.requests.length === 1);
    await waitFor(() => bot!.fake.guild.channel(asked.id) !== undefined);
    bot.fake.react({ messageId: asked.id, emoji: '🛑', userId: GRACE });
    await waitFor(() => bot!.fake.rest.callsTo('POST /users/@me/channels').length === 1);
    const dmChannel = bot.fake.guild.dmChannelFor(GRACE).id;
    await waitForBotMessage(bot, dmChannel, (m) => m.content.length > 0);
    expect(bot.core.manager.isWorking((await bot.core.store.listSessionIds())[0]!)).toBe(true);
    bot.fake.react({ messageId: asked.id, emoji: '🛑' });
    await bot.idle();
  });
});

describe('long answers and failures', () => {
  it('an answer longer than a message rolls over to new ones, each under 2,000 characters with balanced code fences', async () => {
    bot = await bootDiscordBot();
    const block = `\`\`\`ts\n${'const value = compute(42);\n'.repeat(40)}\`\`\``;
    const text = `Intro paragraph.\n\n${block}\n\nMiddle words.\n\n${block}\n\nThe end.`;
    bot.llm.replyText(text, { chunkSize: 97, delayMs: 2 });
    const asked = bot.mention('write a lot');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('The end.'), 15_000);
    await bot.idle();
    const answers = botMessages(bot, asked.id).filter((m) => !m.content.startsWith('-#'));
    expect(answers.length).toBeGreaterThanOrEqual(2);
    for (const message of answers) {
      expect(message.content.length).toBeLessThanOrEqual(2_000);
      expect((message.content.match(/^```/gm) ?? []).length % 2, message.content).toBe(0);
    }
    const joined = answers.map((m) => m.content).join('\n');
    expect((joined.match(/const value = compute\(42\);/g) ?? []).length).toBe(80);
  });

  it('a provider error posts a Retry button that works, even clicked the moment it shows', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyError(500).replyError(500).replyError(500);
    bot.llm.replyText('Worked this time.');
    // Ada clicks as soon as the note is in the thread, before the bot has heard back from
    // posting it (its turn still winding down); the post's answer waits until the click is
    // acknowledged (deferred), which the bot does before anything else.
    const clicked = new Promise<{ noteId: string; clickId: string }>((resolve) => {
      bot!.fake.rest.onceAnswered(
        'POST /channels/:channel/messages',
        (call) => JSON.stringify(call.body).includes('Retry'),
        async (call) => {
          const note = call.answer as APIMessage;
          const click = bot!.fake.clickButton({
            channelId: note.channel_id,
            messageId: note.id,
            customId: buttonsOf(note)[0]!.customId,
          });
          await waitFor(() => bot!.fake.interaction(click.id)?.response !== undefined);
          resolve({ noteId: note.id, clickId: click.id });
        },
      );
    });
    const asked = bot.mention('question');
    const { noteId, clickId } = await clicked;
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Worked this time.'), 15_000);
    await bot.idle();
    await waitFor(() => buttonsOf(bot!.fake.message(asked.id, noteId)!).length === 0);
    expect(bot.fake.message(asked.id, noteId)!.content).toContain(`retried by <@${ADA}>`);
    // Nothing was said to ada privately ("I am already working in this thread."): the click worked.
    expect(bot.fake.interaction(clickId)!.followUpIds).toEqual([]);
  });
});

describe('more of what a thread does', () => {
  it('a reply while a call waits for approval declines it and steers', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'prod.txt', content: 'x' } }]);
    bot.llm.replyText('Using staging instead.');
    const asked = bot.mention('write the prod file');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    bot.fake.sendMessage({ channelId: asked.id, content: 'no, use staging' });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Using staging instead.'));
    await bot.idle();
    const final = bot.fake.message(asked.id, card.id)!;
    expect(buttonsOf(final)).toEqual([]);
    expect(final.content).toContain('Declined: answered by a reply');
  });

  it('a click on a card already decided is answered privately', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }]);
    bot.llm.replyText('Denied, fine.');
    const asked = bot.mention('write a.txt');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    const [approve, deny] = [
      buttonsOf(card).find((b) => b.label === 'Approve')!,
      buttonsOf(card).find((b) => b.label === 'Deny')!,
    ];
    bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: deny.customId });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Denied, fine.'));
    await bot.idle();
    // A second client (or a slow one) still shows the old buttons.
    const stale = bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: approve.customId });
    await waitFor(() => bot!.fake.interaction(stale.id)!.followUpIds.length === 1);
    expect(bot.fake.rest.callsTo('POST /webhooks/:application/:token').at(-1)!.body).toMatchObject({
      flags: 64,
      content: `Already denied by <@${ADA}>.`,
    });
    expect(bot.llm.requests).toHaveLength(2);
  });

  it("🛑 on one of the bot's own messages in the thread stops the turn (found through the stored message reference)", async () => {
    bot = await bootDiscordBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }]);
    const asked = bot.mention('write a.txt');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    bot.fake.react({ channelId: asked.id, messageId: card.id, emoji: '🛑' });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Stopped by'));
    await bot.idle();
    expect(buttonsOf(bot.fake.message(asked.id, card.id)!)).toEqual([]);
  });

  it('a 5,000-character answer with code blocks, with a 429 on its second message: every 429 waited out, nothing lost or doubled', async () => {
    bot = await bootDiscordBot();
    const block = (n: number) =>
      `\`\`\`py\n${Array.from({ length: 30 }, (_, i) => `print("block ${n} line ${i}", "and some words to make it long")`).join('\n')}\n\`\`\``;
    const text = [1, 2, 3, 4, 5].map((n) => `Part ${n} explains the next block.\n\n${block(n)}`).join('\n\n');
    expect(text.length).toBeGreaterThan(5_000);
    // The first message post is the answer's first; the next one is its second.
    bot.llm.replyText(text, { chunkSize: 200, delayMs: 5 });
    const asked = bot.mention('explain');
    await waitFor(() => bot!.fake.rest.callsTo('POST /channels/:channel/messages').length >= 1, 8_000);
    bot.fake.rest.rateLimitNext('POST /channels/:channel/messages', 1, { retryAfterMs: 300 });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('print("block 5 line 29"'), 15_000);
    await bot.idle();
    expect(bot.fake.rest.callsTo('POST /channels/:channel/messages').some((c) => c.status === 429)).toBe(true);
    const answers = botMessages(bot, asked.id).filter((m) => !m.content.startsWith('-#'));
    expect(answers.length).toBeGreaterThanOrEqual(3);
    const joined = answers.map((m) => m.content).join('\n');
    for (const message of answers) {
      expect(message.content.length).toBeLessThanOrEqual(2_000);
      expect((message.content.match(/^```/gm) ?? []).length % 2, message.content).toBe(0);
    }
    for (let n = 1; n <= 5; n++) {
      for (let i = 0; i < 30; i++)
        expect(joined.split(`print("block ${n} line ${i}",`).length - 1, `block ${n} line ${i}`).toBe(1);
    }
  });
});

describe('many threads', () => {
  it('10 threads at once: each gets its own thread and its own answer', async () => {
    bot = await bootDiscordBot({ env: { THREADS_PER_USER: '20', TURNS_PER_USER_PER_MINUTE: '30' } });
    bot.llm.answerWith(
      (request) => {
        const user = (request.body as Body).messages.filter((m) => m.role === 'user').at(-1);
        return { text: `Answer to: ${String(user?.content).split('\n')[0]}` };
      },
      { delayMs: 5 },
    );
    const asked = Array.from({ length: 10 }, (_, i) => bot!.mention(`task number ${i}`));
    for (const [i, message] of asked.entries())
      await waitForBotMessage(bot, message.id, (m) => m.content.includes(`Answer to: task number ${i}`), 15_000);
    await bot.idle();
    expect(bot.fake.rest.callsTo('POST /channels/:channel/messages/:message/threads')).toHaveLength(10);
    for (const [i, message] of asked.entries()) {
      const answers = botMessages(bot, message.id).filter((m) => m.content.includes('Answer to:'));
      expect(answers.map((m) => m.content)).toEqual([expect.stringContaining(`task number ${i}`)]);
    }
  });
});

describe('questions and plans', () => {
  it('ask_user shows the question with one button per option; a click answers it', async () => {
    bot = await bootDiscordBot();
    const long = `the ${'very '.repeat(25)}long option`;
    bot.llm.replyToolCalls([
      {
        name: 'ask_user',
        arguments: { question: 'Which environment should I deploy to?', options: ['staging', long] },
      },
    ]);
    bot.llm.replyText('Deploying to the long one.');
    const asked = bot.mention('deploy');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    expect(card.content).toContain('Which environment should I deploy to?');
    const buttons = buttonsOf(card);
    expect(buttons.map((b) => b.label)).toEqual(['staging', long.slice(0, 80)]);
    for (const button of buttons) expect(button.customId.length).toBeLessThanOrEqual(100);
    // The long option is carried by its index and read back from the store.
    bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: buttons[1]!.customId });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Deploying to the long one.'));
    await bot.idle();
    const tool = (bot.llm.requests[1]!.body as { messages: { role: string; content?: unknown }[] }).messages.find(
      (m) => m.role === 'tool',
    )!;
    expect(JSON.parse(String(tool.content))).toEqual({ answer: long });
  });
});
