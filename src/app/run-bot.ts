// The bot's life: start-up in a safe order, then, on SIGTERM or SIGINT, a shutdown that
// keeps everything.
//
// Start-up: the configuration is checked first and nothing is created on disk before it
// (and the platforms) pass; then the core (store, MCP servers, sandbox), every connector
// attached, recovery, and only then do events flow.
//
// SIGHUP, with a PROFILES file, reads it again (src/profiles/profile-watch.ts).
//
// Shutdown: stop taking events (Slack retries what it could not deliver); bring every
// running turn to a safe point where the next start carries it on (core.suspend); then close
// the connectors and the core, and exit 0. A ref'd deadline bounds it all: a stuck socket
// cannot keep a stopping bot alive, and the process never exits because its event loop
// emptied while it waited.
import type { Logger } from 'pino';
import type { ChatConnector } from '../../connectors/shared/chat-connector.js';
import { ConfigError, configStartProblems, type Config } from '../config.js';
import { startCore, type Core } from '../core.js';
import type { SecretMasker } from '../secrets/index.js';
import { createConnectors, preloadConnectors, wantedPlatforms } from './connectors.js';
import { platformProblems, whatRunsWhere } from './preflight.js';
import { metricsOnSharedPorts, metricsPlacement, placementWords } from '../ops/metrics/metrics-placement.js';
import { startHealthServer, type HealthServer } from './health-server.js';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';

const NOTHING_CONFIGURED = [
  'Nothing to start: no chat connector is configured.',
  'Set, for Slack: SLACK_BOT_TOKEN and SLACK_APP_TOKEN (Socket Mode, no public URL needed),',
  '           or SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (HTTP mode on PORT, events at /slack/events).',
  'And/or, for Discord: DISCORD_TOKEN (the bot token; see manifest/discord.md).',
  'And a model: MODEL (e.g. openai:gpt-4.1) with OPENAI_API_KEY, or anthropic:… with ANTHROPIC_API_KEY.',
  'Or try it without a chat platform, and without a key: npm run playground (it has a built-in demo model).',
  'See README.md and .env.example.',
].join('\n');

/** How long a shutdown may take before the process exits anyway (non-zero). */
const SHUTDOWN_DEADLINE_MS = 20_000;

export interface RunOptions {
  config: Config;
  logger: Logger;
  secrets: SecretMasker;
  /** Builds the connectors (default: the configured Slack and Discord ones). */
  connectors?: (core: Core) => Promise<ChatConnector[]>;
  /** What to say when no connector is configured (default: how to configure Slack or Discord). */
  requireConnectors?: boolean;
}

interface Running {
  core: Core;
  connectors: ChatConnector[];
  health?: HealthServer;
  metrics?: MetricsServer;
}

/** Start, run until SIGTERM / SIGINT, stop. Resolves with the exit code. */
export async function runBot(options: RunOptions): Promise<number> {
  const { config, logger } = options;
  if ((options.requireConnectors ?? true) && wantedPlatforms(config).length === 0) {
    console.error(NOTHING_CONFIGURED);
    return 1;
  }
  // loadConfig checked these already when a platform is set; a caller's own config (the
  // playground's) is checked here.
  const problems = configStartProblems(config);
  if (problems.length > 0) {
    console.error(new ConfigError(problems).message);
    return 2;
  }
  if (!options.connectors) preloadConnectors(config);
  // Before the core: a refused token or an unreachable platform leaves nothing on disk.
  const unreachable = options.connectors ? [] : await platformProblems(config);
  if (unreachable.length > 0) {
    console.error(
      `Could not start:\n${unreachable.map((problem) => `  - ${options.secrets.mask(problem)}`).join('\n')}`,
    );
    return 1;
  }
  // Listened for from here: a SIGTERM during start-up stops the bot once it has started.
  const signal = untilSignal();
  // SIGHUP reads the PROFILES file again (without PROFILES it stops the bot, as it always did).
  // Listened for before the start too: a SIGHUP while the connectors start must not end the
  // bot, and one before the core has read the file has nothing to read again.
  let running: Running | undefined;
  const hangup = (): void => running?.core.profileWatch?.reloadNow('SIGHUP');
  if (config.PROFILES) process.on('SIGHUP', hangup);
  try {
    running = await start(options);
  } catch (error) {
    process.off('SIGHUP', hangup);
    // A store's or an MCP server's error can quote its URL or token.
    console.error(`Could not start: ${options.secrets.mask(error instanceof Error ? error.message : String(error))}`);
    return 1;
  }
  try {
    return await stop(running, logger, await signal);
  } finally {
    process.off('SIGHUP', hangup);
  }
}

