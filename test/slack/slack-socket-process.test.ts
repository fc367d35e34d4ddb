// Socket Mode through `npm start` as a user runs it: the bundled bot in a child process, with
// SLACK_APP_TOKEN, against the fake Slack and its fake socket. The bundle takes Bolt's App and
// its Socket Mode receiver from their own modules (not the package's index, which also loads
// Express), so this is the test that a start in Socket Mode still connects, acks and answers.
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlackSocket } from '../fakes/slack-socket.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('npm start in Socket Mode', () => {
  it(
    'connects with the app token, and a mention on the socket is acked and answered in its thread',
    { timeout: 60_000 },
    async () => {
      const fakes = await startBotFakes(cleanups);
      const socket = new FakeSlackSocket(fakes.slack);
      // Registered after the fakes: clean-ups run last first, so the bot stops before the socket closes.
      cleanups.push(() => socket.close());
      const { SLACK_SIGNING_SECRET: _unused, ...httpEnv } = slackHttpEnv(fakes, 'unused');
      const env = { ...httpEnv, SLACK_APP_TOKEN: 'xapp-process-test' };
      fakes.llm.replyText('Hello from the bundled bot.');
      const bot = await BotProcess.start(env, fakes.dir, 30_000);
      cleanups.push(() => bot.kill());

      expect(bot.startedLine).toMatchObject({ mode: 'socket' });
      await socket.waitForConnection(1);
      expect(fakes.slack.callsOf('apps.connections.open')[0]!.headers.authorization).toBe('Bearer xapp-process-test');

      const mention = appMention({ text: 'hello over the socket' });
      fakes.slack.addMessage(mention);
      const ack = await socket.deliverEvent(eventCallback(mention));
      expect(ack).toMatchObject({ envelope_id: socket.envelopes[0]!.envelope_id });
      await waitFor(
        () =>
          fakes.slack
            .thread(SLACK_IDS.channelId, mention.ts)
            .some(
              (message) => message.user === SLACK_IDS.botUserId && message.text.includes('Hello from the bundled bot.'),
            ),
        20_000,
      );

      bot.signal('SIGTERM');
      expect(await bot.exited).toBe(0);
    },
  );
});
