// 👍 / 👎 in the playground through the real bot (core against FakeOpenAI, the real
// WebConnector, core's feedback book): the buttons only under a completed turn's final answer,
// a click found by the clicked message's key and counted once per person, a 👎's reason kept,
// a forged message id refused, thanks and refusals said to the person alone.
import { afterEach, describe, expect, it } from 'vitest';
import type { PageMessage } from '../../connectors/web/page-threads.js';
import { bootWebBot, type WebBot } from './web-harness.js';

const bots: WebBot[] = [];
afterEach(async () => {
  for (const bot of bots.splice(0).reverse()) await bot.stop();
});

async function boot(env: Record<string, string> = {}): Promise<WebBot> {
  const bot = await bootWebBot({ env: { PERMISSION_MODE: 'auto', ...env } });
  bots.push(bot);
  return bot;
}

const messagesOf = (bot: WebBot, thread: string): PageMessage[] => bot.connector.threads.get(thread)?.messages ?? [];

/** A turn with a tool round (two answer segments), answered in full: its thread and its messages. */
async function answeredTurn(
  bot: WebBot,
  text = '@bot look around',
): Promise<{ thread: string; first: PageMessage; last: PageMessage; input: PageMessage }> {
  bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }], { text: 'Looking first.' });
  bot.llm.replyText('Nothing there.');
  const thread = (await bot.act('/api/messages', { text })).body.thread as string;
  await bot.idle();
  const answers = messagesOf(bot, thread).filter((m) => m.kind === 'answer');
  return { thread, first: answers[0]!, last: answers.at(-1)!, input: messagesOf(bot, thread)[0]! };
}

describe('feedback on answers in the playground', () => {
  it("offers 👍 / 👎 only under a completed turn's final answer: not under an earlier segment, not after a failure", async () => {
    const bot = await boot();
    const { thread, first, last } = await answeredTurn(bot);
    expect(first).toMatchObject({ kind: 'answer', text: 'Looking first.' });
    expect(first).not.toHaveProperty('feedback');
    expect(last).toMatchObject({ kind: 'answer', text: 'Nothing there.', feedback: {} });
    expect(messagesOf(bot, thread).filter((m) => 'feedback' in m)).toHaveLength(1);

    bot.llm.replyError(400, {
      error: { message: 'The model is having a bad day.', type: 'invalid_request_error', param: null, code: null },
    });
    const failed = (await bot.act('/api/messages', { text: '@bot fail please' })).body.thread as string;
    await bot.idle();
    expect(messagesOf(bot, failed).some((m) => m.kind === 'note')).toBe(true);
    expect(messagesOf(bot, failed).some((m) => 'feedback' in m)).toBe(false);
  });

  it('a click is counted once per person: the same vote twice changes nothing, a change of mind replaces it; the page shows the vote; thanks are private', async () => {
    const bot = await boot();
    const live = await bot.stream();
    const { thread, last } = await answeredTurn(bot);

    const up = await bot.act('/api/feedback', { message: last.id, value: 'up' });
    expect(up).toMatchObject({ status: 200, body: { ok: true, status: 'recorded', value: 'up' } });
    expect(messagesOf(bot, thread).find((m) => m.id === last.id)).toMatchObject({ feedback: { vote: 'up' } });
    const thanks = await live.next((e) => e.event === 'whisper');
    expect(thanks.data).toMatchObject({ threadId: thread, text: expect.stringMatching(/👍/) });

    const again = await bot.act('/api/feedback', { message: last.id, value: 'up' });
    expect(again.body).toMatchObject({ ok: true, status: 'unchanged' });
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 1, down: 0 });

    const down = await bot.act('/api/feedback', { message: last.id, value: 'down' });
    expect(down.body).toMatchObject({ ok: true, status: 'changed', value: 'down' });
    const totals = await bot.core.feedback.totals();
    expect(totals).toMatchObject({ up: 0, down: 1 });
    expect(totals.byModel).toEqual([{ model: 'openai:gpt-4.1', up: 0, down: 1 }]);
    expect(messagesOf(bot, thread).find((m) => m.id === last.id)).toMatchObject({ feedback: { vote: 'down' } });
  });

  it("a 👎's reason is recorded (masked) with the vote; without a 👎 it is refused", async () => {
    const bot = await boot();
    const { thread, last } = await answeredTurn(bot);
    const early = await bot.act('/api/feedback-reason', { message: last.id, reason: 'too vague' });
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/vote 👎 first/);

    await bot.act('/api/feedback', { message: last.id, value: 'down' });
    const given = await bot.act('/api/feedback-reason', {
      message: last.id,
      reason: `It listed the wrong folder; my token is ${bot.token}`,
    });
    expect(given).toMatchObject({ status: 200, body: { ok: true } });
    const { reasons } = await bot.core.feedback.totals();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]!.reason).toMatch(/^It listed the wrong folder/);
    expect(reasons[0]!.reason).not.toContain(bot.token);
    expect(messagesOf(bot, thread).find((m) => m.id === last.id)).toMatchObject({
      feedback: { vote: 'down', reason: true },
    });

    const empty = await bot.act('/api/feedback-reason', { message: last.id, reason: '   ' });
    expect(empty.status).toBe(400);
  });

  it('a forged message id is refused: another message of the thread, an earlier segment, an id that does not exist; nothing is counted', async () => {
    const bot = await boot();
    const { first, input } = await answeredTurn(bot);
    for (const message of [input.id, first.id, 'no-such-message', `${first.id}x`]) {
      const forged = await bot.act('/api/feedback', { message, value: 'down' });
      expect(forged.status, message).toBe(404);
      expect(forged.body.message).toMatch(/no answer to rate/);
    }
    // What the body says besides the message is not looked at: no session, no key taken from it.
    const extra = await bot.act('/api/feedback', {
      message: first.id,
      value: 'up',
      sessionId: 'web:playground:general:x',
      key: 'web:x',
    });
    expect(extra.status).toBe(404);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 0, down: 0, reasons: [] });
    const bad = await bot.act('/api/feedback', { message: first.id, value: 'sideways' });
    expect(bad.status).toBe(400);
    expect((await bot.act('/api/feedback', { message: first.id, value: 'up' }, { token: 'wrong' })).status).toBe(403);
  });
});
