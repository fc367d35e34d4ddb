// A card's "Full result" through the playground's HTTP side (the real core and web connector in
// this process, FakeOpenAI): the whole result of the card's call as the transcript holds it
// (what the model got), JSON indented; a card that is not there is a 404 in words; no
// token, no result.
import { afterEach, describe, expect, it } from 'vitest';
import { bootWebBot, type WebBot } from './web-harness.js';

let bot: WebBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

describe('the Full result of a card', () => {
  it("is the call's whole result from the transcript, for the token holder only", async () => {
    bot = await bootWebBot({ env: { PERMISSION_MODE: 'auto' } });
    bot.llm.replyToolCalls([
      { id: 'call_w', name: 'write_file', arguments: { path: 'a.txt', content: 'line\n'.repeat(200) } },
    ]);
    bot.llm.replyText('Written.');
    const thread = (await bot.act('/api/messages', { text: '@bot write a.txt' })).body.thread as string;
    await bot.idle();
    const card = bot.connector.threads.get(thread)!.messages.find((m) => m.kind === 'card')!;

    const answer = await bot.act('/api/tool-result', { thread, message: card.id });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, json: true });
    expect(JSON.parse(answer.body.text as string)).toEqual({ path: 'a.txt', bytesWritten: 1000, created: true });
    expect(answer.body.text).toContain('\n  "bytesWritten"');

    const gone = await bot.act('/api/tool-result', { thread, message: 'no-such-card' });
    expect(gone).toMatchObject({ status: 404, body: { ok: false, message: 'That card is not there any more.' } });
    expect((await bot.act('/api/tool-result', { thread, message: card.id }, { token: null })).status).toBe(401);
  });
});
