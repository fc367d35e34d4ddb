// The world behind the fake Discord: one guild (its channels, active threads and members), and
// optionally other servers the bot is in (a #general and their members each), the
// DM channels, every message as it stands now (after edits, deletions and reactions), the
// interactions handed to the bot and the application commands it registered. REST handlers and
// the test's "a user does X" helpers both change it; the gateway reads GUILD_CREATE from it.
// It does no I/O. A request the real API would refuse throws `DiscordApiError` (discord-limits.ts)
// with Discord's status, JSON error code and message, so the REST layer only has to serialise it.
import type {
  APIApplicationCommand,
  APIChannel,
  APIDMChannel,
  APIMessage,
  APITextChannel,
  APIThreadChannel,
  APIUser,
  GatewayGuildCreateDispatchData,
} from 'discord.js';
import {
  DISCORD_LIMITS,
  DiscordApiError,
  unknownChannel,
  unknownMessage,
  type AllowedMentions,
} from './discord-limits.js';
import {
  DISCORD_IDS,
  DISCORD_USERS,
  compareSnowflakes,
  dmChannelObject,
  isoTime,
  memberObject,
  messageObject,
  snowflake,
  textChannelObject,
  threadObject,
  userObject,
  type FakeDiscordUser,
  type MessageSpec,
} from './discord-payloads.js';

/** An interaction as the fake remembers it, to judge the bot's responses. */
export interface StoredInteraction {
  id: string;
  token: string;
  /** 2 application command, 3 message component, 5 modal submit. */
  type: 2 | 3 | 5;
  /** When Discord created it (the time in its id): the 3 s and 15 min windows count from here. */
  createdAt: number;
  channelId: string;
  guildId: string | undefined;
  userId: string;
  /** For a component (and a modal submitted from one): the message the button is on. */
  componentMessageId?: string;
  /** The initial response, once given (callback types 4, 5, 6, 7 or 9). */
  response?: { type: number; at: number; data?: unknown };
  /** What `…/messages/@original` refers to: the reply (4, 5) or the component's message (6, 7). */
  originalMessageId?: string;
  followUpIds: string[];
}

/**
 * Another server the bot is in, besides the fake guild: one text channel (#general) and the
 * members named (users the fake knows; mark them `outsider` to keep them out of the fake guild).
 */
export interface FakeOtherGuildSpec {
  id: string;
  name: string;
  memberIds: string[];
}

export interface FakeOtherGuild extends FakeOtherGuildSpec {
  /** Its #general. */
  channelId: string;
}

type GuildChannel = APITextChannel | APIThreadChannel;
export type AnyChannel = GuildChannel | APIDMChannel;

/** The channel type as the number on the wire: 0 text, 1 DM, 5 announcement, 10/11/12 threads. */
export function channelType(channel: APIChannel): number {
  const type: number = channel.type;
  return type;
}

/** A channel threads can be started in: text (0) or announcement (5). */
function isPostable(channel: AnyChannel): channel is APITextChannel {
  return channelType(channel) === 0 || channelType(channel) === 5;
}

export function isThread(channel: APIChannel): channel is APIThreadChannel {
  const type = channelType(channel);
  return type === 10 || type === 11 || type === 12;
}

const USER_MENTION = /<@!?(\d{15,21})>/g;
const ROLE_MENTION = /<@&(\d{15,21})>/g;

export class FakeDiscordGuild {
  readonly id: string = DISCORD_IDS.guildId;
  readonly name: string = DISCORD_IDS.guildName;
  readonly users = new Map<string, FakeDiscordUser>();
  readonly interactions = new Map<string, StoredInteraction>();
  /** Ephemeral replies and follow-ups: seen only by the clicking user, never in a channel's list. */
  readonly ephemeralMessages: APIMessage[] = [];
  /** Registered commands: `global` and per guild id. */
  readonly commands = new Map<string, APIApplicationCommand[]>();
  /** The other servers the bot is in, by id. */
  readonly otherGuilds = new Map<string, FakeOtherGuild>();
  /** The server's boost tier (`premium_tier`, 0–3): its upload limit follows (discord-limits.ts `uploadLimitForTier`). */
  premiumTier: 0 | 1 | 2 | 3 = 0;

