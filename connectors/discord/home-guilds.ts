// The bot's home servers on Discord, at run time: who is an outsider (`external` to the
// session layer, so `ALLOWED_USERS=*` does not include them), and what the start-up says
// about the servers it is in. src/app/discord-home.ts holds the words, shared with the doctor.
//
// - DISCORD_GUILD_ID set (one id or several): a message or command in a listed server is from
//   a member; in any other server, from an outsider, whoever they are, refused unless their id
//   is in ALLOWED_USERS or ADMINS (a stranger who added the bot to their own server cannot
//   use it there). A DM is from a member when the person is a member of a listed server.
// - Unset: every server the bot is in counts as home, and a DM is from a member when the
//   person is in any of them. Discord makes bots public by default, so the start-up asks
//   whether this one is and warns when it is (or when that cannot be told).
// - Start-up lines: listed servers the bot is not in (a typo, or not invited yet) and servers
//   it is in but not listed; a server joined while running is logged with what it counts as.
import { Routes, type Client, type Guild, type REST } from 'discord.js';
import {
  listedVerdict,
  readApplication,
  unlistedVerdict,
  type DiscordApplication,
} from '../../src/app/discord-home.js';
import { CHECK_TIMEOUT_MS } from '../../src/app/preflight.js';
import { discordGuildIds, type Config } from '../../src/config.js';
import type { EngineLogger } from '../../src/engine/index.js';

export interface HomeGuildsOptions {
  config: Config;
  /** The bot's REST client: the application lookup needs no gateway. */
  rest: REST;
  logger: EngineLogger;
}

export class HomeGuilds {
  /** DISCORD_GUILD_ID as a list; empty: none named, every server counts. */
  readonly listed: readonly string[];

  constructor(private readonly options: HomeGuildsOptions) {
    this.listed = discordGuildIds(options.config.DISCORD_GUILD_ID);
  }

  /** Whether a server's members are members: a listed one, or any when none is listed. */
  isHome(guildId: string): boolean {
    return this.listed.length === 0 || this.listed.includes(guildId);
  }

  /**
   * Whether a person is from outside the home servers: anyone in a server that is not home;
   * in a DM, someone who is a member of none of them (asked of Discord, cached by discord.js).
   */
  async isOutsider(client: Client, userId: string, guildId: string | null): Promise<boolean> {
    if (guildId) return !this.isHome(guildId);
    const guilds = this.listed.length > 0 ? this.listed : [...client.guilds.cache.keys()];
    for (const id of guilds) {
      // A listed server the bot is not in has no members it can see.
      const guild = client.guilds.cache.get(id);
      if (!guild) continue;
      try {
        await guild.members.fetch(userId);
        return false;
      } catch {
        // 10007 Unknown Member: not in this one
      }
    }
    return true;
  }

  /**
   * The start-up's line about the home servers: the listed ones; with none listed, whether the
   * application is public, a warning when it is or when Discord could not say. Never throws:
   * a failed lookup is a warning, not a failed start.
   */
  async checkHome(): Promise<void> {
    if (this.listed.length > 0) {
      this.options.logger.info({ guilds: this.listed }, `Discord: ${listedVerdict(this.listed).detail}`);
      return;
    }
    let application: DiscordApplication | { error: string };
    try {
      // Bounded: the start waits for this line, and discord.js alone would retry a silent Discord for a minute.
      application = readApplication(
        await this.options.rest.get(Routes.currentApplication(), { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) }),
      );
    } catch (error) {
      const silent = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const reason = silent
        ? `no answer within ${CHECK_TIMEOUT_MS / 1000} s`
        : error instanceof Error
          ? error.message
          : String(error);
      application = { error: `GET /applications/@me: ${reason}` };
    }
    const verdict = unlistedVerdict(application);
    const botPublic = 'bot_public' in application ? application.bot_public : undefined;
    if (verdict.status === 'warn') this.options.logger.warn({ botPublic }, `Discord: ${verdict.detail}`);
    else this.options.logger.info({ botPublic }, `Discord: ${verdict.detail}`);
  }

  /** Once the gateway is ready: what the servers the bot is in count as, where that needs saying. */
  reportGuilds(client: Client): void {
    if (this.listed.length === 0) return;
    const { logger } = this.options;
    const absent = this.listed.filter((id) => !client.guilds.cache.has(id));
    if (absent.length > 0) {
      logger.warn(
        { guilds: absent },
        'Discord: DISCORD_GUILD_ID lists servers the bot is not in (a wrong id, or not invited yet): nobody there can use it',
      );
    }
    const others = [...client.guilds.cache.values()].filter((guild) => !this.isHome(guild.id));
    if (others.length > 0) {
      logger.warn(
        { guilds: others.map(describe) },
        'Discord: the bot is in servers not in DISCORD_GUILD_ID: everyone there is an outsider (refused unless listed in ALLOWED_USERS or ADMINS)',
      );
    }
  }

  /** A server that added the bot while it runs. */
  joined(guild: Guild): void {
    const { logger } = this.options;
    if (this.listed.length === 0)
      logger.warn(
        { guild: describe(guild) },
        'Discord: added to a server; DISCORD_GUILD_ID is not set, so its members are members',
      );
    else if (this.isHome(guild.id))
      logger.info({ guild: describe(guild) }, 'Discord: added to a home server (DISCORD_GUILD_ID)');
    else
      logger.warn(
        { guild: describe(guild) },
        'Discord: added to a server not in DISCORD_GUILD_ID: everyone there is an outsider',
      );
  }
}

function describe(guild: Guild): string {
  return `${guild.name} (${guild.id})`;
}
