// Traces from the bot as `npm start` runs it (compiled, native ES modules, OpenTelemetry
// loaded on demand): a Slack mention answered, then SIGTERM, and the collector has the turn's
// spans: the shutdown flushed them before the process exited.
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback, SLACK_IDS } from '../../fakes/slack-payloads.js';
import { sendEvent } from '../../fakes/slack-signer.js';
import { FakeCollector } from '../../fakes/otlp-receiver.js';
import { slackHttpEnv, startBotFakes } from '../../support/bot-fakes.js';
import { BotProcess } from '../../support/bot-process.js';
import { waitFor } from '../../support/engine-kit.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('traces from the running bot', () => {
  it(
    'a mention answered, then SIGTERM: the turn and its model call reach the collector before the process exits',
    { timeout: 60_000 },
    async () => {
      const fakes = await startBotFakes(cleanups);
      const collector = await new FakeCollector().start();
      cleanups.push(() => collector.stop());
      const bot = await BotProcess.start(
        slackHttpEnv(fakes, 'secret', {
          LOG_FORMAT: 'json',
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
          OTEL_SERVICE_NAME: 'slack-bot',
        }),
        fakes.dir,
      );
      cleanups.push(() => bot.kill());

      const mention = appMention({ text: 'hello there' });
      await sendEvent(bot.eventsUrl, 'secret', eventCallback(mention));
      await waitFor(
        () =>
          fakes.slack
            .thread(SLACK_IDS.channelId, mention.ts)
            .some((message) => message.user === SLACK_IDS.botUserId && message.text.includes('hello there')),
        20_000,
      );
      // The batch processor holds spans for up to five seconds: the shutdown sends what it still holds.
      bot.signal('SIGTERM');
      expect(await bot.exited).toBe(0);

      const spans = collector.spans;
      expect(spans.map((span) => span.name).sort()).toEqual(['chat gpt-4.1', 'invoke_agent slack-bot']);
      const turn = spans.find((span) => span.name === 'invoke_agent slack-bot')!;
      const call = spans.find((span) => span.name === 'chat gpt-4.1')!;
      expect(call.parentSpanId).toBe(turn.spanId);
      expect(turn.attributes).toMatchObject({ 'chat_agent.platform': 'slack', 'chat_agent.turn.status': 'completed' });
      expect(turn.resource['service.name']).toBe('slack-bot');
    },
  );
});
