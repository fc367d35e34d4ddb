// Spend limits through the real bot on Slack (Bolt in HTTP mode, FakeSlack, the real core and
// the real OpenAI SDK against FakeOpenAI): a channel's daily budget passes 80 % after a model
// call (the thread is told once), the next call of the same turn is held before it is sent
// (the fake receives nothing more) with a note that names the limit and a Continue button; the
// starter's and a bystander's clicks are refused privately, an admin's lets the turn finish;
// a new request past the limit is refused privately; the next day, the limit is fresh again.
import { afterEach, describe, expect, it } from 'vitest';
import { RETRY_ACTION } from '../../connectors/slack/actions.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import type { StoredMessage } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';
const BOSS = 'U0ADMIN01';

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

// $1 per million tokens either way: a call's estimate is its input plus up to 32,768 output
// tokens (gpt-4.1's output limit), about $0.033; the limit is $0.10.
const ENV = {
  MODEL_PRICES: JSON.stringify({ 'openai:gpt-4.1': { input: 1, output: 1 } }),
  BUDGET_CHANNEL_DAILY: '$0.10',
  ADMINS: BOSS,
};

/** The 80 % notice: "This channel's daily budget is 85 % spent (…)". */
const WARNING = /daily budget is \d+ % spent/;

const botMessages = (b: SlackBot, root: string): StoredMessage[] =>
  b.slack.thread(C, root).filter((m) => m.user === SLACK_IDS.botUserId);
const continueNote = (b: SlackBot, root: string) =>
  botMessages(b, root).find((m) => JSON.stringify(m.blocks ?? []).includes(RETRY_ACTION));

describe('spend limits in a Slack thread', () => {
  it('warns once at 80 %, holds the next call, and only an admin continues; a new request past the limit is refused privately', async () => {
    let now = Date.UTC(2026, 11, 3, 12, 0);
    bot = await bootSlackBot({ env: ENV, spendClock: () => now });
    // The first call costs $0.085 (85,000 tokens): past 80 %, and the next call's estimate no longer fits.
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }], {
      usage: { prompt_tokens: 80_000, completion_tokens: 5_000 },
    });
    const root = await bot.mention('look at the folder');
    await waitFor(() => continueNote(bot!, root) !== undefined, 15_000);
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(1);
    const texts = botMessages(bot, root).map((m) => m.text);
    expect(texts.filter((text) => WARNING.test(text))).toHaveLength(1);
    expect(texts.filter((text) => text.startsWith('Paused: Paused'))).toEqual([]);
    const note = continueNote(bot, root)!;
    expect(note.text).toMatch(/daily budget/);
    expect(JSON.stringify(note.blocks)).toContain('Continue (admins)');

    for (const user of [ADA, BOB]) {
      const answer = await bot.slack.waitForResponse(
        await bot.click(note.ts, { actionId: RETRY_ACTION }, { user }),
        8_000,
      );
      expect(answer.body).toMatchObject({
        response_type: 'ephemeral',
        text: expect.stringMatching(
          user === ADA ? /Only an admin can let a turn go on past a spending limit/ : /or an admin can do that/,
        ),
      });
    }
    expect(bot.llm.requests).toHaveLength(1);

    // Allowed past the limit, this call takes the channel to $0.105: spent, not only estimated.
    bot.llm.replyText('The folder is empty.', { usage: { prompt_tokens: 20_000, completion_tokens: 10 } });
    await bot.click(note.ts, { actionId: RETRY_ACTION }, { user: BOSS });
    await waitFor(() => botMessages(bot!, root).some((m) => m.text.includes('The folder is empty.')), 15_000);
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(2);
    // The 80 % note was not repeated by the turn's second call.
    expect(botMessages(bot, root).filter((m) => WARNING.test(m.text))).toHaveLength(1);

    // A new request past the limit: refused privately, nothing sent to the model, no thread opened.
    await bot.mention('and another thing', { user: BOB });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.user === BOB && /budget/.test(e.text)), 8_000);
    expect(bot.llm.requests).toHaveLength(2);
    expect(bot.slack.ephemerals(C).find((e) => e.user === BOB && /budget/.test(e.text))!.text).toMatch(
      /^Not started: this channel's daily budget of \$0\.10 is spent/,
    );

    // The next day the channel's budget is fresh.
    now = Date.UTC(2026, 11, 4, 0, 5);
    bot.llm.replyText('A new day.', { usage: { prompt_tokens: 100, completion_tokens: 10 } });
    const next = await bot.mention('good morning', { user: BOB });
    await waitFor(() => botMessages(bot!, next).some((m) => m.text.includes('A new day.')), 15_000);
    expect(bot.llm.requests).toHaveLength(3);
  });
});
