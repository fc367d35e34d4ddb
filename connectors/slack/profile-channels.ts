// The Slack channels the profiles name, looked up once the connector is connected
// (`conversations.info` through the bot's own client): one that does not exist or that the
// bot cannot see is a warning naming the profile and the id (connectors/shared/profile-channels.ts).
// A public channel the bot was not invited to is seen, but the bot hears nothing there yet.
import type { WebClient } from '@slack/web-api';
import type { EngineLogger } from '../../src/engine/index.js';
import type { Profile } from '../../src/profiles/profile-schema.js';
import { checkProfileChannels, type ChannelSeen, type ProfileChannelReport } from '../shared/profile-channels.js';

export function checkSlackProfileChannels(
  client: Pick<WebClient, 'conversations'>,
  profiles: readonly Profile[],
  logger: EngineLogger,
): Promise<ProfileChannelReport> {
  return checkProfileChannels({
    platform: 'Slack',
    key: 'slackChannel',
    profiles,
    logger,
    lookup: (id) => lookup(client, id),
  });
}

async function lookup(client: Pick<WebClient, 'conversations'>, id: string): Promise<ChannelSeen> {
  try {
    const answer = await client.conversations.info({ channel: id });
    if (answer.channel?.is_member === false && !answer.channel.is_im)
      return {
        seen: true,
        note: 'the bot is not a member yet: invite it there (/invite @the-bot) so it hears mentions',
      };
    return { seen: true };
  } catch (error) {
    // The WebClient's platform error carries Slack's own code (channel_not_found, missing_scope…).
    const code = (error as { data?: { error?: unknown } }).data?.error;
    return {
      seen: false,
      reason: typeof code === 'string' ? code : error instanceof Error ? error.message : String(error),
    };
  }
}