  private readonly channels = new Map<string, AnyChannel>();
  private readonly messages = new Map<string, Map<string, APIMessage>>();
  private readonly reactionUsers = new Map<string, Set<string>>();
  private readonly allowedMentionsByMessage = new Map<string, AllowedMentions | undefined>();
  private readonly editCounts = new Map<string, number>();

  constructor(options: { users?: FakeDiscordUser[]; seedThread?: boolean; otherGuilds?: FakeOtherGuildSpec[] } = {}) {
    for (const user of [...DISCORD_USERS, ...(options.users ?? [])]) this.users.set(user.id, user);
    this.addChannel(textChannelObject({ id: DISCORD_IDS.generalChannelId, name: 'general', position: 0 }));
    this.addChannel(textChannelObject({ id: DISCORD_IDS.randomChannelId, name: 'random', position: 1 }));
    if (options.seedThread ?? true) this.seedThread();
    for (const spec of options.otherGuilds ?? []) this.addOtherGuild(spec);
  }

  // -------------------------------------------------------------------------------------------
  // Servers
  // -------------------------------------------------------------------------------------------

  /** Another server the bot is in, with its #general (FakeDiscord.joinGuild also tells the bot). */
  addOtherGuild(spec: FakeOtherGuildSpec): FakeOtherGuild {
    if (spec.id === this.id || this.otherGuilds.has(spec.id)) throw new Error(`a second server with id ${spec.id}`);
    for (const id of spec.memberIds) this.requireUser(id);
    const channelId = snowflake();
    this.addChannel(textChannelObject({ id: channelId, name: 'general', position: 0, guildId: spec.id }));
    const guild = { ...spec, memberIds: [...spec.memberIds], channelId };
    this.otherGuilds.set(spec.id, guild);
    return guild;
  }

  /** Every server the bot is in: the fake guild first. */
  get guildIds(): string[] {
    return [this.id, ...this.otherGuilds.keys()];
  }

  hasGuild(guildId: string): boolean {
    return guildId === this.id || this.otherGuilds.has(guildId);
  }

  /** Whether a user is a member of a server: the fake guild holds every user not marked `outsider`. */
  isMember(guildId: string, userId: string): boolean {
    const user = this.users.get(userId);
    if (!user) return false;
    if (guildId === this.id) return !user.outsider;
    return this.otherGuilds.get(guildId)?.memberIds.includes(userId) ?? false;
  }

  // -------------------------------------------------------------------------------------------
  // People and channels
  // -------------------------------------------------------------------------------------------

  user(id: string): FakeDiscordUser | undefined {
    return this.users.get(id);
  }

  requireUser(id: string): FakeDiscordUser {
    const user = this.users.get(id);
    if (!user) throw new DiscordApiError(404, 10013, 'Unknown User');
    return user;
  }

  get botUser(): FakeDiscordUser {
    return this.requireUser(DISCORD_IDS.botUserId);
  }

  addChannel(channel: AnyChannel): void {
    this.channels.set(channel.id, channel);
    if (!this.messages.has(channel.id)) this.messages.set(channel.id, new Map());
  }

  channel(id: string): AnyChannel | undefined {
    return this.channels.get(id);
  }

  requireChannel(id: string): AnyChannel {
    const channel = this.channels.get(id);
    if (!channel) throw unknownChannel();
    return channel;
  }

  /** The guild id a channel belongs to, undefined for DMs. */
  guildIdOf(channelId: string): string | undefined {
    const channel = this.channels.get(channelId);
    if (!channel || channelType(channel) === 1) return undefined;
    return (channel as GuildChannel).guild_id ?? this.id;
  }

