// Answers for one person: a refusal, a stale click, a command's output. Discord has an
// ephemeral answer only for interactions (a click's follow-up); a message's or a reaction's
// answer goes to the person's DMs, or, when they do not accept DMs from the bot, as a reply in
// the channel that pings nobody.
import { MessageFlags, type ButtonInteraction } from 'discord.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { safeContent, type DiscordOutbound } from './outbound.js';

/** A click's answer, seen only by the person who clicked (an ephemeral follow-up). */
export async function whisperToClicker(
  interaction: ButtonInteraction,
  text: string,
  logger: EngineLogger,
): Promise<void> {
  await interaction
    .followUp({ content: safeContent(text), flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } })
    .catch((error: unknown) => logger.warn({ err: error }, 'could not answer a click privately'));
}

/** An answer to a message or a reaction for one person: by DM, else as a reply to `replyTo` in `channelId`. */
export async function whisperToPerson(
  outbound: DiscordOutbound,
  logger: EngineLogger,
  to: { userId: string; channelId: string; replyTo: string },
  text: string,
): Promise<void> {
  try {
    const dm = await outbound.dmChannel(to.userId);
    await outbound.post(dm, { content: text });
  } catch (error) {
    logger.info({ err: error }, 'could not answer by DM; replying in the channel instead');
    await outbound
      .post(to.channelId, { content: text, replyTo: to.replyTo })
      .catch((failure: unknown) => logger.warn({ err: failure }, 'could not answer in the channel either'));
  }
}
