// What a Discord user sees when the bot asks for more than a call's approval, end to end (the
// real discord.js client against the fake Discord, the real core, the real OpenAI SDK against
// a fake server): a plan to approve (shown in full, however long), a folder to grant (and one
// refused without asking anyone), and the usage footer under an answer.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import {
  botMessages,
  bootDiscordBot,
  buttonsOf,
  DISCORD_IDS,
  waitForBotMessage,
  type DiscordBot,
} from './discord-harness.js';

const ADA = DISCORD_IDS.humanUserId;

let bot: DiscordBot | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface WireMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string } }[];
}

/** The tool result the model received in request `i` for the (only) call of `tool`. */
function toolResultIn(b: DiscordBot, i: number, tool: string): string {
  const messages = (b.llm.requests[i]!.body as { messages: WireMessage[] }).messages;
  const call = messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.function.name === tool);
  if (!call) throw new Error(`no ${tool} call in request ${i}`);
  const result = messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id);
  if (!result) throw new Error(`no result for ${tool} in request ${i}`);
  return String(result.content);
}

describe('a plan to approve', () => {
  it('shows with Approve plan / Reject; Approve plan lets the model go ahead and the card says who', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyToolCalls([
      { name: 'propose_plan', arguments: { plan: '1. Back up the database\n2. Run the migration' } },
    ]);
    bot.llm.replyText('Plan approved, starting.');
    const asked = bot.mention('migrate the database');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    expect(card.content).toContain('propose_plan');
    expect(card.content).toContain('1. Back up the database');
    expect(card.content).toContain('2. Run the migration');
    expect(buttonsOf(card).map((b) => b.label)).toEqual(['Approve plan', 'Reject']);

    const approve = buttonsOf(card).find((b) => b.label === 'Approve plan')!;
    bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: approve.customId });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Plan approved, starting.'));
    await bot.idle();
    expect(JSON.parse(toolResultIn(bot, 1, 'propose_plan'))).toEqual({ approved: true });
    const final = bot.fake.message(asked.id, card.id)!;
    expect(final.content).toContain(`Plan approved by <@${ADA}>`);
    expect(buttonsOf(final)).toEqual([]);
  });

  it('a plan too long for a card is shown in full, every character, in a file posted before the buttons; approving it is behind Show all', async () => {
    bot = await bootDiscordBot();
    const plan = `${Array.from({ length: 120 }, (_, i) => `${i + 1}. Step number ${i + 1} of the migration`).join('\n')}\n121. The last step: drop the old table`;
    expect(plan.length).toBeGreaterThan(2_000);
    bot.llm.replyToolCalls([{ name: 'propose_plan', arguments: { plan } }]);
    bot.llm.replyText('Not going ahead.');
    const asked = bot.mention('plan the migration');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    expect(card.content.length).toBeLessThanOrEqual(2_000);
    expect(card.content).toContain('attached file');
    // Approving it happens in the private Show all message (shared/approval-view.ts); rejecting, anywhere.
    expect(buttonsOf(card).map((b) => b.label)).toEqual(['Show all to decide', 'Reject']);
    const upload = bot.fake.rest.callsTo('POST /channels/:channel/messages').find((c) => c.files.length > 0)!;
    expect(upload.params.channel).toBe(asked.id);
    expect(upload.files[0]!.filename).toMatch(/^propose_plan-.*arguments\.txt$/);
    // Every line of the plan, the last one too, is in the file the approver opens.
    for (const line of plan.split('\n')) expect(upload.files[0]!.text).toContain(line);
    // The file is there before the card shows its buttons.
    const buttonsShown = bot.fake.rest.calls.find(
      (c) =>
        c.method !== 'GET' && c.at >= upload.at && c !== upload && JSON.stringify(c.body ?? {}).includes('custom_id'),
    );
    expect(buttonsShown).toBeDefined();

    const reject = buttonsOf(card).find((b) => b.label === 'Reject')!;
    bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: reject.customId });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Not going ahead.'));
    await bot.idle();
    expect(JSON.parse(toolResultIn(bot, 1, 'propose_plan'))).toMatchObject({ approved: false });
    expect(bot.fake.message(asked.id, card.id)!.content).toContain(`Plan rejected by <@${ADA}>`);
  });
});

describe('a folder to grant', () => {
  it('shows Grant access / Deny; Deny tells the model no and the card says who', async () => {
    bot = await bootDiscordBot();
    const nginx = await tempDir();
    cleanups.push(nginx.remove);
    bot.llm.replyToolCalls([
      { name: 'request_directory', arguments: { path: nginx.path, reason: 'to read the proxy config' } },
    ]);
    bot.llm.replyText('Understood, I will not look there.');
    const asked = bot.mention('check the proxy config');
    const card = await waitForBotMessage(bot, asked.id, (m) => buttonsOf(m).length > 0);
    expect(card.content).toContain('request_directory');
    expect(card.content).toContain(nginx.path);
    expect(buttonsOf(card).map((b) => b.label)).toEqual(['Grant access', 'Deny']);

    const deny = buttonsOf(card).find((b) => b.label === 'Deny')!;
    bot.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: deny.customId });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Understood, I will not look there.'));
    await bot.idle();
    expect(JSON.parse(toolResultIn(bot, 1, 'request_directory'))).toEqual({ granted: false });
    const final = bot.fake.message(asked.id, card.id)!;
    expect(final.content).toContain(`Denied by <@${ADA}>`);
    expect(buttonsOf(final)).toEqual([]);
  });

  it('a folder that may never be granted (/) is refused without asking anyone: no buttons, the model told why', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyToolCalls([{ name: 'request_directory', arguments: { path: '/', reason: 'to look around' } }]);
    bot.llm.replyText('I may not have the whole disk.');
    const asked = bot.mention('look at everything');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('I may not have the whole disk.'));
    await bot.idle();
    expect(toolResultIn(bot, 1, 'request_directory')).toMatch(/refused: \/ is the whole file system/);
    // Nobody was asked: no message of the bot's ever carried a button (but the final answer's 👍 / 👎).
    const posted = bot.fake.rest.calls.filter((c) => c.method === 'POST' || c.method === 'PATCH');
    expect(posted.some((c) => JSON.stringify(c.body ?? {}).includes('Grant access'))).toBe(false);
    for (const message of botMessages(bot, asked.id))
      expect(buttonsOf(message).filter((b) => b.label !== '👍' && b.label !== '👎')).toEqual([]);
  });
});

describe('the usage footer', () => {
  it('the tokens a turn used are shown in a small line under its answer', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('Short answer.', { usage: { prompt_tokens: 1200, completion_tokens: 30 } });
    const asked = bot.mention('hi');
    await bot.idle();
    const b = bot;
    await waitFor(() =>
      botMessages(b, asked.id).some((m) => m.content.includes('Short answer.') && m.content.includes('\n-# ')),
    );
    const answer = botMessages(bot, asked.id).find((m) => m.content.includes('Short answer.'))!;
    const [text, footer] = answer.content.split('\n-# ');
    expect(text).toBe('Short answer.');
    expect(footer).toMatch(/1,200 in · 30 out/);
  });
});
