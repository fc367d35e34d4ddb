// 👍 / 👎 on answers on Discord, through the real bot: the buttons are under a completed turn's
// final answer only; a click votes on the clicked message's answer (never on what the button
// carries), once per person; a 👎 opens a modal whose optional reason is kept; someone who may
// not use the bot is refused privately; `/feedback` is a registered slash command.
import type { APIMessage } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/engine-kit.js';
import {
  botMessages,
  bootDiscordBot,
  buttonsOf,
  DISCORD_IDS,
  waitForBotMessage,
  type DiscordBot,
} from './discord-harness.js';

const ADA = DISCORD_IDS.humanUserId;
const GRACE = DISCORD_IDS.otherHumanUserId;

let bot: DiscordBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const THUMBS = ['👍', '👎'];
const hasFeedback = (m: APIMessage): boolean => buttonsOf(m).some((b) => THUMBS.includes(b.label));

/** A finished turn's final answer, found by its text, once its buttons are on. */
async function answered(b: DiscordBot, thread: string, text: string): Promise<APIMessage> {
  return waitForBotMessage(b, thread, (m) => m.content.includes(text) && hasFeedback(m));
}

function click(b: DiscordBot, thread: string, message: APIMessage, label: '👍' | '👎', userId = ADA): string {
  const button = buttonsOf(message).find((x) => x.label === label)!;
  return b.fake.clickButton({ channelId: thread, messageId: message.id, customId: button.customId, userId }).id;
}

/** The private answer to an interaction: its reply (an ephemeral message), once it has words. */
async function privateAnswer(b: DiscordBot, interactionId: string): Promise<string> {
  let content = '';
  await waitFor(() => {
    const interaction = b.fake.interaction(interactionId)!;
    const ids = [interaction.originalMessageId, ...interaction.followUpIds].filter(
      (id): id is string => id !== undefined,
    );
    const reply = b.fake.guild.ephemeralMessages.find((m) => ids.includes(m.id) && m.content);
    content = reply?.content ?? '';
    return content !== '';
  }, 8_000);
  return content;
}

