// Where GET /metrics is answered, decided in one place for the start (src/app/run-bot.ts), the
// Slack HTTP receiver (connectors/slack/bolt-app.ts) and `npm run doctor`. No prom-client here:
// the doctor and a bot with METRICS=off read this and load nothing of the metrics.
//
// The decision:
// - Metrics on, always: a listener of its own on 127.0.0.1:METRICS_PORT (default 9464, the
//   port Prometheus' exporters conventionally take). Only this machine can read it (a
//   Prometheus or an agent beside the bot), so it needs no token.
// - With METRICS_TOKEN set, the bot's other HTTP servers answer it too, behind
//   `Authorization: Bearer <token>`: PORT in Slack's HTTP mode and HEALTH_PORT. That is how
//   another host scrapes it (Prometheus' `authorization: {credentials: …}`). Every /metrics asks
//   for the token then, its own listener's too: one rule, whichever port is reached.
// - Without METRICS_TOKEN, PORT and HEALTH_PORT answer 404 for /metrics: PORT is the port Slack
//   posts to, so it faces the internet, and a container publishes HEALTH_PORT beside it.
// There is no METRICS_HOST: a scraper on another host has the token route, and a listener on
// every interface without a token is exactly what this decision closes.
const DEFAULT_METRICS_PORT = 9464;
/** Loopback only: what reaches it is on this machine. */
const METRICS_HOST = '127.0.0.1';

export interface MetricsSettings {
  METRICS: boolean;
  METRICS_TOKEN?: string | undefined;
  METRICS_PORT?: number | undefined;
  PORT: number;
  HEALTH_PORT?: number | undefined;
  SLACK_BOT_TOKEN?: string | undefined;
  SLACK_APP_TOKEN?: string | undefined;
}

export interface MetricsPlacement {
  host: typeof METRICS_HOST;
  /** 0: any free port (the start logs which). */
  port: number;
  /** METRICS_PORT was set: a port that cannot be had stops the start. The default one taken is a warning. */
  portSet: boolean;
  /** PORT (Slack HTTP mode) and HEALTH_PORT answer /metrics too, behind the token. */
  sharedPorts: boolean;
}

/** Where /metrics is answered; undefined with METRICS=off. */
export function metricsPlacement(settings: MetricsSettings): MetricsPlacement | undefined {
  if (!settings.METRICS) return undefined;
  return {
    host: METRICS_HOST,
    port: settings.METRICS_PORT ?? DEFAULT_METRICS_PORT,
    portSet: settings.METRICS_PORT !== undefined,
    sharedPorts: settings.METRICS_TOKEN !== undefined,
  };
}

/** Whether the Slack HTTP receiver and the health server answer /metrics. */
export function metricsOnSharedPorts(settings: MetricsSettings): boolean {
  return metricsPlacement(settings)?.sharedPorts ?? false;
}

/** The placement in words, for the doctor and the start-up line: where, and who may read it. */
export function placementWords(settings: MetricsSettings, listening?: number): string {
  const placement = metricsPlacement(settings);
  if (!placement) return 'off (METRICS=off): no /metrics anywhere';
  const port = listening ?? placement.port;
  const own =
    port === 0
      ? `${placement.host} on a free port (METRICS_PORT=0; the start logs which)`
      : `${placement.host}:${port}`;
  if (!placement.sharedPorts) {
    return `GET /metrics on ${own}, this machine only; not on PORT or HEALTH_PORT (set METRICS_TOKEN to scrape them from another host, with the token as a bearer token)`;
  }
  const slackHttp = settings.SLACK_BOT_TOKEN !== undefined && settings.SLACK_APP_TOKEN === undefined;
  const shared = [
    ...(slackHttp ? [`PORT ${settings.PORT} (Slack's HTTP mode)`] : []),
    ...(settings.HEALTH_PORT !== undefined ? [`HEALTH_PORT ${settings.HEALTH_PORT}`] : []),
  ];
  return `GET /metrics only with METRICS_TOKEN as a bearer token, on ${own}${shared.length > 0 ? ` and on ${shared.join(' and ')}` : ''}`;
}
