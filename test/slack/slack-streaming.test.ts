// How an answer reaches the thread, end to end (the real Bolt app, signed requests,
// FakeSlack, the real core and the real OpenAI SDK against FakeOpenAI): native streaming
// where the workspace has it, post-and-edit where it does not, and long answers split so
// that every message stays within Slack's limits and renders on its own.
import { afterEach, describe, expect, it } from 'vitest';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import type { StoredMessage } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
/** Slack's cap on `markdown_text` per streamed message. */
const NATIVE_TEXT_LIMIT = 12_000;

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

/** The bot's messages in the thread, oldest first. */
const botMessages = (b: SlackBot, root: string): StoredMessage[] =>
  b.slack.thread(C, root).filter((m) => m.user === SLACK_IDS.botUserId);

/** Every piece of mrkdwn a message shows: its text, or its section blocks when it has them. */
function shownTexts(message: StoredMessage): string[] {
  const sections = ((message.blocks ?? []) as { type: string; text?: { text?: string } }[])
    .filter((b) => b.type === 'section')
    .map((b) => b.text?.text ?? '');
  return sections.length > 0 ? sections : [message.text];
}

const fences = (text: string) => (text.match(/```/g) ?? []).length;

/** Prose of about `length` characters in sentences, with a paragraph break every few sentences. */
function prose(length: number, tag: string): string {
  const out: string[] = [];
  for (let i = 0; out.join(' ').length < length; i++)
    out.push(`Sentence ${tag}${i} explains one more step of the plan.${i % 6 === 5 ? '\n\n' : ''}`);
  return out.join(' ');
}

function codeBlock(length: number): { text: string; lines: string[] } {
  const lines: string[] = [];
  for (let i = 0; lines.join('\n').length < length; i++) lines.push(`const value${i} = compute(${i}, "step ${i}");`);
  return { text: `\`\`\`ts\n${lines.join('\n')}\n\`\`\``, lines };
}

describe('a workspace without native streaming', () => {
  it('the answer is posted and then edited, in Slack mrkdwn', async () => {
    bot = await bootSlackBot();
    bot.slack.failNext('chat.startStream', 'unknown_method');
    bot.llm.replyText('The build is **green** again; see [the log](https://ci.example.com/42) for details.', {
      chunkSize: 4,
    });
    const root = await bot.mention('how is the build?');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const answer = botMessages(bot, root);
    expect(answer).toHaveLength(1);
    expect(bot.slack.callsOf('chat.postMessage')[0]!.args).toMatchObject({ channel: C, thread_ts: root });
    expect(
      bot.slack.callsOf('chat.update').filter((call) => call.args.ts === answer[0]!.ts).length,
    ).toBeGreaterThanOrEqual(1);
    for (const shown of [answer[0]!.text, ...shownTexts(answer[0]!)]) {
      // (Slack's converter puts zero-width spaces around bold so that it works mid-word.)
      const text = shown.replace(/\u200B/g, '');
      expect(text).toContain('The build is *green* again; see <https://ci.example.com/42|the log> for details.');
      expect(text).not.toContain('**');
    }
    // The workspace said no once: the next answer goes straight to post-and-edit.
    bot.llm.replyText('Still green.');
    await bot.reply(root, 'and now?');
    await waitFor(() => bot!.llm.requests.length === 2);
    await bot.idle();
    expect(bot.slack.callsOf('chat.startStream')).toHaveLength(1);
    expect(botMessages(bot, root).at(-1)!.text).toContain('Still green.');
  });

  it('a long answer is split across messages, and no message cuts a code block in half', async () => {
    bot = await bootSlackBot();
    bot.slack.failNext('chat.startStream', 'unknown_method');
    const code = codeBlock(3_000);
    const answer = `${prose(3_000, 'a')}\n\n${code.text}\n\n${prose(3_000, 'b')}`;
    expect(answer.length).toBeGreaterThan(9_000);
    bot.llm.replyText(answer, { chunkSize: 40 });
    const root = await bot.mention('write the migration and explain it');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const messages = botMessages(bot, root);
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) {
      expect(message.text.length).toBeLessThanOrEqual(4_000);
      for (const text of [message.text, ...shownTexts(message)])
        expect(fences(text) % 2, `unbalanced fence in: ${text.slice(0, 200)}…`).toBe(0);
    }
    // Nothing lost, nothing twice: every line of code and every sentence shows exactly once.
    const all = messages.map((m) => m.text).join('\n');
    for (const line of code.lines) expect(all.split(line).length - 1, line).toBe(1);
    for (const tag of ['a0 ', 'a10 ', 'b0 ', 'b10 ']) expect(all.split(`Sentence ${tag}`).length - 1, tag).toBe(1);
  });
});

