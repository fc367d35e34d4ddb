// `/feedback` in the playground: the shared thread command, answered privately (a whisper on
// the page) with the totals. The playground's one user runs the bot, so is its admin (ADMINS
// holds platform ids only, and none is set here).
import { afterEach, describe, expect, it } from 'vitest';
import { bootWebBot, type WebBot } from './web-harness.js';

let bot: WebBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

describe('/feedback in the playground', () => {
  it('shows the local user the totals, with their own vote counted', async () => {
    bot = await bootWebBot();
    const live = await bot.stream();
    bot.llm.replyText('Noted.');
    const thread = (await bot.act('/api/messages', { text: '@bot note this' })).body.thread as string;
    await bot.idle();
    const answer = bot.connector.threads
      .get(thread)!
      .messages.filter((m) => m.kind === 'answer')
      .at(-1)!;
    expect((await bot.act('/api/feedback', { message: answer.id, value: 'down' })).status).toBe(200);
    expect((await bot.act('/api/feedback-reason', { message: answer.id, reason: 'Too *short*' })).status).toBe(200);

    expect((await bot.act('/api/messages', { text: '/feedback', thread })).body.status).toBe('command');
    const whisper = await live.next(
      (e) => e.event === 'whisper' && String(e.data.text).includes('Feedback on answers'),
    );
    expect(whisper.data).toMatchObject({ threadId: thread });
    expect(whisper.data.text).toContain('**Feedback on answers:** 0 👍 · 1 👎 (0% positive)');
    // The reason, escaped for the page's markdown.
    expect(whisper.data.text).toContain('Too \\*short\\*');
  });
});
