// Compact progress on Discord (TOOL_DISPLAY=compact), through the real bot: a turn's tool calls
// are steps of one progress message edited in place, not a card each; a call that asks a
// person still gets its own card with buttons; a stop leaves no step running; a restart while
// a card waits resumes the turn on that same card.
import type { APIMessage } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { answerEvents } from '../fakes/openai-server.js';
import { waitFor } from '../support/engine-kit.js';
import {
  botMessages,
  bootDiscordBot,
  buttonsOf,
  DISCORD_IDS,
  waitForBotMessage,
  type DiscordBot,
} from './discord-harness.js';

const COMPACT = { TOOL_DISPLAY: 'compact' };
const ADA = DISCORD_IDS.humanUserId;

const bots: DiscordBot[] = [];
afterEach(async () => {
  // A later bot shares the first one's fakes and folder: stop it first.
  while (bots.length) await bots.pop()!.stop();
});

async function boot(options: Parameters<typeof bootDiscordBot>[0] = {}): Promise<DiscordBot> {
  const bot = await bootDiscordBot({ ...options, env: { ...COMPACT, ...options.env } });
  bots.push(bot);
  return bot;
}

/** A progress message: nothing but step lines (a mark, the title in bold) and their small print. */
const STEP_LINE = /^(⬜|⏳|✅|❌|⏸️) \*\*[^*]+\*\*|^-# (↳|…) /u;
function isProgress(message: APIMessage): boolean {
  return message.content.length > 0 && message.content.split('\n').every((line) => STEP_LINE.test(line));
}

function progressMessages(bot: DiscordBot, thread: string): APIMessage[] {
  return botMessages(bot, thread).filter(isProgress);
}

/** The step line of a tool in a progress message (its markdown escaped: `list\_dir`). */
function stepLine(message: APIMessage, tool: string): string | undefined {
  return message.content.split('\n').find((line) => line.includes(`**${tool.replace(/_/g, '\\_')}**`));
}

/** A tool's cards: messages that show the tool and are not progress messages. */
function cardsOf(bot: DiscordBot, thread: string, tool: string): APIMessage[] {
  return botMessages(bot, thread).filter((m) => !isProgress(m) && m.content.includes(`**${tool}**`));
}