  /** The threads of one server (default the fake guild). */
  threads(guildId: string = this.id): APIThreadChannel[] {
    return [...this.channels.values()].filter(isThread).filter((thread) => (thread.guild_id ?? this.id) === guildId);
  }

  /** The DM channel between the bot and `userId`, made on first use (like `POST /users/@me/channels`). */
  dmChannelFor(userId: string): APIDMChannel {
    const existing = [...this.channels.values()].find(
      (c): c is APIDMChannel => channelType(c) === 1 && (c as APIDMChannel).recipients?.[0]?.id === userId,
    );
    if (existing) return existing;
    const channel = dmChannelObject(snowflake(), this.requireUser(userId));
    this.addChannel(channel);
    return channel;
  }

  /** GUILD_CREATE as sent right after READY: channels, active (unarchived) threads, members, @everyone. */
  guildCreatePayload(guildId: string = this.id): GatewayGuildCreateDispatchData {
    const home = guildId === this.id;
    const other = this.otherGuilds.get(guildId);
    if (!home && !other) throw new Error(`no server ${guildId} in the fake`);
    const channels = [...this.channels.values()].filter(
      (c): c is APITextChannel => channelType(c) === 0 && this.guildIdOf(c.id) === guildId,
    );
    const activeThreads = this.threads(guildId).filter((t) => !t.thread_metadata?.archived);
    const members = [...this.users.values()].filter((user) => this.isMember(guildId, user.id));
    return {
      id: guildId,
      name: other?.name ?? this.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      owner_id: other?.memberIds[0] ?? DISCORD_IDS.humanUserId,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 1,
      explicit_content_filter: 0,
      roles: [
        {
          // The @everyone role shares its server's id.
          id: home ? DISCORD_IDS.everyoneRoleId : guildId,
          name: '@everyone',
          color: 0,
          colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
          hoist: false,
          icon: null,
          unicode_emoji: null,
          position: 0,
          permissions: '2248473465835073',
          managed: false,
          mentionable: false,
          flags: 0,
        },
        // The mentionable role lives in the fake guild only.
        ...(home
          ? [
              {
                id: DISCORD_IDS.teamRoleId,
                name: 'team',
                color: 0,
                colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
                hoist: false,
                icon: null,
                unicode_emoji: null,
                position: 1,
                permissions: '0',
                managed: false,
                mentionable: true,
                flags: 0,
              },
            ]
          : []),
      ],
      emojis: [],
      features: [],
      mfa_level: 0,
      application_id: null,
      system_channel_id: other?.channelId ?? DISCORD_IDS.generalChannelId,
      system_channel_flags: 0,
      rules_channel_id: null,
      vanity_url_code: null,
      description: null,
      banner: null,
      premium_tier: other ? 0 : this.premiumTier,
      premium_subscription_count: 0,
      preferred_locale: 'en-US' as GatewayGuildCreateDispatchData['preferred_locale'],
      public_updates_channel_id: null,
      nsfw_level: 0,
      stickers: [],
      premium_progress_bar_enabled: false,
      hub_type: null,
      safety_alerts_channel_id: null,
      incidents_data: null,
      max_members: 500_000,
      joined_at: '2024-01-03T00:00:00.000Z',
      large: false,
      unavailable: false,
      member_count: members.length,
      voice_states: [],
      members: members.map((user) => memberObject(user)),
      channels: channels.map((c) => structuredClone(c)),
      threads: activeThreads.map((t) => structuredClone(t)),
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    } as unknown as GatewayGuildCreateDispatchData;
  }

  // -------------------------------------------------------------------------------------------
  // Messages
  // -------------------------------------------------------------------------------------------

