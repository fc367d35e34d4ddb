// What /metrics and the traces show, and to whom, with the bot as `npm start` runs it (Slack
// HTTP mode, a child process): the model calls a tool by a name the bot never offered, made of
// things nobody should read off a scrape page (a title, an address). The name reaches neither
// /metrics nor the exported spans: a tool is named there only if the bot registered it, else
// `unknown`. Without METRICS_TOKEN, the Slack-facing PORT has no /metrics, and the metrics'
// own listener answers on 127.0.0.1 only.
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback, SLACK_IDS } from '../../fakes/slack-payloads.js';
import { sendEvent } from '../../fakes/slack-signer.js';
import { FakeCollector } from '../../fakes/otlp-receiver.js';
import { slackHttpEnv, startBotFakes } from '../../support/bot-fakes.js';
import { BotProcess } from '../../support/bot-process.js';
import { waitFor } from '../../support/engine-kit.js';
import { parseMetrics } from './scrape.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MADE_UP = 'Q3 layoffs list: alice@corp.com';

/** Where the metrics' own listener took its port (METRICS_PORT=0), from its start-up line. */
async function metricsListener(bot: BotProcess): Promise<{ host: string; port: number }> {
  let found: { host: string; port: number } | undefined;
  await waitFor(() => {
    const line = bot.lines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('metrics endpoint: '));
    if (line && typeof line.port === 'number' && typeof line.host === 'string')
      found = { host: line.host, port: line.port };
    return found !== undefined;
  }, 15_000);
  return found!;
}

describe('what /metrics and the traces show, and to whom', () => {
  it(
    'a tool name the model made up is `unknown` on /metrics and in the spans; PORT has no /metrics without a token; the listener binds 127.0.0.1',
    { timeout: 60_000 },
    async () => {
      const fakes = await startBotFakes(cleanups);
      const collector = await new FakeCollector().start();
      cleanups.push(() => collector.stop());
      fakes.llm.replyToolCalls([{ name: MADE_UP, arguments: { rows: 'all' } }]);
      fakes.llm.replyText('I have no such tool; here is what I can do instead.');
      const bot = await BotProcess.start(
        slackHttpEnv(fakes, 'secret', { LOG_FORMAT: 'json', OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }),
        fakes.dir,
      );
      cleanups.push(() => bot.kill());

      const mention = appMention({ text: 'send me the list' });
      await sendEvent(bot.eventsUrl, 'secret', eventCallback(mention));
      await waitFor(
        () =>
          fakes.slack
            .thread(SLACK_IDS.channelId, mention.ts)
            .some((message) => message.user === SLACK_IDS.botUserId && message.text.includes('what I can do instead')),
        20_000,
      );

      // The port Slack posts to answers no /metrics without METRICS_TOKEN (and /healthz as ever).
      expect((await fetch(`http://127.0.0.1:${bot.port}/metrics`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${bot.port}/healthz`)).status).toBe(200);

      const listener = await metricsListener(bot);
      expect(listener.host).toBe('127.0.0.1');
      const response = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
      expect(response.status).toBe(200);
      const page = await response.text();
      expect(page).not.toMatch(/layoffs|alice|corp\.com/);
      const m = await parseMetrics(page);
      expect(m.value('chat_agent_tool_calls_total', { tool: 'unknown', outcome: 'error' })).toBe(1);
      expect([...(m.labelValues().get('chat_agent_tool_calls_total{tool}') ?? [])]).toEqual(['unknown']);
      // Bound to loopback's 127.0.0.1 alone: another address of this host (127.0.0.2 is one on Linux) is refused.
      const elsewhere = await fetch(`http://127.0.0.2:${listener.port}/metrics`).then(
        (answer) => `answered ${answer.status}`,
        (error: unknown) => String((error as { cause?: { code?: string } }).cause?.code),
      );
      expect(elsewhere).toBe('ECONNREFUSED');

      bot.signal('SIGTERM');
      expect(await bot.exited).toBe(0);
      const spans = collector.spans;
      expect(JSON.stringify(spans)).not.toMatch(/layoffs|alice|corp\.com/);
      const tool = spans.find((span) => span.name === 'execute_tool unknown');
      expect(tool?.attributes).toMatchObject({ 'gen_ai.tool.name': 'unknown', 'chat_agent.tool.outcome': 'error' });
    },
  );
});
