// `npm start`: read the configuration (environment and `.env`), start the core and every
// chat connector that is configured, and shut down cleanly on SIGTERM / SIGINT: stop
// taking events, let running turns stop through the usual interrupt path (after a short
// grace), persist, exit 0. With nothing configured it says exactly what to set and exits 1.
import { existsSync } from 'node:fs';
import { DiscordConnector } from '../connectors/discord/discord-connector.js';
import { SlackConnector } from '../connectors/slack/slack-connector.js';
import { ConfigError, discordConfigured, loadConfig, slackConfigured, slackProblems, type Config } from './config.js';
import { startCore, type Core } from './core.js';
import { createLogger } from './logger.js';
import { configSecretValues, envFileWarning, SecretMasker } from './secrets/index.js';

const NOTHING_CONFIGURED = [
  'Nothing to start: no chat connector is configured.',
  'Set, for Slack: SLACK_BOT_TOKEN and SLACK_APP_TOKEN (Socket Mode, no public URL needed),',
  '           or SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (HTTP mode on PORT, events at /slack/events).',
  'And/or, for Discord: DISCORD_TOKEN (the bot token; see manifest/discord.md).',
  'And a model: MODEL (e.g. openai:gpt-4.1) with OPENAI_API_KEY, or anthropic:… with ANTHROPIC_API_KEY.',
  'See README.md ("Set up Slack", "Set up Discord") and .env.example.',
].join('\n');

interface Running {
  core: Core;
  stop(): Promise<void>;
}

async function start(config: Config, secrets: SecretMasker): Promise<Running | number> {
  // Every log line is masked with the configured secrets' values; the core adds the MCP servers' ones.
  const logger = createLogger(config.LOG_LEVEL, undefined, secrets);
  const envWarning = envFileWarning('.env');
  if (envWarning) logger.warn({}, envWarning);
  const withSlack = slackConfigured(config);
  const withDiscord = discordConfigured(config);
  if (!withSlack && !withDiscord) {
    console.error(NOTHING_CONFIGURED);
    return 1;
  }
  const problems = slackProblems(config);
  if (!config.MODEL) problems.push('MODEL: missing (e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-5)');
  if (problems.length > 0) {
    console.error(new ConfigError(problems).message);
    return 2;
  }
  const core = await startCore(config, { logger, secrets });
  let slack: SlackConnector | undefined;
  let discord: DiscordConnector | undefined;
  const stopConnectors = async (): Promise<void> => {
    await slack?.stop();
    await discord?.stop();
  };
  try {
    // Every connector is attached before recovery, and takes events only after it.
    if (withSlack) slack = await SlackConnector.create({ config, core, logger });
    if (withDiscord) discord = DiscordConnector.create({ config, core, logger });
    // Repaired before any event reaches a session; only then do events flow.
    await core.recover();
    if (slack) {
      await slack.start();
      logger.info({ mode: config.SLACK_APP_TOKEN ? 'socket' : 'http', port: slack.port }, 'Slack connector started');
    }
    if (discord) {
      const info = await discord.start();
      // A bot in no server yet: the line says where to invite it (manifest/discord.md explains the permissions).
      logger.info({ botUserId: info.botUserId, guilds: info.guilds, ...(info.guilds === 0 ? { inviteUrl: info.inviteUrl } : {}) }, 'Discord connector started');
    }
  } catch (error) {
    await stopConnectors().catch(() => undefined);
    await core.close();
    throw error;
  }
  return {
    core,
    stop: async () => {
      await stopConnectors();
      await core.close();
    },
  };
}

async function main(): Promise<number> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  const secrets = new SecretMasker(configSecretValues(config));
  let running: Running | number;
  try {
    running = await start(config, secrets);
  } catch (error) {
    // A store's or an MCP server's error can quote its URL or token.
    console.error(`Could not start: ${secrets.mask(error instanceof Error ? error.message : String(error))}`);
    return 1;
  }
  if (typeof running === 'number') return running;
  const bot = running;
  await new Promise<void>((resolve) => {
    const shutdown = (): void => {
      process.off('SIGTERM', shutdown);
      process.off('SIGINT', shutdown);
      resolve();
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  });
  await bot.stop();
  return 0;
}

const code = await main();
// Everything was closed in order above; a stray handle (an SDK's keep-alive socket) must
// not keep a stopped bot alive.
process.exit(code);
