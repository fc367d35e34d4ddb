// The Bolt app the Slack connector runs on, configured on purpose: `deferInitialization` so a
// failing start-up `auth.test` is an error we report (in words a person can act on) instead of
// an unhandled rejection that kills the process; `processBeforeResponse` (HTTP) and a
// record-first receiver (Socket Mode) so an event is claimed and recorded before Slack gets
// its acknowledgement; our own retry policy, since the default is 10 retries over about 30
// minutes, which would hold a turn hostage to a 5xx; every Web API call through the outbound
// guard (nothing the bot posts can mass-mention) and counted on the operations bus; Bolt's log
// lines into our logger. HTTP mode answers /healthz on PORT, and /metrics there only behind
// METRICS_TOKEN: PORT is the port Slack reaches, so it faces the internet
// (src/ops/metrics/metrics-placement.ts).
import type { App, CustomRoute, Logger as BoltLogger, LogLevel } from '@slack/bolt';
import type { Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { METRICS_PATH, type MetricsEndpoint } from '../../src/ops/metrics/metrics-endpoint.js';
import { metricsOnSharedPorts } from '../../src/ops/metrics/metrics-placement.js';
import { countedFetch } from './api-calls.js';
import { CheckedApp } from './inbound-events.js';
import { guardedFetch } from './outbound-guard.js';
import { connectionCountWarner, RecordFirstSocketModeReceiver } from './record-first-receiver.js';

/** Build the Bolt app (Socket Mode with SLACK_APP_TOKEN, else HTTP) and check the token with auth.test. */
export async function openBoltApp(
  config: Config,
  logger: EngineLogger,
  core: Pick<Core, 'ops' | 'metrics'>,
): Promise<App> {
  const clientOptions = {
    ...(config.SLACK_API_URL
      ? { slackApiUrl: config.SLACK_API_URL.endsWith('/') ? config.SLACK_API_URL : `${config.SLACK_API_URL}/` }
      : {}),
    retryConfig: { retries: 3, factor: 1.6, minTimeout: 500, maxTimeout: 5_000 },
    timeout: 15_000,
    // Every Web API call of every client Bolt makes, and respond(), goes out through this:
    // nothing the bot posts can mass-mention (outbound-guard.ts says why here), and each
    // call is counted for the metrics (api-calls.ts).
    fetch: countedFetch(guardedFetch(), core.ops),
  };
  const common = {
    token: config.SLACK_BOT_TOKEN!,
    deferInitialization: true,
    processBeforeResponse: true,
    clientOptions,
    logger: boltLogger(logger),
  };
  const app = config.SLACK_APP_TOKEN
    ? new CheckedApp(
        {
          ...common,
          receiver: new RecordFirstSocketModeReceiver({
            appToken: config.SLACK_APP_TOKEN,
            installerOptions: { clientOptions },
            logger: common.logger,
            onConnectionCount: connectionCountWarner(logger),
          }),
        },
        logger,
      )
    : new CheckedApp(
        {
          ...common,
          signingSecret: config.SLACK_SIGNING_SECRET!,
          customRoutes: [
            {
              path: '/healthz',
              method: ['GET'],
              handler: (_req, res) => {
                res.writeHead(200, { 'content-type': 'application/json' });
                res.end('{"ok":true}');
              },
            },
            ...(core.metrics && metricsOnSharedPorts(config) ? [metricsRoute(core.metrics)] : []),
          ],
        },
        logger,
      );
  try {
    await app.init();
  } catch (error) {
    // auth.test: Slack's own `ok: false` is a refused token; anything else never got an answer.
    const url = `${config.SLACK_API_URL ?? 'https://slack.com/api/'}auth.test`;
    const reason = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: string }).code;
    const refusal =
      (error as { data?: { error?: string } }).data?.error ?? reason.match(/An API error occurred: (\w+)/)?.[1];
    if (refusal) throw new Error(`Slack did not accept SLACK_BOT_TOKEN (${refusal}) at ${url}`);
    if (code === 'slack_webapi_request_error' || /A request error occurred/.test(reason))
      throw new Error(`Could not reach Slack at ${url}: ${reason}`);
    throw new Error(`Slack did not accept SLACK_BOT_TOKEN (auth.test at ${url} failed): ${reason}`);
  }
  return app;
}

/** GET /metrics on PORT, beside /healthz, behind METRICS_TOKEN (src/ops/metrics/metrics-endpoint.ts answers it). */
function metricsRoute(metrics: MetricsEndpoint): CustomRoute {
  return { path: METRICS_PATH, method: ['GET'], handler: (req, res) => void metrics.answer(req, res) };
}

/** Bolt's log lines, routed into our structured (redacting) logger. */
function boltLogger(logger: EngineLogger): BoltLogger {
  let level = 'info' as LogLevel;
  const line = (args: unknown[]) => args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ');
  return {
    debug: (...args: unknown[]) => logger.debug({ source: 'bolt' }, line(args)),
    info: (...args: unknown[]) => logger.info({ source: 'bolt' }, line(args)),
    warn: (...args: unknown[]) => logger.warn({ source: 'bolt' }, line(args)),
    error: (...args: unknown[]) => logger.error({ source: 'bolt' }, line(args)),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}
