// A person stops the bot with 🛑 and, as soon as the thread says "Stopped", writes again. That
// message must start the next turn: only replies queued before the stop may be dropped. The
// worst case is a reply that leaves the instant the stop note is written, while the stopped
// turn is still winding down; the fakes hold the note's answer until the reply is delivered.
// Each test runs the bot through its real start command, as a user runs it.
import { afterEach, describe, expect, it } from 'vitest';
import { DISCORD_IDS, mention } from '../fakes/discord-payloads.js';
import type { FakeOpenAI } from '../fakes/openai-server.js';
import { appMention, eventCallback, reactionAdded, SLACK_IDS, threadMessage } from '../fakes/slack-payloads.js';
import type { FakeSlack } from '../fakes/slack-server.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { discordEnv, slackHttpEnv, startBotFakes, startDiscordBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';

const SECRET = 'reply-after-stop-secret';
const C = SLACK_IDS.channelId;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Body = { messages: { role: string; content?: unknown }[] };
const lastUserText = (llm: FakeOpenAI, index: number) =>
  String((llm.requests[index]!.body as Body).messages.filter((m) => m.role === 'user').at(-1)?.content);

async function slackSay(
  bot: BotProcess,
  slack: FakeSlack,
  event: ReturnType<typeof appMention> | ReturnType<typeof threadMessage>,
): Promise<string> {
  slack.addMessage(event);
  await sendEvent(bot.eventsUrl, SECRET, eventCallback(event));
  return event.ts;
}

/**
 * 🛑 on `root`, and a reply that leaves the instant the "Stopped" note is written to the
 * thread (before the bot hears back from that post): returns the reply's ts once it is sent.
 */
async function stopThenReplyAtOnce(bot: BotProcess, slack: FakeSlack, root: string, text: string): Promise<string> {
  const replied = new Promise<string>((resolve) => {
    slack.onceAnswered(
      'chat.postMessage',
      (call) => JSON.stringify(call.args).includes('Stopped by'),
      async () => resolve(await slackSay(bot, slack, threadMessage({ text, threadTs: root }))),
    );
  });
  await sendEvent(
    bot.eventsUrl,
    SECRET,
    eventCallback(reactionAdded({ reaction: 'octagonal_sign', ts: root, itemUser: SLACK_IDS.humanUserId })),
  );
  return replied;
}

describe('a reply right after a stop (Slack, through npm start)', () => {
  it('a reply sent the instant the stop note is written starts the next turn', async () => {
    const fakes = await startBotFakes(cleanups);
    const { slack, llm } = fakes;
    llm.replyStallAfter(2, { text: 'Thinking about it for a long while.' });
    llm.replyText('Again, from the top.');
    const bot = await BotProcess.start(slackHttpEnv(fakes, SECRET), fakes.dir, 30_000);
    cleanups.push(() => bot.kill());

    const root = await slackSay(bot, slack, appMention({ text: 'think' }));
    await slack.waitForCall('chat.startStream', () => true, 15_000);
    const again = await stopThenReplyAtOnce(bot, slack, root, 'again');

    await waitFor(() => slack.thread(C, root).some((m) => (m.text ?? '').includes('Again, from the top.')), 15_000);
    expect(llm.requests).toHaveLength(2);
    expect(lastUserText(llm, 1)).toContain('again');
    expect(slack.reactionsOn(C, again).map((r) => r.name)).not.toContain('x');
  }, 60_000);

  it('after a restart, 🛑 on a message from before it, then a reply at once: the reply starts the next turn', async () => {
    const fakes = await startBotFakes(cleanups);
    const { slack, llm } = fakes;
    llm.replyText('First answer.');
    llm.replyStallAfter(2, { text: 'Going on, slowly.' });
    llm.replyText('Again, after the restart.');
    let bot = await BotProcess.start(slackHttpEnv(fakes, SECRET), fakes.dir, 30_000);
    cleanups.push(() => bot.kill());
    const root = await slackSay(bot, slack, appMention({ text: 'start' }));
    await waitFor(() => slack.thread(C, root).some((m) => (m.text ?? '').includes('First answer.')), 15_000);
    await waitFor(() => slack.callsOf('chat.stopStream').length === 1, 15_000);
    await bot.kill();

    bot = await BotProcess.start(slackHttpEnv(fakes, SECRET), fakes.dir, 30_000);
    await slackSay(bot, slack, threadMessage({ text: 'go on', threadTs: root }));
    await waitFor(() => llm.requests.length === 2, 15_000);
    await waitFor(() => slack.callsOf('chat.startStream').length === 2, 15_000);
    // The thread's first message, which the 🛑 is on, was posted before the restart.
    const again = await stopThenReplyAtOnce(bot, slack, root, 'again');

    await waitFor(
      () => slack.thread(C, root).some((m) => (m.text ?? '').includes('Again, after the restart.')),
      15_000,
    );
    expect(llm.requests).toHaveLength(3);
    expect(lastUserText(llm, 2)).toContain('again');
    expect(slack.reactionsOn(C, again).map((r) => r.name)).not.toContain('x');
  }, 90_000);
});

describe('a reply right after a stop (Discord, through npm start)', () => {
  it('a reply sent the instant the stop note is written starts the next turn', async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const { fake, llm } = fakes;
    llm.replyStallAfter(2, { text: 'Thinking about it for a long while.' });
    llm.replyText('Again, from the top.');
    const bot = await BotProcess.start(discordEnv(fakes), fakes.dir, 30_000, { waitFor: 'discord' });
    cleanups.push(() => bot.kill());

    const asked = fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} think` });
    await fake.waitForMessage(asked.id, (m) => m.content.includes('Thinking'), 15_000);
    let againId = '';
    fake.rest.onceAnswered(
      'POST /channels/:channel/messages',
      (call) => JSON.stringify(call.body).includes('Stopped by'),
      () => {
        againId = fake.sendMessage({ channelId: asked.id, content: 'again' }).id;
      },
    );
    fake.react({ messageId: asked.id, emoji: '🛑' });

    await fake.waitForMessage(asked.id, (m) => m.content.includes('Again, from the top.'), 15_000);
    expect(againId).not.toBe('');
    expect(llm.requests).toHaveLength(2);
    expect(lastUserText(llm, 1)).toContain('again');
    expect(fake.guild.reactors(againId, { id: null, name: '❌' })).toEqual([]);
  }, 60_000);
});
