// Which session a Discord message, reaction or slash command belongs to. The session is the
// thread: { platform 'discord', workspace: guild id, channel: the parent channel, thread: the
// thread id }. A DM channel is its own thread (workspace 'dm'). A mention in a channel opens a
// thread on that message, and Discord gives the thread the message's id, so until then the
// message's id stands for the thread.
import type { Channel, ChatInputCommandInteraction, Message, PartialMessage } from 'discord.js';
import { sessionIdOf, type SessionKey } from '../../src/sessions/thread-records.js';

/** The workspace of a DM session (a DM belongs to no guild). */
export const DM_WORKSPACE = 'dm';

/** A channel the gateway's cache holds, by id. */
export type ChannelLookup = (channelId: string) => Channel | undefined;

/** The session a message belongs to; undefined for a message in a thread whose parent Discord did not give. */
export function sessionKeyOfMessage(message: Message): SessionKey | undefined {
  if (!message.guildId)
    return { platform: 'discord', workspace: DM_WORKSPACE, channel: message.channelId, thread: message.channelId };
  if (message.channel.isThread()) {
    const parent = message.channel.parentId;
    return parent
      ? { platform: 'discord', workspace: message.guildId, channel: parent, thread: message.channelId }
      : undefined;
  }
  return { platform: 'discord', workspace: message.guildId, channel: message.channelId, thread: message.id };
}

/** The session a reaction's message belongs to when no message of the bot's is recorded there. */
export function sessionIdOfReacted(
  message: Message | PartialMessage,
  guildId: string | null,
  channels: ChannelLookup,
): string {
  if (!guildId)
    return sessionIdOf({
      platform: 'discord',
      workspace: DM_WORKSPACE,
      channel: message.channelId,
      thread: message.channelId,
    });
  const channel = channels(message.channelId);
  if (channel?.isThread() && channel.parentId)
    return sessionIdOf({ platform: 'discord', workspace: guildId, channel: channel.parentId, thread: channel.id });
  // The thread's starter message, in the parent channel: the thread has its id.
  return sessionIdOf({ platform: 'discord', workspace: guildId, channel: message.channelId, thread: message.id });
}

/** The session a slash command acts on: the thread (or DM) it was run in; undefined outside a thread. */
export function sessionKeyOfCommand(
  interaction: ChatInputCommandInteraction,
  channels: ChannelLookup,
): SessionKey | undefined {
  if (!interaction.guildId)
    return {
      platform: 'discord',
      workspace: DM_WORKSPACE,
      channel: interaction.channelId,
      thread: interaction.channelId,
    };
  const channel = interaction.channel ?? channels(interaction.channelId);
  if (!channel?.isThread() || !channel.parentId) return undefined;
  return { platform: 'discord', workspace: interaction.guildId, channel: channel.parentId, thread: channel.id };
}
