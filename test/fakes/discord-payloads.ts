// Wire shapes of the fake Discord (API and Gateway v10, JSON): the fixed ids of one fake guild
// and its people, snowflakes that carry their creation time, and builders for the objects the
// fake sends INTO a bot (users, members, channels, threads, messages, interactions, reactions).
// Every builder returns the discord-api-types shape discord.js itself is typed against, so a
// field the real client needs and the fake forgot is a type error here, not a silent `undefined`.
// The one idea: an id is a snowflake, `((ms − 1420070400000) << 22) | worker | increment` as a
// decimal string, so `createdTimestamp` on the client is the moment the fake made the object,
// and backdating an interaction is done by backdating its id. (`until` is the polling wait
// every Discord fake shares.)
import type {
  APIChannel,
  APIDMChannel,
  APIGuildMember,
  APIMessage,
  APIMessageComponentInteraction,
  APIModalSubmitInteraction,
  APIChatInputApplicationCommandInteraction,
  APIApplicationCommandInteractionDataOption,
  APITextChannel,
  APIThreadChannel,
  APIUser,
  ChannelFlags,
  GatewayMessageCreateDispatchData,
  GuildMemberFlags,
  ThreadMemberFlags,
  UserFlags,
  GatewayMessageReactionAddDispatchData,
} from 'discord.js';

/** Discord's epoch (2015-01-01T00:00:00Z), the zero of every snowflake's time part. */
const DISCORD_EPOCH_MS = 1_420_070_400_000;

/** A snowflake fixed forever: the ids of the seeded guild do not change between runs. */
function fixedSnowflake(iso: string, increment: number): string {
  return ((BigInt(Date.parse(iso) - DISCORD_EPOCH_MS) << 22n) | BigInt(increment)).toString();
}

let increment = 0;

/**
 * A new snowflake for `atMs` (default now): worker 1, process 0, a process-wide increment.
 * Ids made later sort after ids made earlier, as Discord's do (message order is id order).
 */
export function snowflake(atMs = Date.now()): string {
  increment = (increment + 1) & 0xfff;
  return ((BigInt(atMs - DISCORD_EPOCH_MS) << 22n) | (1n << 17n) | BigInt(increment)).toString();
}

/** The creation time (ms since 1970) written in a snowflake. */
export function snowflakeTime(id: string): number {
  return Number(BigInt(id) >> 22n) + DISCORD_EPOCH_MS;
}

