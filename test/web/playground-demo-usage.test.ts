// The demo model's turns counted as any model's (the real core and web connector in this
// process, MODEL=demo): `/usage` shows the tokens it used, priced at $0 (no "no price known"),
// the answer's footer says so, and `/feedback` names the model that wrote the answer, "demo",
// never "unknown".
import { afterEach, describe, expect, it } from 'vitest';
import { bootWebBot, type WebBot } from './web-harness.js';

let bot: WebBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

describe('the demo model in /usage and /feedback', () => {
  it('counts its tokens at $0, and /feedback names it', async () => {
    bot = await bootWebBot({ env: { MODEL: 'demo' } });
    const live = await bot.stream();
    const thread = (await bot.act('/api/messages', { text: '@bot hello' })).body.thread as string;
    await bot.idle();
    const answer = bot.connector.threads
      .get(thread)!
      .messages.filter((m) => m.kind === 'answer')
      .at(-1)!;
    expect(answer).toMatchObject({ kind: 'answer', footer: expect.stringMatching(/^[\d,]+ in · [\d,]+ out · ≈ \$0$/) });

    await bot.act('/api/messages', { text: '/usage', thread });
    const usage = String(
      (await live.next((e) => e.event === 'whisper' && String(e.data.text).includes('Spend'))).data.text,
    );
    const you = /\*\*You:\*\* \$0\.00 \(([\d.]+k?) tokens, 1 call\)/.exec(usage);
    expect(you, usage).not.toBeNull();
    expect(you![1]).not.toBe('0');
    expect(usage).not.toContain('No price known');

    expect((await bot.act('/api/feedback', { message: answer.id, value: 'up' })).status).toBe(200);
    await bot.act('/api/messages', { text: '/feedback', thread });
    const totals = String(
      (await live.next((e) => e.event === 'whisper' && String(e.data.text).includes('Feedback on answers'))).data.text,
    );
    expect(totals).toContain('• demo: 1 👍 · 0 👎 (100% positive)');
    expect(totals).not.toContain('unknown');
  });
});
