// Every message the Discord connector sends passes through here: its text made inert for
// mass mentions (shared/mentions.ts, Discord dialect) and `allowed_mentions: { parse: [] }`,
// so no text, however it got there, can ping @everyone, @here, a role, or a person the bot
// did not mean to ping. Two locks: Discord honours allowed_mentions, and the text itself no
// longer holds a broadcast if that ever failed. A user is pinged only when a caller names
// them in `pingUsers`.
//
// Calls go through discord.js's REST client (`client.rest`), which waits out every 429 by its
// `retry_after` and retries the request itself: nothing here is sent twice.
import type { REST, RawFile } from 'discord.js';
import { Routes } from 'discord.js';
import { neutraliseBroadcasts } from '../shared/mentions.js';

/** Discord's limit for a message's `content`. */
export const MESSAGE_LIMIT = 2_000;

/** A button as Discord's API takes it (component type 2). */
export interface ApiButton {
  type: 2;
  style: 1 | 2 | 3 | 4;
  label: string;
  custom_id: string;
}

export interface ApiActionRow {
  type: 1;
  components: ApiButton[];
}

export interface OutgoingMessage {
  content: string;
  components?: ApiActionRow[];
  /** Reply to this message (same channel); no ping of its author. */
  replyTo?: string;
  files?: { name: string; text: string }[];
  /** The only users this message may ping. */
  pingUsers?: string[];
  /**
   * Post at most once under this nonce (≤ 25 characters): sent with `enforce_nonce`, so a
   * second post with it within a few minutes returns the message posted first and creates
   * none. Discord returns the nonce on the message it creates and over the gateway, never on
   * a message fetched later: it marks a post, it cannot be searched for.
   */
  nonce?: string;
}

/** Discord's limit for a message nonce. */
export const NONCE_MAX = 25;

function allowedMentions(pingUsers: readonly string[] = []): {
  parse: [];
  users?: string[];
  replied_user: false;
} {
  return { parse: [], ...(pingUsers.length > 0 ? { users: [...pingUsers] } : {}), replied_user: false };
}

/** The text as it may be sent: broadcasts inert, within Discord's 2,000 characters. */
export function safeContent(text: string): string {
  const inert = neutraliseBroadcasts(text, 'discord');
  return inert.length <= MESSAGE_LIMIT ? inert : `${inert.slice(0, MESSAGE_LIMIT - 1)}…`;
}

export class DiscordOutbound {
  constructor(private readonly rest: REST) {}

  /** Post a message; returns its id. */
  async post(channelId: string, message: OutgoingMessage): Promise<string> {
    const body: Record<string, unknown> = {
      content: safeContent(message.content),
      allowed_mentions: allowedMentions(message.pingUsers),
      ...(message.components ? { components: message.components } : {}),
      ...(message.replyTo ? { message_reference: { message_id: message.replyTo, fail_if_not_exists: false } } : {}),
      ...(message.nonce ? { nonce: message.nonce, enforce_nonce: true } : {}),
    };
    const files: RawFile[] | undefined = message.files?.map((file) => ({
      name: file.name,
      data: Buffer.from(file.text, 'utf8'),
      contentType: 'text/plain; charset=utf-8',
    }));
    if (files) body.attachments = files.map((file, index) => ({ id: index, filename: file.name }));
    const posted = (await this.rest.post(Routes.channelMessages(channelId), { body, ...(files ? { files } : {}) })) as {
      id: string;
    };
    return posted.id;
  }

  /**
   * Post one file with a comment (attach_file): multipart, as discord.js sends it, pinging
   * nobody. Returns the message's id. `signal` abandons the upload (the turn was stopped).
   */
  async upload(
    channelId: string,
    comment: string,
    file: { name: string; data: Uint8Array; contentType: string },
    signal?: AbortSignal,
  ): Promise<string> {
    const body = {
      content: safeContent(comment),
      allowed_mentions: allowedMentions(),
      attachments: [{ id: 0, filename: file.name }],
    };
    const posted = (await this.rest.post(Routes.channelMessages(channelId), {
      body,
      files: [{ name: file.name, data: file.data, contentType: file.contentType }],
      ...(signal ? { signal } : {}),
    })) as { id: string };
    return posted.id;
  }

  /** A newly signed link for an attachment's expired one (`POST /attachments/refresh-urls`); undefined when Discord gives none. */
  async refreshAttachmentUrl(url: string): Promise<string | undefined> {
    const answer = (await this.rest.post('/attachments/refresh-urls', { body: { attachment_urls: [url] } })) as {
      refreshed_urls?: { original?: unknown; refreshed?: unknown }[];
    };
    const refreshed = answer.refreshed_urls?.find((entry) => entry.original === url)?.refreshed;
    return typeof refreshed === 'string' ? refreshed : undefined;
  }

  /** Replace a message's text and buttons (attachments stay). */
  async edit(
    channelId: string,
    messageId: string,
    message: Pick<OutgoingMessage, 'content' | 'components' | 'pingUsers'>,
  ): Promise<void> {
    await this.rest.patch(Routes.channelMessage(channelId, messageId), {
      body: {
        content: safeContent(message.content),
        allowed_mentions: allowedMentions(message.pingUsers),
        components: message.components ?? [],
      },
    });
  }

  async react(channelId: string, messageId: string, emoji: string): Promise<void> {
    await this.rest.put(Routes.channelMessageOwnReaction(channelId, messageId, encodeURIComponent(emoji)));
  }

  async unreact(channelId: string, messageId: string, emoji: string): Promise<void> {
    await this.rest.delete(Routes.channelMessageOwnReaction(channelId, messageId, encodeURIComponent(emoji)));
  }

  /** The typing indicator: shown for about 10 seconds, or until the bot posts. */
  async typing(channelId: string): Promise<void> {
    await this.rest.post(Routes.channelTyping(channelId));
  }

  /** Start a thread on a message; returns the thread's id (Discord gives it the message's id). */
  async startThread(channelId: string, messageId: string, name: string): Promise<string> {
    const thread = (await this.rest.post(Routes.threads(channelId, messageId), {
      body: { name, auto_archive_duration: 1440 },
    })) as { id: string };
    return thread.id;
  }

  /** The DM channel with one user (created if needed). */
  async dmChannel(userId: string): Promise<string> {
    const channel = (await this.rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as { id: string };
    return channel.id;
  }
}
