// The Discord gateway connection of one instance, and, in cluster mode, who holds it: one
// instance, chosen by a singleton lease (src/cluster/singleton-lease.ts); the others stand by
// and take it when the holder dies or leaves. A holder that loses the lease disconnects before
// the lease can run out elsewhere. Posting needs no gateway (the connector posts through its
// own REST client), so a standby still answers the sessions it owns. During a handover both
// may briefly receive the same event: `deliver`'s persisted event claim runs it once.
//
// A discord.js Client cannot log in again once destroyed (its gateway manager stays
// `destroyed` and its ready state stays set), so every tenure of the gateway gets a fresh
// Client; the connector's listeners are attached to each (`listen`).
import { once } from 'node:events';
import {
  Client,
  Events,
  GatewayIntentBits,
  Partials,
  PermissionsBitField,
  REST,
  Routes,
  type APIUser,
} from 'discord.js';
import type { SingletonLease } from '../../src/cluster/singleton-lease.js';
import { discordGuildIds, type Config } from '../../src/config.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { registerSlashCommands } from './slash-commands.js';
import { makeDiscordRequest } from './rest-request.js';

/** Guilds, messages in them and in DMs, their text (privileged: Message Content), reactions. */
export const INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.GuildMessageReactions,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.DirectMessageReactions,
];
/** So a reaction on a message sent before a restart, and a DM channel never cached, are seen. */
export const PARTIALS = [Partials.Message, Partials.Reaction, Partials.Channel];

/** manifest/discord.md explains each: reactions, view, send, attach, history, threads. */
export const INVITE_PERMISSIONS = new PermissionsBitField([
  'AddReactions',
  'ViewChannel',
  'SendMessages',
  'AttachFiles',
  'ReadMessageHistory',
  'CreatePublicThreads',
  'SendMessagesInThreads',
]).bitfield;

/** The cluster-wide lease of the gateway connection (core.singleton). */
export const GATEWAY_LEASE = 'discord-gateway';

export interface DiscordGatewayInfo {
  botUserId: string;
  guilds: number;
  /** Where to add the bot to a server. */
  inviteUrl: string;
  /** Cluster mode: this instance holds the gateway. */
  gateway?: 'holder';
}

/** Cluster mode: another instance holds the gateway; this one posts and stands by. */
export interface DiscordStandbyInfo {
  botUserId: string;
  gateway: 'standby';
}

export type DiscordStartInfo = DiscordGatewayInfo | DiscordStandbyInfo;

export interface DiscordGatewayOptions {
  config: Config;
  logger: EngineLogger;
  /** The REST client the bot posts with (its token check stands in for a standby's login). */
  rest: REST;
  /** Cluster mode: the gateway's lease (core.singleton(GATEWAY_LEASE)). */
  lease?: SingletonLease;
  /** Attach the connector's listeners to a new client. */
  listen(client: Client): void;
  /** Whether the connector still takes events (a takeover after the shutdown began is not made). */
  taking(): boolean;
  /** The bot's user id, once known. */
  identified(botUserId: string): void;
}

export class DiscordGateway {
  /** The gateway client of this tenure (a fresh one after each loss of the lease). */
  private gateway: Client;
  /** Whether `gateway` has logged in (or tried): a used Client is not logged in again. */
  private gatewayUsed = false;
  /** Cancels a login in progress when the lease is lost meanwhile. */
  private tenure = new AbortController();

  constructor(private readonly options: DiscordGatewayOptions) {
    this.gateway = this.newClient();
  }

  /** The gateway client now (another one after a handover in cluster mode). */
  get client(): Client {
    return this.gateway;
  }

  /** Cluster mode: whether the gateway is held by lease. */
  get leased(): boolean {
    return this.options.lease !== undefined;
  }

  /** Disconnect for good (close). */
  async destroy(): Promise<void> {
    this.tenure.abort();
    await this.gateway.destroy();
  }

  /** Cluster mode: whether this instance holds the gateway now; outside it, always. */
  get holdsGateway(): boolean {
    return this.options.lease ? this.options.lease.held : true;
  }

  private newClient(): Client {
    const client = new Client({
      intents: INTENTS,
      partials: PARTIALS,
      // A second lock besides outbound.ts: whatever discord.js sends by itself pings nobody.
      allowedMentions: { parse: [], repliedUser: false },
      rest: restOptions(this.options.config),
    });
    this.options.listen(client);
    return client;
  }

  /**
   * Log in and wait until the gateway is ready (guilds known). In cluster mode only the
   * instance that takes the gateway's lease logs in; the others resolve at once, standing by,
   * and log in when the lease comes to them.
   */
  async start(): Promise<DiscordStartInfo> {
    const lease = this.options.lease;
    if (!lease) return this.connect();
    const held = await lease.start({ onAcquired: () => this.takeOver(), onLost: () => this.standDown() });
    if (held) {
      try {
        return { ...(await this.connect()), gateway: 'holder' };
      } catch (error) {
        await lease.release().catch(() => undefined);
        throw error;
      }
    }
    // A standby posts (a session it owns answers through REST): check the token now, not at takeover.
    let user: APIUser;
    try {
      user = await this.whoAmI();
    } catch (error) {
      await lease.release().catch(() => undefined);
      throw error;
    }
    this.options.identified(user.id);
    this.options.logger.info({ botUserId: user.id }, 'Discord gateway: standing by (another instance holds it)');
    return { botUserId: user.id, gateway: 'standby' };
  }