/** Compare two snowflakes numerically (string order is wrong once lengths differ). */
export function compareSnowflakes(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isoTime(ms = Date.now()): string {
  return new Date(ms).toISOString();
}

/** The fake world. The bot's user id equals its application id, as for every app made since 2020. */
export const DISCORD_IDS = {
  applicationId: fixedSnowflake('2024-01-02T00:00:00Z', 1),
  botUserId: fixedSnowflake('2024-01-02T00:00:00Z', 1),
  botUsername: 'fakebot',
  guildId: fixedSnowflake('2024-01-01T00:00:00Z', 1),
  guildName: 'Fake Guild',
  /** The @everyone role shares the guild's id. */
  everyoneRoleId: fixedSnowflake('2024-01-01T00:00:00Z', 1),
  /** A role to mention (`<@&id>`). */
  teamRoleId: fixedSnowflake('2024-01-01T00:00:00Z', 2),
  generalChannelId: fixedSnowflake('2024-01-01T00:00:01Z', 1),
  randomChannelId: fixedSnowflake('2024-01-01T00:00:01Z', 2),
  /** A message in #general that an active thread (same id, as Discord does) was started from. */
  seededThreadId: fixedSnowflake('2025-06-01T12:00:00Z', 1),
  seededThreadName: 'earlier conversation',
  humanUserId: fixedSnowflake('2023-05-05T00:00:00Z', 1),
  otherHumanUserId: fixedSnowflake('2023-05-05T00:00:00Z', 2),
  otherBotUserId: fixedSnowflake('2023-05-05T00:00:00Z', 3),
} as const;

/**
 * A token of the real shape (base64 of the user id, a timestamp part, an HMAC part). The fake
 * accepts exactly this one unless told otherwise: a different token fails `GET /gateway/bot`
 * with 401 (discord.js: `TokenInvalid`) and Identify with close code 4004.
 */
export const DISCORD_TOKEN = `${Buffer.from(DISCORD_IDS.botUserId).toString('base64url')}.Zm9vYm.fake-hmac-part-for-tests-only-0000000`;

export interface FakeDiscordUser {
  id: string;
  username: string;
  globalName: string | null;
  bot?: boolean;
  /** Not a member of the fake guild (someone who can only DM the bot, or is in another server only). */
  outsider?: boolean;
}

export const DISCORD_USERS: readonly FakeDiscordUser[] = [
  { id: DISCORD_IDS.botUserId, username: DISCORD_IDS.botUsername, globalName: 'Fake Bot', bot: true },
  { id: DISCORD_IDS.humanUserId, username: 'ada', globalName: 'Ada Lovelace' },
  { id: DISCORD_IDS.otherHumanUserId, username: 'grace', globalName: 'Grace Hopper' },
  { id: DISCORD_IDS.otherBotUserId, username: 'otherbot', globalName: 'Other Bot', bot: true },
];

export function userObject(user: FakeDiscordUser): APIUser {
  return {
    id: user.id,
    username: user.username,
    // Discord retired discriminators in 2023: every migrated account reports "0".
    discriminator: '0',
    global_name: user.globalName,
    avatar: null,
    ...(user.bot ? { bot: true } : {}),
    public_flags: 0 as UserFlags,
    flags: 0 as UserFlags,
  };
}

/** A guild member as sent with a user (`member.user` present) — the shape in GUILD_CREATE and interactions. */
export function memberObject(
  user: FakeDiscordUser,
  joinedAt = '2024-01-03T00:00:00.000Z',
): APIGuildMember & { user: APIUser } {
  return {
    user: userObject(user),
    nick: null,
    roles: [],
    joined_at: joinedAt,
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0 as GuildMemberFlags,
    pending: false,
    communication_disabled_until: null,
  };
}

/** The member object without `user`, as Discord puts it on MESSAGE_CREATE and reactions. */
export function memberWithoutUser(user: FakeDiscordUser): Omit<APIGuildMember, 'user'> {
  const { user: _user, ...rest } = memberObject(user);
  return rest;
}

export function textChannelObject(options: {
  id: string;
  name: string;
  position: number;
  guildId?: string;
  topic?: string | null;
}): APITextChannel {
  return {
    id: options.id,
    type: 0,
    guild_id: options.guildId ?? DISCORD_IDS.guildId,
    name: options.name,
    position: options.position,
    permission_overwrites: [],
    parent_id: null,
    nsfw: false,
    topic: options.topic ?? null,
    last_message_id: null,
    rate_limit_per_user: 0,
    default_auto_archive_duration: 1440,
    flags: 0 as ChannelFlags,
  };
}

export interface ThreadSpec {
  id: string;
  parentId: string;
  /** The server the parent channel is in (default the fake guild). */
  guildId?: string;
  name: string;
  ownerId: string;
  /** 11 public (the default), 12 private, 10 announcement. */
  type?: 10 | 11 | 12;
  autoArchiveDuration?: 60 | 1440 | 4320 | 10080;
  createdAt?: number;
  /** Whether the bot is a member: adds `member` (Discord includes it for threads the bot joined). */
  botIsMember?: boolean;
}

export function threadObject(spec: ThreadSpec): APIThreadChannel {
  const createdAt = spec.createdAt ?? Date.now();
  return {
    id: spec.id,
    type: spec.type ?? 11,
    guild_id: spec.guildId ?? DISCORD_IDS.guildId,
    parent_id: spec.parentId,
    owner_id: spec.ownerId,
    name: spec.name,
    last_message_id: null,
    rate_limit_per_user: 0,
    message_count: 0,
    member_count: spec.botIsMember ? 1 : 0,
    total_message_sent: 0,
    flags: 0 as ChannelFlags,
    applied_tags: [],
    thread_metadata: {
      archived: false,
      auto_archive_duration: spec.autoArchiveDuration ?? 1440,
      archive_timestamp: isoTime(createdAt),
      locked: false,
      create_timestamp: isoTime(createdAt),
    },
    ...(spec.botIsMember
      ? {
          member: {
            id: spec.id,
            user_id: DISCORD_IDS.botUserId,
            join_timestamp: isoTime(createdAt),
            flags: 0 as ThreadMemberFlags,
          },
        }
      : {}),
  };
}

export function dmChannelObject(id: string, recipient: FakeDiscordUser): APIDMChannel {
  return {
    id,
    type: 1,
    last_message_id: null,
    recipients: [userObject(recipient)],
    flags: 0 as ChannelFlags,
  } as APIDMChannel;
}

export interface MessageSpec {
  id?: string;
  channelId: string;
  author: FakeDiscordUser;
  content: string;
  at?: number;
  /** 0 default, 19 reply, 20 chat-input command response, 21 thread starter… */
  type?: number;
  mentions?: APIUser[];
  mentionRoles?: string[];
  mentionEveryone?: boolean;
  components?: unknown[];
  embeds?: unknown[];
  attachments?: unknown[];
  flags?: number;
  messageReference?: { message_id: string; channel_id: string; guild_id?: string; type?: number };
  referencedMessage?: APIMessage | null;
  /** A forward's copies of the forwarded message (`message_reference.type` 1): `{ message: { content, attachments, … } }` each. */
  messageSnapshots?: unknown[];
  /** Set for interaction responses and follow-ups (Discord sends them as the app's webhook). */
  webhookId?: string;
  applicationId?: string;
  interactionMetadata?: Record<string, unknown>;
  tts?: boolean;
  nonce?: string | number;
}

/** A message as REST returns it (no `member`, no `guild_id`: the gateway adds those). */
export function messageObject(spec: MessageSpec): APIMessage {
  const at = spec.at ?? Date.now();
  const message = {
    id: spec.id ?? snowflake(at),
    channel_id: spec.channelId,
    author: userObject(spec.author),
    content: spec.content,
    timestamp: isoTime(at),
    edited_timestamp: null,
    tts: spec.tts ?? false,
    mention_everyone: spec.mentionEveryone ?? false,
    mentions: spec.mentions ?? [],
    mention_roles: spec.mentionRoles ?? [],
    attachments: spec.attachments ?? [],
    embeds: spec.embeds ?? [],
    components: spec.components ?? [],
    pinned: false,
    type: spec.type ?? 0,
    flags: spec.flags ?? 0,
    ...(spec.messageReference ? { message_reference: { type: 0, ...spec.messageReference } } : {}),
    ...(spec.referencedMessage !== undefined ? { referenced_message: spec.referencedMessage } : {}),
    ...(spec.messageSnapshots ? { message_snapshots: spec.messageSnapshots } : {}),
    ...(spec.webhookId ? { webhook_id: spec.webhookId } : {}),
    ...(spec.applicationId ? { application_id: spec.applicationId } : {}),
    ...(spec.interactionMetadata ? { interaction_metadata: spec.interactionMetadata } : {}),
    ...(spec.nonce !== undefined ? { nonce: spec.nonce } : {}),
  };
  return message as APIMessage;
}

/**
 * MESSAGE_CREATE / MESSAGE_UPDATE data: the REST message plus `guild_id`, the author's `member`
 * and each mentioned user's `member` (guild messages only; webhook messages carry no member).
 */
export function gatewayMessage(
  message: APIMessage,
  guildId: string | undefined,
  findUser: (id: string) => FakeDiscordUser | undefined,
): GatewayMessageCreateDispatchData {
  if (guildId === undefined) return { ...message, mentions: message.mentions.map((user) => ({ ...user })) };
  const author = findUser(message.author.id);
  return {
    ...message,
    guild_id: guildId,
    ...(author && !message.webhook_id ? { member: memberWithoutUser(author) } : {}),
    mentions: message.mentions.map((user) => {
      const known = findUser(user.id);
      return known ? { ...user, member: memberWithoutUser(known) } : { ...user };
    }),
  };
}

/** `<@id>`: how a user mention is written in content. */
export function mention(userId: string): string {
  return `<@${userId}>`;
}

export function reactionAddPayload(options: {
  user: FakeDiscordUser;
  channelId: string;
  messageId: string;
  guildId?: string;
  emoji: { id: string | null; name: string; animated?: boolean };
  messageAuthorId?: string;
}): GatewayMessageReactionAddDispatchData {
  return {
    user_id: options.user.id,
    channel_id: options.channelId,
    message_id: options.messageId,
    ...(options.guildId ? { guild_id: options.guildId, member: memberObject(options.user) } : {}),
    emoji: options.emoji,
    ...(options.messageAuthorId ? { message_author_id: options.messageAuthorId } : {}),
    burst: false,
    burst_colors: [],
    type: 0,
  };
}

/** What every interaction carries besides its type and data. */
interface InteractionBase {
  id: string;
  token: string;
  user: FakeDiscordUser;
  channel: APIChannel;
  guildId: string | undefined;
  /** The largest file the app may upload in reply (Discord computes it from the server's boosts); default 10 MiB. */
  attachmentSizeLimit?: number;
}

/** The bot's permissions in the channel (`app_permissions`): a broad set, as an admin-less bot role would have. */
export const APP_PERMISSIONS = '1829587348619263';
/** The clicking member's permissions. */
export const MEMBER_PERMISSIONS = '1829587348619263';

function interactionCommon(base: InteractionBase): Record<string, unknown> {
  return {
    id: base.id,
    application_id: DISCORD_IDS.applicationId,
    token: base.token,
    version: 1,
    channel: base.channel,
    channel_id: base.channel.id,
    ...(base.guildId
      ? {
          guild_id: base.guildId,
          guild: { id: base.guildId, locale: 'en-US', features: [] },
          guild_locale: 'en-US',
          member: { ...memberObject(base.user), permissions: MEMBER_PERMISSIONS },
          // 0 = guild install, 1 = user install; the value is the guild id for a guild install.
          authorizing_integration_owners: { '0': base.guildId },
          context: 0,
        }
      : { user: userObject(base.user), authorizing_integration_owners: { '0': base.user.id }, context: 1 }),
    locale: 'en-US',
    app_permissions: APP_PERMISSIONS,
    entitlements: [],
    attachment_size_limit: base.attachmentSizeLimit ?? 10_485_760,
  };
}

/** INTERACTION_CREATE type 3 (message component), component_type 2 (button). */
export function buttonInteractionPayload(
  base: InteractionBase & { customId: string; message: APIMessage },
): APIMessageComponentInteraction {
  return {
    ...interactionCommon(base),
    type: 3,
    message: base.message,
    data: { custom_id: base.customId, component_type: 2 },
  } as unknown as APIMessageComponentInteraction;
}

/**
 * INTERACTION_CREATE type 5 (modal submit): the modal's custom id and what each text input
 * holds (as action rows of one text input each, the shape discord.js reads); from a button's
 * modal, the message that button is on.
 */
export function modalSubmitPayload(
  base: InteractionBase & { customId: string; values: Record<string, string>; message?: APIMessage },
): APIModalSubmitInteraction {
  return {
    ...interactionCommon(base),
    type: 5,
    ...(base.message ? { message: base.message } : {}),
    data: {
      custom_id: base.customId,
      components: Object.entries(base.values).map(([customId, value]) => ({
        type: 1,
        components: [{ type: 4, custom_id: customId, value }],
      })),
    },
  } as unknown as APIModalSubmitInteraction;
}

/** INTERACTION_CREATE type 2 (application command), command type 1 (chat input: a slash command). */
export function slashCommandPayload(
  base: InteractionBase & {
    commandId: string;
    name: string;
    options?: APIApplicationCommandInteractionDataOption[];
    commandGuildId?: string;
    /** `data.resolved`: the users, members and channels that user (6) and channel (7) options name. */
    resolved?: Record<string, unknown>;
  },
): APIChatInputApplicationCommandInteraction {
  return {
    ...interactionCommon(base),
    type: 2,
    data: {
      id: base.commandId,
      name: base.name,
      type: 1,
      ...(base.options?.length ? { options: base.options } : {}),
      ...(base.resolved ? { resolved: base.resolved } : {}),
      // Only a guild-registered command carries its guild's id.
      ...(base.commandGuildId ? { guild_id: base.commandGuildId } : {}),
    },
  } as unknown as APIChatInputApplicationCommandInteraction;
}

/**
 * Resolve with `probe()`'s first defined value, checking every 5 ms; reject after `timeoutMs`
 * saying `what` was awaited. The fakes' waits (a call, a connection, a resume) all use it.
 */
export async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
