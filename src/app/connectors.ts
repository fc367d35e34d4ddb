// Which chat connectors this process runs, each behind the ChatConnector contract that
// run-bot.ts starts and shuts down: Slack and Discord when configured, or, for
// `npm run playground`, only the local web playground.
//
// Each platform's connector, and its SDK, is imported only when that platform is configured:
// discord.js (with the two copies of undici its REST and gateway bring) costs a Slack-only
// bot about 30 MB it never uses, and a Discord-only bot never loads Bolt.
import type { ChatConnector } from '../../connectors/shared/chat-connector.js';
import type { DiscordConnector } from '../../connectors/discord/discord-connector.js';
import type { SlackConnector } from '../../connectors/slack/slack-connector.js';
import { discordConfigured, slackConfigured, type Config } from '../config.js';
import type { Core } from '../core.js';
import type { Logger } from 'pino';

export interface ConnectorSetup {
  config: Config;
  core: Core;
  logger: Logger;
}

/** The platforms a configuration asks for (empty: nothing to start). */
export function wantedPlatforms(config: Config): string[] {
  return [...(slackConfigured(config) ? ['slack'] : []), ...(discordConfigured(config) ? ['discord'] : [])];
}

/**
 * Begin loading the configured connectors' modules (their SDKs: Bolt, discord.js), without
 * waiting: the core's start-up mostly waits (the platform check, the sandbox probe, the store),
 * and the connectors' hundreds of modules compile meanwhile instead of after. Loading them does
 * nothing else; a failure is reported by `createConnectors`, which imports them again.
 */
export function preloadConnectors(config: Config): void {
  const loading: Promise<unknown>[] = [];
  if (slackConfigured(config)) loading.push(import('../../connectors/slack/slack-connector.js'));
  if (discordConfigured(config)) loading.push(import('../../connectors/discord/discord-connector.js'));
  for (const load of loading) load.catch(() => undefined);
}

/** Build (not start) every configured connector; on a failure, the ones already built are closed. */
export async function createConnectors(setup: ConnectorSetup): Promise<ChatConnector[]> {
  const built: ChatConnector[] = [];
  try {
    if (slackConfigured(setup.config)) {
      const { SlackConnector } = await import('../../connectors/slack/slack-connector.js');
      built.push(slackConnector(await SlackConnector.create(setup), setup.config));
    }
    if (discordConfigured(setup.config)) {
      const { DiscordConnector } = await import('../../connectors/discord/discord-connector.js');
      built.push(discordConnector(DiscordConnector.create(setup)));
    }
  } catch (error) {
    for (const connector of built) await connector.close().catch(() => undefined);
    throw error;
  }
  return built;
}

function slackConnector(slack: SlackConnector, config: Config): ChatConnector {
  return {
    name: 'slack',
    start: async () => {
      await slack.start();
      return {
        message: 'Slack connector started',
        fields: { mode: config.SLACK_APP_TOKEN ? 'socket' : 'http', port: slack.port },
      };
    },
    stopTaking: () => slack.stopTaking(),
    close: () => slack.close(),
  };
}

function discordConnector(discord: DiscordConnector): ChatConnector {
  return {
    name: 'discord',
    start: async () => {
      const info = await discord.start();
      // Cluster mode: another instance holds the gateway; this one posts and takes it over if that one dies.
      if (info.gateway === 'standby')
        return { message: 'Discord connector started', fields: { botUserId: info.botUserId, gateway: 'standby' } };
      // A bot in no server yet: the line says where to invite it (manifest/discord.md explains the permissions).
      return {
        message: 'Discord connector started',
        fields: {
          botUserId: info.botUserId,
          guilds: info.guilds,
          ...(info.gateway ? { gateway: info.gateway } : {}),
          ...(info.guilds === 0 ? { inviteUrl: info.inviteUrl } : {}),
        },
      };
    },
    stopTaking: () => discord.stopTaking(),
    close: () => discord.close(),
  };
}