  /** The bot user, through REST (a check of DISCORD_TOKEN without the gateway). */
  private async whoAmI(): Promise<APIUser> {
    try {
      return (await this.options.rest.get(Routes.user())) as APIUser;
    } catch (error) {
      throw this.loginError(error);
    }
  }

  /** What a failed login or token check says: Discord unreachable, or the token refused. */
  private loginError(error: unknown): Error {
    // discord.js says TokenInvalid for a 401; a network failure carries the system's code.
    const reason = error instanceof Error ? error.message : String(error);
    const code =
      (error as { code?: unknown; cause?: { code?: unknown } }).code ??
      (error as { cause?: { code?: unknown } }).cause?.code;
    const unreachable = typeof code === 'string' && /^(E[A-Z]+|UND_ERR_\w+|CERT_\w+|\w+_TLS_\w+)$/.test(code);
    const url = `${this.options.config.DISCORD_API_URL ?? 'https://discord.com/api'}/v10`;
    // Gateway close 4014: a privileged intent the application has not turned on. Of INTENTS
    // only Message Content is privileged; the token itself was accepted.
    if (/disallowed intents/i.test(reason)) {
      return new Error(
        `Discord refused the Message Content intent (${reason}): the bot needs it to read replies in its threads. ` +
          'Turn on Message Content Intent in the Developer Portal → your application → Bot → Privileged Gateway Intents, then start again (manifest/discord.md)',
      );
    }
    return new Error(
      unreachable ? `Could not reach Discord at ${url}: ${reason}` : `Discord did not accept DISCORD_TOKEN: ${reason}`,
    );
  }

  /** The lease came to this instance (its holder died or left): connect the gateway. */
  private async takeOver(): Promise<void> {
    if (!this.options.taking()) return;
    const { logger } = this.options;
    logger.info({}, 'Discord gateway: taking over (the lease is ours)');
    try {
      if (this.gatewayUsed) this.replaceClient();
      const info = await this.connect();
      logger.info({ botUserId: info.botUserId, guilds: info.guilds }, 'Discord gateway: connected (holding it)');
    } catch (error) {
      if (this.tenure.signal.aborted) return; // lost meanwhile: standDown disconnected it
      logger.error({ err: error }, 'Discord gateway: could not connect after taking the lease; giving it up');
      this.replaceClient();
      await this.options.lease?.yieldToOthers();
    }
  }

  /**
   * The lease is gone (another instance took it, or it could not be renewed in time): drop the
   * gateway connection now, before the lease can run out and another instance connect. REST
   * stays: sessions this instance owns still post.
   */
  private async standDown(): Promise<void> {
    this.options.logger.warn({}, 'Discord gateway: lease lost; disconnecting (another instance takes over)');
    this.replaceClient();
  }

  /** End this tenure's client (destroyed in the background) and prepare a fresh one. */
  private replaceClient(): void {
    const old = this.gateway;
    this.tenure.abort();
    this.tenure = new AbortController();
    this.gateway = this.newClient();
    this.gatewayUsed = false;
    // Its events go nowhere from now on; an 'error' without a listener would throw, so one stays.
    old.removeAllListeners();
    old.on(Events.Error, (error) =>
      this.options.logger.debug({ err: error }, 'Discord: a former gateway client failed while closing'),
    );
    old
      .destroy()
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'Discord: could not close a gateway connection'),
      );
  }

  /** Log this tenure's client in and wait until the gateway is ready (guilds known). */
  private async connect(): Promise<DiscordGatewayInfo> {
    const client = this.gateway;
    const signal = this.tenure.signal;
    this.gatewayUsed = true;
    const ready = once(client, Events.ClientReady, { signal });
    ready.catch(() => undefined); // a failed login rejects below; an abort is this tenure's end
    try {
      await client.login(this.options.config.DISCORD_TOKEN);
    } catch (error) {
      throw this.loginError(error);
    }
    await ready;
    const user = client.user;
    if (!user) throw new Error('Discord is ready but the bot user is unknown');
    this.options.identified(user.id);
    const applicationId = client.application?.id ?? user.id;
    try {
      await registerSlashCommands(
        client as Client<true>,
        discordGuildIds(this.options.config.DISCORD_GUILD_ID),
        this.options.logger,
      );
    } catch (error) {
      // Not fatal: mentions, buttons and 🛑 work without them.
      this.options.logger.warn({ err: error }, 'could not register the Discord slash commands');
    }
    return {
      botUserId: user.id,
      guilds: client.guilds.cache.size,
      inviteUrl: `https://discord.com/oauth2/authorize?client_id=${applicationId}&scope=bot%20applications.commands&permissions=${INVITE_PERMISSIONS}`,
    };
  }

  /** Disconnect, then release the lease (a standby connects at its next retry, not a lease later). */
  async leave(): Promise<void> {
    this.tenure.abort();
    await this.gateway.destroy();
    await this.options.lease
      ?.release()
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error },
          'Discord: could not release the gateway lease (it runs out on its own)',
        ),
      );
  }
}

/** REST options shared by the posting client and every gateway client: DISCORD_API_URL when set. */
export function restOptions(config: Config): { api?: string; makeRequest: typeof makeDiscordRequest } {
  return {
    makeRequest: makeDiscordRequest,
    ...(config.DISCORD_API_URL ? { api: config.DISCORD_API_URL.replace(/\/+$/, '') } : {}),
  };
}
