// What a Discord message shares besides its own text: its attachments, and for a forward
// (`message_reference.type` FORWARD, empty `content`) the forwarded message's text and
// attachments, which Discord puts in `message_snapshots` (discord.js: `message.messageSnapshots`,
// each a partial Message without an author). Nothing is fetched here: the files are described
// (`IncomingFile`, platform 'discord') and fetched by the files room when a turn takes the
// message, through the Discord file source (file-transfer.ts).
import { MessageReferenceType, type Attachment, type Message, type MessageSnapshot } from 'discord.js';
import type { IncomingFile } from '../../src/engine/index.js';

/** A message's files as the session takes them: its own attachments, then a forward's. */
export function messageFiles(message: Message): IncomingFile[] {
  const attachments = [...message.attachments.values()];
  for (const snapshot of forwardedSnapshots(message)) attachments.push(...snapshot.attachments.values());
  return attachments.map(incomingFile);
}

/** The forwarded messages' texts (as `readable` renders them), each marked as forwarded; empty for a message that is no forward. */
export function forwardedText(message: Message, readable: (snapshot: MessageSnapshot) => string): string {
  return forwardedSnapshots(message)
    .map((snapshot) => readable(snapshot).trim())
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
