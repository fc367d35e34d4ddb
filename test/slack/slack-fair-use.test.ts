// Heavy use through the real Bolt app and the fake Slack: a model that asks for 300 tool
// calls at once, a model call waiting for a free slot, a reply past the queue cap.
import { afterEach, describe, expect, it } from 'vitest';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

describe('heavy use, seen in Slack', () => {
  it('300 tool calls in one response: 20 cards and one note, not 301 messages', async () => {
    bot = await bootSlackBot({ env: { PERMISSION_MODE: 'auto' } });
    bot.llm.replyToolCalls(
      Array.from({ length: 300 }, (_unused, i) => ({ name: 'list_dir', arguments: { path: '.', maxEntries: i + 1 } })),
    );
    bot.llm.replyText('Listed, in fewer steps next time.');
    const root = await bot.mention('list it 300 times');
    await waitFor(() => bot!.llm.requests.length === 2, 15_000);
    await bot.idle();
    const thread = bot.slack.thread(C, root);
    expect(thread.filter((m) => m.text.includes('list_dir'))).toHaveLength(20);
    expect(thread.some((m) => m.text.includes('Only 20 of 300 tool calls run'))).toBe(true);
    expect(bot.slack.callsOf('chat.postMessage').length).toBeLessThan(30);
  });

  it('a model call waiting for a free slot shows ⏳ on its thread until it gets one', async () => {
    bot = await bootSlackBot({ env: { MAX_CONCURRENT_MODEL_CALLS: '1' } });
    bot.llm.replyStall();
    const first = await bot.mention('think forever');
    await waitFor(() => bot!.llm.requests.length === 1);
    bot.llm.replyText('Finally my turn.');
    const second = await bot.mention('quick one', { user: 'U0HUMAN002' });
    await waitFor(() => bot!.slack.reactionsOn(C, second).some((r) => r.name === 'hourglass_flowing_sand'));
    expect(bot.llm.requests).toHaveLength(1);
    await bot.react(first, 'octagonal_sign');
    await waitFor(() => bot!.llm.requests.length === 2);
    await bot.idle();
    await waitFor(() => !bot!.slack.reactionsOn(C, second).some((r) => r.name === 'hourglass_flowing_sand'));
  });

  it('idle sessions and thread views stay within MAX_LIVE_SESSIONS; an old thread still works', async () => {
    bot = await bootSlackBot({ env: { MAX_LIVE_SESSIONS: '3', TURNS_PER_USER_PER_MINUTE: '100' } });
    const roots: string[] = [];
    for (let i = 0; i < 8; i++) {
      bot.llm.replyText(`answer ${i}`);
      roots.push(await bot.mention(`question ${i}`));
      await waitFor(() => bot!.llm.requests.length === i + 1);
      await bot.idle();
    }
    await waitFor(() => bot!.core.manager.liveCount <= 3);
    expect(bot.connector.viewCount).toBeLessThanOrEqual(3);
    bot.llm.replyText('still here');
    await bot.reply(roots[0]!, 'and the first thread?');
    await waitFor(() => bot!.llm.requests.length === 9);
    await bot.idle();
    expect(JSON.stringify(bot.llm.requests[8]!.body)).toContain('question 0');
    await waitFor(() => bot!.slack.thread(C, roots[0]!).some((m) => m.text.includes('still here')));
  });

  it('a reply past the queue cap is refused privately', async () => {
    bot = await bootSlackBot({ env: { MAX_QUEUED_INPUTS: '2' } });
    bot.llm.replyStall();
    const root = await bot.mention('think forever');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.reply(root, 'one');
    await bot.reply(root, 'two');
    await bot.reply(root, 'three');
    await waitFor(() =>
      bot!.slack
        .ephemerals(C)
        .some((e) => e.user === ADA && e.text.includes('2 messages are already waiting in this thread')),
    );
    await bot.react(root, 'octagonal_sign');
    await bot.idle();
  });
});
