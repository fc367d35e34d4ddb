// A Discord message on its way to a turn: whether it is the bot's to answer (the shared rule,
// shared/inbound-checks.ts), whether its author may use the bot, the thread a mention opens,
// and the session layer's `deliver`. Refusals go privately to the author (private-answers.ts).
//
// De-duplication is `deliver`'s: eventId `discord:<message id>`, persisted, so a gateway replay
// after a Resume, or a redelivery after a restart, starts no second turn; a second thread on
// the same message is refused by Discord (160004) and the existing one is used.
import { MessageType, type Message } from 'discord.js';
import type { MessageSource } from '../../src/engine/index.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import { isForTheBot, isFromBotOrItself } from '../shared/inbound-checks.js';
import { messageFiles, messageText, threadName } from './message-content.js';
import type { DiscordOutbound } from './outbound.js';
import { sessionKeyOfMessage } from './session-places.js';

/** Discord: "A thread has already been created for this message". */
const THREAD_ALREADY_EXISTS = 160004;

export interface InboundMessageDeps {
  manager: Pick<SessionManager, 'records' | 'admits' | 'deliver'>;
  outbound: Pick<DiscordOutbound, 'startThread'>;
  /** The bot's own user id (known once the gateway identified it). */
  botUserId: () => string;
  /** Whether a person is from outside the bot's home servers (home-guilds.ts). */
  isOutsider: (userId: string, guildId: string | null) => Promise<boolean>;
  /** An answer to the message for its author alone (private-answers.ts). */
  whisper: (userId: string, channelId: string, replyTo: string, text: string) => Promise<void>;
}

export async function takeMessage(deps: InboundMessageDeps, message: Message): Promise<void> {
  const botUserId = deps.botUserId();
  // Our own posts, other bots and webhooks never start turns; nor do joins, pins, thread notices.
  if (
    isFromBotOrItself(
      { id: message.author.id, bot: message.author.bot, webhook: Boolean(message.webhookId) },
      botUserId,
    )
  )
    return;
  if (message.type !== MessageType.Default && message.type !== MessageType.Reply) return;
  const { manager } = deps;
  const key = sessionKeyOfMessage(message);
  if (!key) return;
  // In a thread the bot works in, no mention is needed; elsewhere a thread is only joined by a mention.
  const place = {
    directMessage: !message.guildId,
    mentioned: message.mentions.users.has(botUserId),
    threadReply: message.channel.isThread(),
  };
  if (!(await isForTheBot(place, () => manager.records.isOurs(key)))) return;
  // A message made only of files is a message; a forward's text and files are in its snapshots.
  const text = messageText(message, botUserId);
  const attachments = messageFiles(message);
  if (!text && attachments.length === 0) return;
  // The door first: someone who may not use the bot gets no thread (`deliver` judges again).
  const external = await deps.isOutsider(message.author.id, message.guildId);
  const door = manager.admits(message.author.id, { external });
  if (!door.allowed)
    return deps.whisper(
      message.author.id,
      key.thread === message.id ? message.channelId : key.thread,
      message.id,
      door.reason,
    );
  if (key.thread === message.id && message.guildId)
    key.thread = await threadFor(deps.outbound, message, text || attachments.map((file) => file.name).join(', '));
  const source: MessageSource = {
    platform: 'discord',
    workspace: key.workspace,
    channel: key.channel,
    thread: key.thread,
    userId: message.author.id,
    userName: message.author.globalName ?? message.author.username,
    messageId: message.id,
    permalink: message.url,
  };
  // The files are only described here: they are fetched when a turn takes the message, so a
  // message `deliver` refuses (someone who may not steer) never has its files downloaded.
  const result = await manager.deliver(key, {
    text,
    userId: message.author.id,
    eventId: `discord:${message.id}`,
    external,
    source,
    ...(attachments.length > 0 ? { attachments } : {}),
  });
  if (result.status === 'refused') await deps.whisper(message.author.id, key.thread, message.id, result.reason);
  else if ('filesRefused' in result && result.filesRefused)
    await deps.whisper(message.author.id, key.thread, message.id, result.filesRefused);
}

/** Start a thread on the mention, named from the request; one that exists already is used. */
async function threadFor(outbound: InboundMessageDeps['outbound'], message: Message, text: string): Promise<string> {
  try {
    return await outbound.startThread(message.channelId, message.id, threadName(text));
  } catch (error) {
    // A replay of the mention (after a Resume or a restart): the thread is the one made then.
    if ((error as { code?: unknown }).code === THREAD_ALREADY_EXISTS) return message.id;
    throw error;
  }
}