  /**
   * Who a message pings. Content mentions count only for known users (Discord drops unknown
   * ids). When the sender gave `allowed_mentions`, only what it allows is kept, and a reply
   * pings the replied-to author only with `replied_user: true`; without it, everything parses
   * and a reply pings its author (Discord's defaults).
   */
  resolveMentions(
    content: string,
    allowed: AllowedMentions | undefined,
    repliedTo: APIMessage | undefined,
  ): { mentions: APIUser[]; mentionRoles: string[]; mentionEveryone: boolean } {
    const userIds = [...new Set([...content.matchAll(USER_MENTION)].map((m) => m[1]!))];
    const roleIds = [...new Set([...content.matchAll(ROLE_MENTION)].map((m) => m[1]!))];
    const everyone = /@(everyone|here)\b/.test(content);
    const allowsUser = (id: string): boolean =>
      !allowed || Boolean(allowed.parse?.includes('users') || allowed.users?.includes(id));
    const allowsRole = (id: string): boolean =>
      !allowed || Boolean(allowed.parse?.includes('roles') || allowed.roles?.includes(id));
    const mentions = userIds.filter(allowsUser).flatMap((id) => {
      const user = this.users.get(id);
      return user ? [userObject(user)] : [];
    });
    if (repliedTo && (!allowed || allowed.replied_user) && !mentions.some((u) => u.id === repliedTo.author.id)) {
      mentions.push(structuredClone(repliedTo.author));
    }
    return {
      mentions,
      mentionRoles: roleIds.filter(allowsRole),
      mentionEveryone: everyone && (!allowed || Boolean(allowed.parse?.includes('everyone'))),
    };
  }

  /** Store a new message in its channel (or thread) and update the channel's counters. */
  addMessage(spec: MessageSpec, allowedMentions?: AllowedMentions): APIMessage {
    const channel = this.requireChannel(spec.channelId);
    const message = messageObject(spec);
    this.messages.get(channel.id)!.set(message.id, message);
    this.allowedMentionsByMessage.set(message.id, allowedMentions);
    channel.last_message_id = message.id;
    if (isThread(channel)) {
      channel.message_count = (channel.message_count ?? 0) + 1;
      channel.total_message_sent = (channel.total_message_sent ?? 0) + 1;
    }
    return message;
  }

  message(channelId: string, messageId: string): APIMessage | undefined {
    return this.messages.get(channelId)?.get(messageId);
  }

  requireMessage(channelId: string, messageId: string): APIMessage {
    this.requireChannel(channelId);
    const message = this.message(channelId, messageId);
    if (!message) throw unknownMessage();
    return message;
  }

  /** A message wherever it is (interaction callbacks name the message by id only). */
  findMessage(messageId: string): APIMessage | undefined {
    for (const messages of this.messages.values()) {
      const found = messages.get(messageId);
      if (found) return found;
    }
    return this.ephemeralMessages.find((m) => m.id === messageId);
  }

  /** The messages of a channel or thread as they stand now, oldest first. */
  channelMessages(channelId: string): APIMessage[] {
    return [...(this.messages.get(channelId)?.values() ?? [])].sort((a, b) => compareSnowflakes(a.id, b.id));
  }

  /** Apply an edit (only the fields given change) and stamp `edited_timestamp`. */
  editMessage(
    message: APIMessage,
    patch: Partial<Pick<APIMessage, 'content' | 'embeds' | 'components' | 'flags' | 'attachments'>>,
    allowedMentions?: AllowedMentions,
  ): APIMessage {
    Object.assign(message, patch);
    if (patch.content !== undefined) {
      const repliedTo = message.referenced_message ?? undefined;
      const resolved = this.resolveMentions(
        message.content,
        allowedMentions ?? this.allowedMentionsByMessage.get(message.id),
        repliedTo,
      );
      message.mentions = resolved.mentions;
      message.mention_roles = resolved.mentionRoles;
      message.mention_everyone = resolved.mentionEveryone;
    }
    message.edited_timestamp = isoTime();
    this.editCounts.set(message.id, (this.editCounts.get(message.id) ?? 0) + 1);
    return message;
  }