describe('feedback on answers', () => {
  it("only a completed turn's final answer carries 👍 / 👎 (not the text before a tool call, a card, or a stopped answer)", async () => {
    bot = await bootDiscordBot();
    bot.llm.replyAnswer({ text: 'Let me look first.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    bot.llm.replyText('Here is what I found.');
    const asked = bot.mention('what is in the workspace?');
    const final = await answered(bot, asked.id, 'Here is what I found.');
    await bot.idle();
    const buttons = buttonsOf(final);
    expect(buttons.map((b) => b.label)).toEqual(THUMBS);
    expect((final.components![0] as { components: { style: number }[] }).components.map((b) => b.style)).toEqual([
      2, 2,
    ]);
    // Nothing else in the thread offers them: the text before the tool call, the tool's card.
    expect(
      botMessages(bot, asked.id)
        .filter(hasFeedback)
        .map((m) => m.id),
    ).toEqual([final.id]);

    // A stopped turn's partial answer offers none.
    bot.llm.replyStallAfter(3);
    bot.fake.sendMessage({ channelId: asked.id, content: 'and now think forever' });
    await waitFor(() => bot!.llm.requests.length === 3);
    await waitFor(() => botMessages(bot!, asked.id).length > 3);
    bot.fake.react({ messageId: asked.id, emoji: '🛑' });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Stopped by'));
    await bot.idle();
    expect(
      botMessages(bot, asked.id)
        .filter(hasFeedback)
        .map((m) => m.id),
    ).toEqual([final.id]);
  });

  it('one person clicking 👍 twice counts once; a second person counts again; each is answered privately', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('The build is green.');
    const asked = bot.mention('how is the build?');
    const final = await answered(bot, asked.id, 'The build is green.');
    await bot.idle();

    expect(await privateAnswer(bot, click(bot, asked.id, final, '👍'))).toBe('Thanks for the 👍.');
    expect(await privateAnswer(bot, click(bot, asked.id, final, '👍'))).toBe('Your 👍 was already recorded.');
    expect(await bot.core.feedback.totals()).toMatchObject({
      up: 1,
      down: 0,
      byModel: [{ model: 'openai:gpt-4.1', up: 1, down: 0 }],
    });
    expect(await privateAnswer(bot, click(bot, asked.id, final, '👍', GRACE))).toBe('Thanks for the 👍.');
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 2, down: 0 });
    // Nothing was said in the thread: the answers were private.
    expect(bot.fake.thread(asked.id).filter((m) => /👍/.test(m.content))).toEqual([]);
  });

  it("👎 opens a modal; its reason is recorded with the vote (which replaces the person's 👍)", async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('The answer is 41.');
    const asked = bot.mention('what is 6 times 7?');
    const final = await answered(bot, asked.id, 'The answer is 41.');
    await bot.idle();
    await privateAnswer(bot, click(bot, asked.id, final, '👍'));

    const down = click(bot, asked.id, final, '👎');
    await waitFor(() => bot!.fake.interaction(down)?.response?.type === 9);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 0, down: 1 });
    const modal = bot.fake.interaction(down)!.response!.data as {
      components: { components: { required?: boolean }[] }[];
    };
    expect(modal.components[0]!.components[0]!.required).toBe(false);

    const submit = bot.fake.submitModal({ openedBy: down, values: { reason: 'It is 42, not 41.' } });
    expect(await privateAnswer(bot, submit.id)).toMatch(/reason are recorded/);
    const totals = await bot.core.feedback.totals();
    expect(totals).toMatchObject({ up: 0, down: 1 });
    expect(totals.reasons.map((r) => r.reason)).toEqual(['It is 42, not 41.']);
  });

  it('a click from someone who may not use the bot is refused privately and not counted; a forged button on another message votes on nothing', async () => {
    bot = await bootDiscordBot({ env: { ALLOWED_USERS: ADA } });
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }]);
    bot.llm.replyText('Written.');
    const asked = bot.mention('write a.txt');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).some((b) => b.label === 'Approve'));
    bot.fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: buttonsOf(card).find((b) => b.label === 'Approve')!.customId,
    });
    const final = await answered(bot, asked.id, 'Written.');
    await bot.idle();

    expect(await privateAnswer(bot, click(bot, asked.id, final, '👍', GRACE))).toMatch(
      /not allowed|may not|not on the list|ALLOWED_USERS|access/i,
    );
    const refusedDown = click(bot, asked.id, final, '👎', GRACE);
    expect(await privateAnswer(bot, refusedDown)).toMatch(/not allowed|may not|not on the list|ALLOWED_USERS|access/i);
    expect(bot.fake.interaction(refusedDown)!.response!.type).not.toBe(9);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 0, down: 0 });

    // The 👍 button's custom id on the card (not an answer): the clicked message decides, so nothing is recorded.
    const forged = bot.fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: buttonsOf(final).find((b) => b.label === '👍')!.customId,
    });
    expect(await privateAnswer(bot, forged.id)).toMatch(/can no longer take feedback/);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 0, down: 0 });
  });

  it('/feedback is a registered slash command, run by the shared command runner', async () => {
    bot = await bootDiscordBot({ env: { DISCORD_GUILD_ID: DISCORD_IDS.guildId } });
    const registered = bot.fake.rest.callsTo('PUT /applications/:application/guilds/:guild/commands')[0]!;
    expect(
      (registered.body as { name: string; description: string }[]).find((c) => c.name === 'feedback')?.description,
    ).toMatch(/👍/);
    bot.llm.replyText('Hi.');
    const asked = bot.mention('hello');
    await answered(bot, asked.id, 'Hi.');
    await bot.idle();
    const run = bot.fake.runSlashCommand({ name: 'feedback', channelId: asked.id });
    expect(await privateAnswer(bot, run.id)).toMatch(/only the bot admins/i);
  });

  it('/feedback shows an admin the totals', async () => {
    bot = await bootDiscordBot({ env: { DISCORD_GUILD_ID: DISCORD_IDS.guildId, ADMINS: GRACE } });
    bot.llm.replyText('Here it is.');
    const asked = bot.mention('hello');
    const answer = await answered(bot, asked.id, 'Here it is.');
    await bot.idle();
    await privateAnswer(bot, click(bot, asked.id, answer, '👍'));
    await privateAnswer(bot, click(bot, asked.id, answer, '👍', GRACE));
    const run = bot.fake.runSlashCommand({ name: 'feedback', channelId: asked.id, userId: GRACE });
    const totals = await privateAnswer(bot, run.id);
    expect(totals).toMatch(/2 👍/);
    expect(totals).toMatch(/0 👎/);
  });
});
