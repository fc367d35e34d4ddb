// When Slack fails a call in the middle of a streamed answer, the text is neither lost nor
// repeated: what Slack did not accept goes out with the next update.
import { afterEach, describe, expect, it } from 'vitest';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

describe('a Slack failure mid-answer', () => {
  it('native streaming: a failed append is sent again with the next text, once', async () => {
    bot = await bootSlackBot();
    // Every attempt of one append fails (the client's retries included), then Slack recovers.
    bot.slack.failNext('chat.appendStream', 'internal_error', 1);
    bot.llm.replyText(words, { chunkSize: 6, delayMs: 20 });
    const root = await bot.mention('talk');
    await waitFor(() => bot!.slack.callsOf('chat.stopStream').length === 1, 10_000);
    await bot.idle();
    const answer = bot.slack.thread(C, root).find((m) => m.user === SLACK_IDS.botUserId && m.stream)!;
    expect(answer.text.replace(/\s+/g, ' ').trim()).toBe(words);
  });

  it('post-and-edit: a failed update is repaired by the next one, with nothing repeated', async () => {
    bot = await bootSlackBot();
    bot.slack.failNext('chat.startStream', 'unknown_method');
    bot.slack.failNext('chat.update', 'internal_error', 1);
    bot.llm.replyText(words, { chunkSize: 6, delayMs: 30 });
    const root = await bot.mention('talk');
    await waitFor(
      () => bot!.slack.thread(C, root).some((m) => m.user === SLACK_IDS.botUserId && m.text.includes('word59')),
      10_000,
    );
    await bot.idle();
    const answer = bot.slack.thread(C, root).find((m) => m.user === SLACK_IDS.botUserId)!;
    expect(answer.text.replace(/\s+/g, ' ').trim()).toBe(words);
  });
});