describe('a workspace without native streaming, with a code block still arriving', () => {
  it('a message edited while a code block is still coming shows it closed, and the rest continues inside the block', async () => {
    bot = await bootSlackBot();
    bot.slack.failNext('chat.startStream', 'unknown_method');
    const code = codeBlock(3_000);
    const answer = `${prose(3_000, 'a')}\n\n${code.text}\n\n${prose(3_000, 'b')}`;
    // Two halves, 200 ms apart: the first flush ends in the middle of the code block.
    const half = Math.ceil(answer.length / 2);
    expect(answer.indexOf('```')).toBeLessThan(half);
    expect(answer.lastIndexOf('```')).toBeGreaterThan(half);
    bot.llm.replyText(answer, { chunkSize: half, delayMs: 200 });
    const root = await bot.mention('write the migration and explain it');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const messages = botMessages(bot, root);
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) {
      for (const text of [message.text, ...shownTexts(message)])
        expect(fences(text) % 2, `unbalanced fence in: ${text.slice(0, 200)}…`).toBe(0);
    }
    const all = messages.map((m) => m.text).join('\n');
    for (const line of code.lines) expect(all.split(line).length - 1, line).toBe(1);
    // Every code line is inside a code block, and no sentence is.
    for (const message of messages) {
      const outside = message.text
        .split('```')
        .filter((_, i) => i % 2 === 0)
        .join('');
      expect(outside).not.toContain('compute(');
      const inside = message.text
        .split('```')
        .filter((_, i) => i % 2 === 1)
        .join('');
      expect(inside).not.toContain('Sentence');
    }
  });
});

describe('native streaming', () => {
  it('a code block that crosses into the next streamed message is closed in the first and reopened in the second', async () => {
    bot = await bootSlackBot();
    const code = codeBlock(10_000);
    const answer = `${prose(6_000, 'c')}\n\n${code.text}\n\n${prose(2_000, 'd')}`;
    // The first delta ends at a line end inside the code block; the second does not fit beside it.
    const cut = answer.indexOf('\n', answer.indexOf('```') + 3_000) + 1;
    bot.llm.replyText(answer, { chunkSize: cut, delayMs: 200 });
    const root = await bot.mention('write the big migration');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const streamed = botMessages(bot, root);
    expect(streamed).toHaveLength(2);
    expect(streamed[0]!.text.endsWith('```')).toBe(true);
    expect(streamed[1]!.text.startsWith('```ts\n')).toBe(true);
    for (const message of streamed) {
      expect(message.text.length).toBeLessThanOrEqual(NATIVE_TEXT_LIMIT);
      expect(fences(message.text) % 2).toBe(0);
    }
    // Without the two fence lines added at the cut, the text is the answer, byte for byte.
    expect(streamed[0]!.text.slice(0, -3) + streamed[1]!.text.slice('```ts\n'.length)).toBe(answer);
  });

  it('an answer longer than one streamed message can hold rolls over to a new streamed message, with nothing lost', async () => {
    bot = await bootSlackBot();
    const answer = prose(20_000, 'n');
    bot.llm.replyText(answer, { chunkSize: 100 });
    const root = await bot.mention('tell me everything');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const starts = bot.slack.callsOf('chat.startStream');
    expect(starts.length).toBeGreaterThanOrEqual(2);
    const streamed = botMessages(bot, root);
    expect(streamed.map((m) => m.stream?.state)).toEqual(starts.map(() => 'stopped'));
    for (const message of streamed) expect(message.text.length).toBeLessThanOrEqual(NATIVE_TEXT_LIMIT);
    for (const call of [...starts, ...bot.slack.callsOf('chat.appendStream')])
      expect(typeof call.args.markdown_text === 'string' ? call.args.markdown_text.length : 0).toBeLessThanOrEqual(
        NATIVE_TEXT_LIMIT,
      );
    expect(streamed.map((m) => m.text).join('')).toBe(answer);
  });
});