async function start(options: RunOptions): Promise<Running> {
  const { config, logger } = options;
  const core = await startCore(config, { logger, secrets: options.secrets });
  let connectors: ChatConnector[] = [];
  let health: HealthServer | undefined;
  let metrics: MetricsServer | undefined;
  try {
    // Every connector is attached before recovery, and takes events only after it.
    connectors = options.connectors ? await options.connectors(core) : await createConnectors({ config, core, logger });
    await core.recover();
    for (const connector of connectors) {
      const started = await connector.start();
      logger.info(started.fields, started.message);
    }
    logger.info(whatRunsWhere(config), 'running');
    metrics = await startMetrics(config, core, logger);
    if (config.HEALTH_PORT !== undefined) {
      // /metrics beside /healthz only behind METRICS_TOKEN (src/ops/metrics/metrics-placement.ts).
      const shared = core.metrics && metricsOnSharedPorts(config) ? core.metrics : undefined;
      health = await startHealthServer(config.HEALTH_PORT, shared ? { metrics: shared } : {});
      logger.info(
        { port: health.port },
        shared
          ? 'health endpoint: GET /healthz; metrics: GET /metrics (with METRICS_TOKEN)'
          : 'health endpoint: GET /healthz',
      );
    }
  } catch (error) {
    for (const connector of connectors) await connector.close().catch(() => undefined);
    await health?.close();
    await metrics?.close();
    await core.close();
    throw error;
  }
  return { core, connectors, health, ...(metrics ? { metrics } : {}) };
}

/**
 * The metrics' own listener on 127.0.0.1. A METRICS_PORT that was set and cannot be had stops
 * the start (the setting is wrong); the default one taken (another exporter, a second instance
 * on this machine) is a warning, and the bot runs without it: metrics are for watching the bot,
 * never a reason it does not answer.
 */
async function startMetrics(config: Config, core: Core, logger: Logger): Promise<MetricsServer | undefined> {
  const placement = metricsPlacement(config);
  if (!core.metrics || !placement) return undefined;
  try {
    const server = await startMetricsServer(core.metrics, placement);
    logger.info({ host: server.host, port: server.port }, `metrics endpoint: ${placementWords(config, server.port)}`);
    return server;
  } catch (error) {
    if (placement.portSet) throw error;
    logger.warn(
      { port: placement.port },
      `metrics endpoint not started: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stopOn = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', stopOn);
      process.off('SIGINT', stopOn);
      resolve(signal);
    };
    process.on('SIGTERM', stopOn);
    process.on('SIGINT', stopOn);
  });
}

async function stop(running: Running, logger: Logger, signal: NodeJS.Signals): Promise<number> {
  const startedAt = Date.now();
  logger.info({ signal }, 'stopping…');
  // Ref'd on purpose: it keeps the event loop alive while the shutdown awaits, and bounds it.
  let deadline: NodeJS.Timeout | undefined;
  const timedOut = new Promise<number>((resolve) => {
    deadline = setTimeout(() => {
      logger.error({ afterMs: SHUTDOWN_DEADLINE_MS }, 'the shutdown did not finish in time; exiting anyway');
      resolve(1);
    }, SHUTDOWN_DEADLINE_MS);
  });
  const stopped = (async () => {
    running.health?.stopping();
    for (const connector of running.connectors)
      await settle(connector.stopTaking(), logger, `${connector.name}: could not stop taking events`);
    const carried = await running.core.suspend();
    if (carried > 0) logger.info({ turns: carried }, 'turns in flight are kept; they carry on after the restart');
    await running.core.close();
    for (const connector of running.connectors)
      await settle(connector.close(), logger, `${connector.name}: could not close`);
    await running.health?.close();
    await running.metrics?.close();
    logger.info({ tookMs: Date.now() - startedAt }, 'stopped');
    return 0;
  })();
  try {
    return await Promise.race([stopped, timedOut]);
  } finally {
    clearTimeout(deadline);
  }
}

async function settle(work: Promise<void>, logger: Logger, failure: string): Promise<void> {
  try {
    await work;
  } catch (error) {
    logger.warn({ err: error }, failure);
  }
}
