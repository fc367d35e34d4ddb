// Anthropic in the bot as `npm start` runs it (the bundle, bin/build.mjs): a mention answered
// by Claude, and a server that cannot be reached told in words.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';

const SECRET = 'anthropic-process-secret';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function mentionAnswered(baseURL: string, text: string, answered: (reply: string) => boolean): Promise<string[]> {
  const fakes = await startBotFakes(cleanups);
  const bot = await BotProcess.start(
    slackHttpEnv(fakes, SECRET, {
      MODEL: 'anthropic:claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-test-value',
      ANTHROPIC_BASE_URL: baseURL,
    }),
    fakes.dir,
    30_000,
  );
  cleanups.push(() => bot.kill());
  const mention = appMention({ text });
  fakes.slack.addMessage(mention);
  expect((await sendEvent(bot.eventsUrl, SECRET, eventCallback(mention))).status).toBe(200);
  const replies = () =>
    fakes.slack
      .thread(SLACK_IDS.channelId, mention.ts)
      .filter((message) => message.user === SLACK_IDS.botUserId)
      .map((message) => message.text);
  await waitFor(() => replies().some(answered), 40_000);
  return replies();
}

describe('npm start with an Anthropic model', () => {
  it('answers a mention through the Anthropic SDK', { timeout: 60_000 }, async () => {
    const anthropic = await new FakeAnthropic().start();
    cleanups.push(() => anthropic.stop());
    anthropic.replyText('Hello from Claude.');
    expect(
      await mentionAnswered(anthropic.baseURL, 'hello', (reply) => reply.includes('Hello from Claude.')),
    ).toBeTruthy();
    expect(anthropic.requests).toHaveLength(1);
  });

  it(
    'a server that drops every connection: the thread says Anthropic could not be reached',
    { timeout: 90_000 },
    async () => {
      const dropping = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => new Promise((resolve) => dropping.close(resolve)));
      const replies = await mentionAnswered(
        `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`,
        'hello',
        (reply) => /Anthropic/.test(reply),
      );
      expect(replies.join('\n')).toContain('Could not reach Anthropic: check the network or the base URL.');
    },
  );
});