describe('compact progress on Discord', () => {
  it('tool calls are steps of one progress message edited in place; an approval gets its own card with buttons; text stays above and below', async () => {
    const bot = await boot();
    bot.llm.replyAnswer({ text: 'Let me look around.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hello\n' } }]);
    bot.llm.replyText('All written.');
    const asked = bot.mention('look around, then write notes.txt');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).some((b) => b.label === 'Approve'));

    // Before the approval: the text, then ONE progress message with the finished step (no list_dir card).
    const before = botMessages(bot, asked.id);
    const intro = before.find((m) => m.content.includes('Let me look around.'))!;
    const progress = progressMessages(bot, asked.id);
    expect(progress).toHaveLength(1);
    expect(BigInt(intro.id) < BigInt(progress[0]!.id)).toBe(true);
    expect(stepLine(progress[0]!, 'list_dir')).toMatch(/^✅ \*\*list\\_dir\*\*/);
    expect(progress[0]!.content).toMatch(/-# ↳ /);
    expect(cardsOf(bot, asked.id, 'list_dir')).toEqual([]);
    // The asking call is its own card below, and its step in the closed progress message waits for it (never "running").
    expect(card.content).toContain('**write_file**');
    expect(BigInt(card.id) > BigInt(progress[0]!.id)).toBe(true);
    expect(stepLine(bot.fake.message(asked.id, progress[0]!.id)!, 'write_file')).toMatch(/^⏸️ \*\*write\\_file\*\*/);

    const approve = buttonsOf(card).find((b) => b.label === 'Approve')!;
    bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: approve.customId });
    const answer = await waitForBotMessage(bot, asked.id, (m) => m.content.includes('All written.'));
    await bot.idle();
    const final = bot.fake.message(asked.id, card.id)!;
    expect(final.content).toContain(`Approved by <@${ADA}>`);
    expect(buttonsOf(final)).toEqual([]);
    // After the decision the turn goes on in a new progress message below the card, and the answer below that.
    const after = progressMessages(bot, asked.id).filter((m) => BigInt(m.id) > BigInt(card.id));
    expect(after).toHaveLength(1);
    expect(stepLine(after[0]!, 'write_file')).toMatch(/^✅ \*\*write\\_file\*\*/);
    expect(BigInt(answer.id) > BigInt(after[0]!.id)).toBe(true);
    // One card in all: the asking call's. Every message within Discord's limit.
    expect(
      botMessages(bot, asked.id)
        .filter((m) => !isProgress(m) && /\*\*(list_dir|write_file)\*\*/.test(m.content))
        .map((m) => m.id),
    ).toEqual([card.id]);
    for (const message of botMessages(bot, asked.id)) expect(message.content.length).toBeLessThanOrEqual(2_000);
  });

  it('many steps over two rounds stay one message, edited in place, under 2,000 characters; untrusted titles and outputs cannot mass-mention or break the markup', async () => {
    const bot = await boot();
    const calls = Array.from({ length: 14 }, (_, i) => ({
      name: 'list_dir',
      arguments: { path: `@everyone **${i}** ${'x'.repeat(200)}` },
    }));
    bot.llm.replyToolCalls(calls.slice(0, 7));
    // The second round is held until the first is drawn: then the same message is edited, not a second one posted.
    let release = (): void => {};
    const drawn = new Promise<void>((resolve) => (release = resolve));
    bot.llm.reply((request) => ({
      kind: 'sse_held',
      events: answerEvents(request, { toolCalls: calls.slice(7) }),
      holdAfter: 1,
      until: drawn,
    }));
    bot.llm.replyText('Listed.');
    const asked = bot.mention('list a lot');
    const first = await waitForBotMessage(
      bot,
      asked.id,
      (m) => isProgress(m) && m.content.split('\n').filter((line) => line.startsWith('❌')).length === 7,
    );
    release();
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Listed.'));
    await bot.idle();
    const progress = progressMessages(bot, asked.id);
    expect(progress.map((m) => m.id)).toEqual([first.id]);
    expect(progress[0]!.content.split('\n').filter((line) => line.startsWith('❌'))).toHaveLength(14);
    const content = progress[0]!.content;
    expect(content.length).toBeLessThanOrEqual(2_000);
    // No broadcast survives, and the arguments' markdown is escaped.
    expect(content).not.toMatch(/(?<![\p{L}\p{N}_])@everyone/u);
    expect(content).not.toMatch(/ \*\*\d+\*\* /);
    expect(cardsOf(bot, asked.id, 'list_dir')).toEqual([]);
    // Every body the bot sent for it was within Discord's limit (the fake refuses more) and pinged nobody.
    const sends = bot.fake.rest.calls.filter((c) => c.method !== 'GET' && c.path.includes('/messages'));
    expect(sends.filter((c) => c.status >= 400)).toEqual([]);
  });

  it('a stop while a step runs: the step ends as failed, no step is left running, and the thread says who stopped it', async () => {
    const bot = await boot();
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }]);
    bot.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'sleep 100' } }]);
    const asked = bot.mention('list, then wait a long time');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).some((b) => b.label === 'Approve'));
    bot.fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: buttonsOf(card).find((b) => b.label === 'Approve')!.customId,
    });
    // The approved call runs as a step of a new progress message.
    await waitForBotMessage(
      bot,
      asked.id,
      (m) => isProgress(m) && /^⏳ \*\*run\\_shell\*\*/.test(stepLine(m, 'run_shell') ?? ''),
    );
    bot.fake.react({ messageId: asked.id, emoji: '🛑' });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes(`Stopped by <@${ADA}>`));
    await bot.idle();
    const progress = progressMessages(bot, asked.id);
    expect(progress.length).toBe(2);
    for (const message of progress) expect(message.content).not.toContain('⏳');
    expect(stepLine(progress.at(-1)!, 'run_shell')).toMatch(/^❌ \*\*run\\_shell\*\*/);
    expect(stepLine(progress[0]!, 'list_dir')).toMatch(/^✅/);
    expect(bot.llm.requests).toHaveLength(2);
  });

  it('a restart while the card waits: the click on the same card resumes the turn, the call runs once, and no second card is posted', async () => {
    const first = await boot();
    first.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }]);
    first.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'after.txt', content: 'after\n' } }]);
    const asked = first.mention('list, then write after.txt');
    const card = await waitForBotMessage(first, asked.id, (m) => buttonsOf(m).some((b) => b.label === 'Approve'));
    expect(progressMessages(first, asked.id)).toHaveLength(1);

    await first.crash();
    first.llm.replyText('Resumed and written.');
    const second = await boot({ dir: first.dir, fake: first.fake, llm: first.llm });
    first.fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: buttonsOf(card).find((b) => b.label === 'Approve')!.customId,
    });
    await waitForBotMessage(second, asked.id, (m) => m.content.includes('Resumed and written.'));
    await second.idle();
    expect(first.llm.requests).toHaveLength(3);
    await waitFor(() => second.fake.message(asked.id, card.id)!.content.includes(`Approved by <@${ADA}>`));
    // One card for the call (the one posted before the restart), no step left running anywhere.
    expect(cardsOf(second, asked.id, 'write_file').map((m) => m.id)).toEqual([card.id]);
    expect(buttonsOf(second.fake.message(asked.id, card.id)!)).toEqual([]);
    for (const message of progressMessages(second, asked.id)) expect(message.content).not.toContain('⏳');
  });
});
