// What a Discord message brings to a conversation: its text for the model (the bot's mention
// removed, other mentions as @names), its attachments, and for a forward
// (`message_reference.type` FORWARD, empty `content`) the forwarded message's text and
// attachments, which Discord puts in `message_snapshots` (discord.js: `message.messageSnapshots`,
// each a partial Message without an author); and the name of a thread started on it. Nothing is
// fetched here: the files are described (`IncomingFile`, platform 'discord') and fetched by the
// files room when a turn takes the message, through the Discord file source (file-transfer.ts).
import { MessageReferenceType, type Attachment, type Message, type MessageSnapshot } from 'discord.js';
import type { IncomingFile } from '../../src/engine/index.js';
import { safeCutIndex } from '../shared/visible-text.js';

const THREAD_NAME_MAX = 100;

/** The text for the model: the message's own, then a forward's, each made readable. Empty for a message of files alone. */
export function messageText(message: Message, botUserId: string): string {
  return [readableText(message, botUserId), forwardedText(message, botUserId)].filter(Boolean).join('\n\n');
}

/** A thread's name from the request: one line, 1–100 characters. */
export function threadName(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (!line) return 'Conversation';
  if (line.length <= THREAD_NAME_MAX) return line;
  return `${line.slice(0, safeCutIndex(line, THREAD_NAME_MAX - 1))}…`;
}

/** The bot's mention removed, other people's mentions as @names. */
function readableText(message: Pick<Message, 'content' | 'mentions'>, botUserId: string): string {
  return message.content
    .replace(new RegExp(`<@!?${botUserId}>`, 'g'), '')
    .replace(/<@!?(\d+)>/g, (whole, id: string) => {
      const user = message.mentions.users.get(id);
      return user ? `@${user.globalName ?? user.username}` : whole;
    })
    .trim();
}

/** A message's files as the session takes them: its own attachments, then a forward's. */
export function messageFiles(message: Message): IncomingFile[] {
  const attachments = [...message.attachments.values()];
  for (const snapshot of forwardedSnapshots(message)) attachments.push(...snapshot.attachments.values());
  return attachments.map(incomingFile);
}

/** The forwarded messages' texts, each marked as forwarded; empty for a message that is no forward. */
function forwardedText(message: Message, botUserId: string): string {
  return forwardedSnapshots(message)
    .map((snapshot) => readableText(snapshot, botUserId))
    .filter((text) => text.length > 0)
    .map((text) => `[Forwarded message]\n${text}`)
    .join('\n\n');
}

function forwardedSnapshots(message: Message): MessageSnapshot[] {
  if (message.reference?.type !== MessageReferenceType.Forward) return [];
  return [...message.messageSnapshots.values()];
}

function incomingFile(attachment: Attachment): IncomingFile {
  return {
    platform: 'discord',
    id: attachment.id,
    name: attachment.name,
    url: attachment.url,
    ...(attachment.contentType ? { mimeType: attachment.contentType } : {}),
    size: attachment.size,
  };
}
