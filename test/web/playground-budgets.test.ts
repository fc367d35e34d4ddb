// Spend limits in the playground, through the real bot (core against FakeOpenAI, the real
// WebConnector): a turn held by a limit shows a note naming it with "Continue (admins)", and the
// playground's one local person, who runs the bot, may press it; the turn then finishes.
import { afterEach, describe, expect, it } from 'vitest';
import type { PageMessage } from '../../connectors/web/page-threads.js';
import { waitFor } from '../support/engine-kit.js';
import { bootWebBot, type WebBot } from './web-harness.js';

let bot: WebBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const messagesOf = (b: WebBot, thread: string): PageMessage[] => b.connector.threads.get(thread)?.messages ?? [];

describe('spend limits in the playground', () => {
  it('a paused turn offers Continue (admins), which the local operator may press', async () => {
    bot = await bootWebBot({
      env: {
        PERMISSION_MODE: 'auto',
        MODEL_PRICES: JSON.stringify({ 'openai:gpt-4.1': { input: 1, output: 1 } }),
        BUDGET_TURN: '$0.05',
      },
    });
    bot.llm.replyToolCalls([{ id: 'call_a', name: 'list_dir', arguments: { path: '.' } }], {
      usage: { prompt_tokens: 30_000, completion_tokens: 10 },
    });
    const thread = (await bot.act('/api/messages', { text: '@bot look around' })).body.thread as string;
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(1);
    const note = messagesOf(bot, thread).find((m) => m.kind === 'note' && m.action !== undefined);
    expect(note).toMatchObject({
      kind: 'note',
      text: expect.stringMatching(/^💸 Paused: this turn's budget of \$0\.05/),
      action: { kind: 'continue_past_limit', label: 'Continue (admins)' },
    });

    bot.llm.replyText('Nothing here.');
    expect((await bot.act('/api/note-action', { thread, message: note!.id })).status).toBe(200);
    await waitFor(
      () => messagesOf(bot!, thread).some((m) => m.kind === 'answer' && m.text.includes('Nothing here.')),
      15_000,
    );
    expect(bot.llm.requests).toHaveLength(2);
  });
});