  /** How many times a message was edited (through any route). */
  editCount(messageId: string): number {
    return this.editCounts.get(messageId) ?? 0;
  }

  allowedMentionsOf(messageId: string): AllowedMentions | undefined {
    return this.allowedMentionsByMessage.get(messageId);
  }

  deleteMessage(channelId: string, messageId: string): void {
    this.requireMessage(channelId, messageId);
    this.messages.get(channelId)!.delete(messageId);
  }

  // -------------------------------------------------------------------------------------------
  // Threads
  // -------------------------------------------------------------------------------------------

  /**
   * A public thread from a message: the thread takes the message's id, the message gets
   * `thread` and the HAS_THREAD flag (1 << 5). A second thread on the same message is refused
   * with 160004, as Discord does.
   */
  startThreadFromMessage(
    channelId: string,
    messageId: string,
    options: { name: string; ownerId: string; autoArchiveDuration?: 60 | 1440 | 4320 | 10080 },
  ): APIThreadChannel {
    const parent = this.requireChannel(channelId);
    if (!isPostable(parent)) throw new DiscordApiError(400, 50024, 'Cannot execute action on this channel type');
    const message = this.requireMessage(channelId, messageId);
    if (message.thread || this.channels.has(message.id))
      throw new DiscordApiError(400, 160004, 'A thread has already been created for this message');
    const thread = threadObject({
      id: message.id,
      parentId: channelId,
      guildId: this.guildIdOf(channelId)!,
      name: options.name,
      ownerId: options.ownerId,
      type: channelType(parent) === 5 ? 10 : 11,
      autoArchiveDuration: options.autoArchiveDuration ?? parent.default_auto_archive_duration ?? 1440,
      botIsMember: options.ownerId === DISCORD_IDS.botUserId,
    });
    this.addChannel(thread);
    message.thread = structuredClone(thread);
    message.flags = (message.flags ?? 0) | (1 << 5);
    return thread;
  }

  /** A thread not attached to a message (`POST /channels/{id}/threads`, or a user making one). */
  startThread(
    channelId: string,
    options: { name: string; ownerId: string; type?: 11 | 12; autoArchiveDuration?: 60 | 1440 | 4320 | 10080 },
  ): APIThreadChannel {
    const parent = this.requireChannel(channelId);
    if (!isPostable(parent)) throw new DiscordApiError(400, 50024, 'Cannot execute action on this channel type');
    const thread = threadObject({
      id: snowflake(),
      parentId: channelId,
      guildId: this.guildIdOf(channelId)!,
      name: options.name,
      ownerId: options.ownerId,
      type: options.type ?? 11,
      autoArchiveDuration: options.autoArchiveDuration ?? parent.default_auto_archive_duration ?? 1440,
      botIsMember: options.ownerId === DISCORD_IDS.botUserId,
    });
    this.addChannel(thread);
    return thread;
  }

  requireThread(id: string): APIThreadChannel {
    const channel = this.requireChannel(id);
    if (!isThread(channel)) throw new DiscordApiError(400, 50024, 'Cannot execute action on this channel type');
    return channel;
  }

  setThreadState(id: string, state: { archived?: boolean; locked?: boolean; name?: string }): APIThreadChannel {
    const thread = this.requireThread(id);
    const metadata = thread.thread_metadata!;
    if (state.name !== undefined) thread.name = state.name;
    if (state.locked !== undefined) metadata.locked = state.locked;
    if (state.archived !== undefined && state.archived !== metadata.archived) {
      metadata.archived = state.archived;
      metadata.archive_timestamp = isoTime();
    }
    return thread;
  }

  // -------------------------------------------------------------------------------------------
  // Reactions
  // -------------------------------------------------------------------------------------------

