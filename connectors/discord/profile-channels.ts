// The Discord channels the profiles name, looked up once the connector has started (`GET
// /channels/:id` through the bot's own REST client, so a standby instance in cluster mode
// checks them too): one that does not exist (10003 Unknown Channel) or that the bot cannot
// see (50001 Missing Access) is a warning naming the profile and the id
// (connectors/shared/profile-channels.ts).
import { DiscordAPIError, Routes, type REST } from 'discord.js';
import { CHECK_TIMEOUT_MS } from '../../src/app/preflight.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { Profile } from '../../src/profiles/profile-schema.js';
import { checkProfileChannels, type ChannelSeen, type ProfileChannelReport } from '../shared/profile-channels.js';

export function checkDiscordProfileChannels(
  rest: Pick<REST, 'get'>,
  profiles: readonly Profile[],
  logger: EngineLogger,
): Promise<ProfileChannelReport> {
  return checkProfileChannels({
    platform: 'Discord',
    key: 'discordChannel',
    profiles,
    logger,
    lookup: (id) => lookup(rest, id),
  });
}

async function lookup(rest: Pick<REST, 'get'>, id: string): Promise<ChannelSeen> {
  try {
    await rest.get(Routes.channel(id), { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    return { seen: true };
  } catch (error) {
    // Discord's own code and words: 10003 Unknown Channel, 50001 Missing Access, 50035 for an id that is not a snowflake.
    if (error instanceof DiscordAPIError) return { seen: false, reason: `${error.code} ${error.message}` };
    return { seen: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