  /** Add `userId`'s reaction; false when it was already there. 20 distinct emoji per message at most (30010). */
  addReaction(message: APIMessage, emoji: { id: string | null; name: string }, userId: string): boolean {
    const key = reactionKey(message.id, emoji);
    const users = this.reactionUsers.get(key) ?? new Set<string>();
    if (users.has(userId)) return false;
    const reactions = (message.reactions ??= []);
    let reaction = reactions.find((r) => sameEmoji(r.emoji, emoji));
    if (!reaction) {
      if (reactions.length >= DISCORD_LIMITS.reactionsPerMessage)
        throw new DiscordApiError(
          400,
          30010,
          `Maximum number of reactions reached (${DISCORD_LIMITS.reactionsPerMessage})`,
        );
      reaction = {
        count: 0,
        count_details: { burst: 0, normal: 0 },
        me: false,
        me_burst: false,
        emoji: { ...emoji },
        burst_colors: [],
      };
      reactions.push(reaction);
    }
    users.add(userId);
    this.reactionUsers.set(key, users);
    reaction.count += 1;
    reaction.count_details.normal += 1;
    if (userId === DISCORD_IDS.botUserId) reaction.me = true;
    return true;
  }

  removeReaction(message: APIMessage, emoji: { id: string | null; name: string }, userId: string): boolean {
    const key = reactionKey(message.id, emoji);
    const users = this.reactionUsers.get(key);
    if (!users?.delete(userId)) return false;
    const reactions = message.reactions ?? [];
    const index = reactions.findIndex((r) => sameEmoji(r.emoji, emoji));
    const reaction = reactions[index];
    if (reaction) {
      reaction.count -= 1;
      reaction.count_details.normal -= 1;
      if (userId === DISCORD_IDS.botUserId) reaction.me = false;
      if (reaction.count === 0) reactions.splice(index, 1);
    }
    if (reactions.length === 0) delete message.reactions;
    return true;
  }

  /** Who reacted with an emoji (by name for unicode, `name:id` for custom). */
  reactors(messageId: string, emoji: { id: string | null; name: string }): string[] {
    return [...(this.reactionUsers.get(reactionKey(messageId, emoji)) ?? [])];
  }

  // -------------------------------------------------------------------------------------------
  // Seed
  // -------------------------------------------------------------------------------------------

  /** An active thread in #general, started by ada from her message, with one reply: GUILD_CREATE carries it. */
  private seedThread(): void {
    const at = Date.parse('2025-06-01T12:00:00Z');
    const ada = this.requireUser(DISCORD_IDS.humanUserId);
    this.addMessage({
      id: DISCORD_IDS.seededThreadId,
      channelId: DISCORD_IDS.generalChannelId,
      author: ada,
      content: 'shall we plan the launch?',
      at,
    });
    this.startThreadFromMessage(DISCORD_IDS.generalChannelId, DISCORD_IDS.seededThreadId, {
      name: DISCORD_IDS.seededThreadName,
      ownerId: ada.id,
    });
    this.addMessage({
      channelId: DISCORD_IDS.seededThreadId,
      author: ada,
      content: 'first idea: a blog post',
      at: at + 60_000,
    });
  }
}

function sameEmoji(
  a: { id: string | null; name: string | null },
  b: { id: string | null; name: string | null },
): boolean {
  return a.id ? a.id === b.id : a.name === b.name;
}

function reactionKey(messageId: string, emoji: { id: string | null; name: string }): string {
  return `${messageId}/${emoji.id ?? emoji.name}`;
}

/**
 * The `{emoji}` path segment as discord.js sends it: a URL-encoded unicode emoji (`%F0%9F%91%80`)
 * or `name:id` for a custom one.
 */
export function parseEmojiSegment(segment: string): { id: string | null; name: string } {
  const decoded = decodeURIComponent(segment);
  const custom = /^a?:?([\w~-]+):(\d{15,21})$/.exec(decoded);
  if (custom) return { id: custom[2]!, name: custom[1]! };
  return { id: null, name: decoded };
}
