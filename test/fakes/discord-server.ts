// FakeDiscord: a fake Discord that the real discord.js v14 client (14.28: @discordjs/rest 2.6,
// @discordjs/ws 1.2) talks to, on one HTTP server on 127.0.0.1 (ephemeral port): the REST API
// under `/api/v10` (discord-rest.ts) and the Gateway at `/gateway` (discord-gateway.ts), over
// one shared world (discord-guild.ts). Tests act as the people in the guild (`sendMessage`,
// `react`, `clickButton`, `submitModal`, `runSlashCommand`, `startThreadAsUser`) and read what the bot did
// (`rest.calls`, `thread`, `transcript`).
//
// What a test passes to the Client — nothing else points discord.js at the fake:
//
//   const client = new Client({ intents, partials, ...fake.clientOptions() });
//   await client.login(fake.token);
//
// `clientOptions()` is `{ rest: { api: 'http://127.0.0.1:P/api' } }` (no `/v10`: discord.js adds
// the version itself). There is no gateway option: `login()` calls `GET /api/v10/gateway/bot`
// through that REST client, @discordjs/ws connects to the `url` it answers
// (`ws://127.0.0.1:P/gateway`) plus `?v=10&encoding=json`, and a Resume goes to READY's
// `resume_gateway_url` (`ws://127.0.0.1:P/gateway/resume`). Also:
//   - do not install `zlib-sync`: with it discord.js asks for `compress=zlib-stream`, which the
//     fake refuses (close 4012, reason in `gateway.protocolErrors`);
//   - `clientOptions({ fastReidentify: true })` adds `ws.buildIdentifyThrottler` with no wait:
//     only for op 9 (d=false) tests, where discord.js would otherwise wait up to 6.5 s to identify again;
//   - order at teardown: `await client.destroy()` first, then `fake.stop()`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApplicationCommandOptionType,
  type APIApplicationCommandInteractionDataOption,
  type APIMessage,
  type APIThreadChannel,
  type ClientOptions,
} from 'discord.js';
import { FakeDiscordGateway, type FakeGatewayOptions } from './discord-gateway.js';
import {
  FakeDiscordGuild,
  isThread,
  type FakeOtherGuild,
  type FakeOtherGuildSpec,
  type StoredInteraction,
} from './discord-guild.js';
import {
  APP_PERMISSIONS,
  DISCORD_IDS,
  DISCORD_TOKEN,
  MEMBER_PERMISSIONS,
  buttonInteractionPayload,
  gatewayMessage,
  memberWithoutUser,
  modalSubmitPayload,
  reactionAddPayload,
  slashCommandPayload,
  snowflake,
  snowflakeTime,
  until,
  userObject,
  type FakeDiscordUser,
} from './discord-payloads.js';
import { FakeDiscordCdn, type FakeAttachmentSpec } from './discord-cdn.js';
import { FakeDiscordRest } from './discord-rest.js';

export interface FakeDiscordOptions {
  /** The bot token the fake accepts (default DISCORD_TOKEN). */
  token?: string;
  /** Gateway heartbeat interval (Discord: 41250 ms). */
  heartbeatIntervalMs?: number;
  privilegedIntents?: FakeGatewayOptions['privilegedIntents'];
  /** Echo the bot's own REST actions over the gateway (default true, as Discord does). */
  echoBotActions?: boolean;
  /** More people in the guild, besides ada, grace, the bot and otherbot. */
  users?: FakeDiscordUser[];
  /** Seed an active thread in #general (default true) so GUILD_CREATE carries `threads`. */
  seedThread?: boolean;
  /** The bot is in the guild (default true). False: a bot nobody invited yet (READY with no guilds). */
  inGuild?: boolean;
  /** Other servers the bot is in, each with one #general (`guild.otherGuilds` has its id). */
  otherGuilds?: FakeOtherGuildSpec[];
  /** The application's "Public Bot" setting, `bot_public` (default true, as Discord creates it). */
  botPublic?: boolean;
  /** The largest file the bot may upload (default: the server's limit for its boost tier); see `rest.uploadLimitBytes`. */
  uploadLimitBytes?: number;
}

export interface UserMessageOptions {
  /** Default #general. A thread id posts in the thread. */
  channelId?: string;
  content: string;
  /** Default ada. */
  authorId?: string;
  /** Reply to this message (same channel): type 19 with `message_reference` and `referenced_message`. */
  replyTo?: string;
  /** Files attached to the message: kept on the fake's CDN (`cdn`), their URLs on the message. */
  attachments?: FakeAttachmentSpec[];
}

export interface ForwardOptions {
  /** The message forwarded, and the channel it is in (default #general). */
  messageId: string;
  fromChannelId?: string;
  /** Where it is forwarded to (default #general). */
  channelId?: string;
  /** Who forwards it (default ada). */
  authorId?: string;
}

export interface InteractionTiming {
  /** Backdate the interaction: one made `ageMs` ago is past Discord's 3 s window when ageMs > 3000. */
  ageMs?: number;
}

export class FakeDiscord {
  readonly guild: FakeDiscordGuild;
  readonly rest: FakeDiscordRest;
  readonly gateway: FakeDiscordGateway;
  /** The files people attached, served at `/attachments/…` on this server. */
  readonly cdn: FakeDiscordCdn;
  readonly token: string;

  private server: Server | undefined;
  /** The INTERACTION_CREATE payload of each interaction, for `redeliverInteraction`. */
  private readonly interactionPayloads = new Map<string, unknown>();

  constructor(options: FakeDiscordOptions = {}) {
    this.token = options.token ?? DISCORD_TOKEN;
    this.guild = new FakeDiscordGuild({
      ...(options.users ? { users: options.users } : {}),
      ...(options.otherGuilds ? { otherGuilds: options.otherGuilds } : {}),
      seedThread: options.seedThread ?? true,
    });
    this.gateway = new FakeDiscordGateway({
      token: this.token,
      guild: this.guild,
      origin: () => `ws://127.0.0.1:${this.port}`,
      ...(options.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
      ...(options.privilegedIntents ? { privilegedIntents: options.privilegedIntents } : {}),
      ...(options.inGuild === false ? { inGuild: false } : {}),
    });
    this.rest = new FakeDiscordRest({
      token: this.token,
      guild: this.guild,
      gatewayUrl: () => this.gateway.url,
      dispatch: (t, d) => void this.gateway.dispatch(t, d),
      refreshUrl: (url) => this.cdn.refresh(url),
      echoBotActions: options.echoBotActions ?? true,
      ...(options.botPublic !== undefined ? { botPublic: options.botPublic } : {}),
      ...(options.uploadLimitBytes !== undefined ? { uploadLimitBytes: options.uploadLimitBytes } : {}),
    });
    this.cdn = new FakeDiscordCdn(() => `http://127.0.0.1:${this.port}`);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      if ((req.url ?? '').startsWith('/api/')) {
        void this.rest.handle(req, res);
        return;
      }
      if ((req.url ?? '').startsWith('/attachments/')) {
        this.cdn.handle(req, res);
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: '404: Not Found', code: 0 }));
    });
    this.server.on('upgrade', (req, stream, head) => {
      if (!this.gateway.handleUpgrade(req, stream, head))
        stream.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Terminates gateway sockets and keep-alive connections, then closes. Stop the client first. */
  async stop(): Promise<void> {
    await this.gateway.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  /** discord.js `rest.api`: `http://127.0.0.1:P/api`, without the version. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  /** The Client options that point discord.js at this fake. Spread them into `new Client({...})`. */
  clientOptions(options: { fastReidentify?: boolean } = {}): Pick<ClientOptions, 'rest' | 'ws'> {
    return {
      rest: { api: this.apiUrl },
      ...(options.fastReidentify
        ? { ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) } }
        : {}),
    };
  }

  // -------------------------------------------------------------------------------------------
  // People acting in the guild
  // -------------------------------------------------------------------------------------------

  /**
   * A person posts in a channel or thread: stored, then MESSAGE_CREATE. Mentions are Discord's:
   * write `<@id>` in the content (`mention(DISCORD_IDS.botUserId)`) and `mentions` lists that user.
   */
  sendMessage(options: UserMessageOptions): APIMessage {
    const channelId = options.channelId ?? DISCORD_IDS.generalChannelId;
    const author = this.guild.requireUser(options.authorId ?? DISCORD_IDS.humanUserId);
    const channel = this.guild.requireChannel(channelId);
    if (isThread(channel) && channel.thread_metadata?.archived) {
      if (channel.thread_metadata.locked)
        throw new Error(`thread ${channelId} is archived and locked: nobody can post in it`);
      this.setThreadState(channelId, { archived: false });
    }
    const repliedTo = options.replyTo ? this.guild.requireMessage(channelId, options.replyTo) : undefined;
    const resolved = this.guild.resolveMentions(options.content, undefined, repliedTo);
    const message = this.guild.addMessage({
      channelId,
      author,
      content: options.content,
      attachments: (options.attachments ?? []).map((file) => this.cdn.register(channelId, file)),
      type: repliedTo ? 19 : 0,
      mentions: resolved.mentions,
      mentionRoles: resolved.mentionRoles,
      mentionEveryone: resolved.mentionEveryone,
      ...(repliedTo
        ? {
            messageReference: {
              message_id: repliedTo.id,
              channel_id: channelId,
              guild_id: this.guild.guildIdOf(channelId)!,
            },
            referencedMessage: structuredClone(repliedTo),
          }
        : {}),
    });
    this.gateway.dispatch(
      'MESSAGE_CREATE',
      gatewayMessage(message, this.guild.guildIdOf(channelId), (id) => this.guild.user(id)),
    );
    return message;
  }

  /** A person writes to the bot in a DM (no guild_id; needs the DirectMessages intent and Partials.Channel). */
  sendDirectMessage(options: { content: string; authorId?: string; attachments?: FakeAttachmentSpec[] }): APIMessage {
    const author = this.guild.requireUser(options.authorId ?? DISCORD_IDS.humanUserId);
    const channel = this.guild.dmChannelFor(author.id);
    const attachments = (options.attachments ?? []).map((file) => this.cdn.register(channel.id, file));
    const message = this.guild.addMessage({ channelId: channel.id, author, content: options.content, attachments });
    this.gateway.dispatch('MESSAGE_CREATE', {
      ...gatewayMessage(message, undefined, (id) => this.guild.user(id)),
      channel_type: 1,
    });
    return message;
  }

  /**
   * A person forwards a message (Discord's "Forward"): a new message with empty `content`,
   * `message_reference.type` 1 (FORWARD) pointing at the original, and `message_snapshots`
   * holding a copy of the original's content and attachments (no author: Discord leaves it out).
   */
  forwardMessage(options: ForwardOptions): APIMessage {
    const fromChannelId = options.fromChannelId ?? DISCORD_IDS.generalChannelId;
    const channelId = options.channelId ?? DISCORD_IDS.generalChannelId;
    const original = this.guild.requireMessage(fromChannelId, options.messageId);
    const author = this.guild.requireUser(options.authorId ?? DISCORD_IDS.humanUserId);
    const fromGuild = this.guild.guildIdOf(fromChannelId);
    const snapshot = {
      type: original.type,
      content: original.content,
      embeds: structuredClone(original.embeds),
      attachments: structuredClone(original.attachments),
      timestamp: original.timestamp,
      edited_timestamp: original.edited_timestamp,
      flags: original.flags ?? 0,
      mentions: structuredClone(original.mentions),
      mention_roles: [...original.mention_roles],
      components: structuredClone(original.components ?? []),
    };
    const message = this.guild.addMessage({
      channelId,
      author,
      content: '',
      type: 0,
      messageReference: {
        type: 1,
        message_id: original.id,
        channel_id: fromChannelId,
        ...(fromGuild ? { guild_id: fromGuild } : {}),
      },
      messageSnapshots: [{ message: snapshot }],
    });
    const guildId = this.guild.guildIdOf(channelId);
    this.gateway.dispatch('MESSAGE_CREATE', {
      ...gatewayMessage(message, guildId, (id) => this.guild.user(id)),
      ...(guildId ? {} : { channel_type: 1 }),
    });
    return message;
  }

  /** A person reacts (MESSAGE_REACTION_ADD). `emoji` is a unicode emoji or `{ id, name }` for a custom one. */
  react(options: {
    messageId: string;
    emoji: string | { id: string; name: string };
    channelId?: string;
    userId?: string;
  }): void {
    const channelId = options.channelId ?? DISCORD_IDS.generalChannelId;
    const user = this.guild.requireUser(options.userId ?? DISCORD_IDS.humanUserId);
    const message = this.guild.requireMessage(channelId, options.messageId);
    const emoji = typeof options.emoji === 'string' ? { id: null, name: options.emoji } : options.emoji;
    if (!this.guild.addReaction(message, emoji, user.id)) return;
    const guildId = this.guild.guildIdOf(channelId);
    this.gateway.dispatch(
      'MESSAGE_REACTION_ADD',
      reactionAddPayload({
        user,
        channelId,
        messageId: message.id,
        emoji,
        messageAuthorId: message.author.id,
        ...(guildId ? { guildId } : {}),
      }),
    );
  }

  /** A person removes their reaction (MESSAGE_REACTION_REMOVE). */
  unreact(options: { messageId: string; emoji: string; channelId?: string; userId?: string }): void {
    const channelId = options.channelId ?? DISCORD_IDS.generalChannelId;
    const userId = options.userId ?? DISCORD_IDS.humanUserId;
    const message = this.guild.requireMessage(channelId, options.messageId);
    const emoji = { id: null, name: options.emoji };
    if (!this.guild.removeReaction(message, emoji, userId)) return;
    const guildId = this.guild.guildIdOf(channelId);
    this.gateway.dispatch('MESSAGE_REACTION_REMOVE', {
      user_id: userId,
      channel_id: channelId,
      message_id: message.id,
      emoji,
      burst: false,
      type: 0,
      ...(guildId ? { guild_id: guildId } : {}),
    });
  }

  /**
   * A person clicks a button on a message the fake holds (INTERACTION_CREATE type 3). The bot
   * must answer `POST /interactions/{id}/{token}/callback` within 3 s of the interaction's
   * creation (its id's time): later gets 10062, a second answer 40060.
   */
  clickButton(
    options: { messageId: string; customId: string; channelId?: string; userId?: string } & InteractionTiming,
  ): StoredInteraction {
    const channelId = options.channelId ?? DISCORD_IDS.generalChannelId;
    // A button on an ephemeral message (a private follow-up) can be clicked too, by the person who sees it.
    const message =
      this.ephemeral(channelId, options.messageId) ?? this.guild.requireMessage(channelId, options.messageId);
    const interaction = this.newInteraction(3, channelId, options.userId, options.ageMs);
    interaction.componentMessageId = message.id;
    const channel = this.guild.requireChannel(channelId);
    const payload = buttonInteractionPayload({
      id: interaction.id,
      token: interaction.token,
      user: this.guild.requireUser(interaction.userId),
      channel,
      guildId: interaction.guildId,
      customId: options.customId,
      message,
      attachmentSizeLimit: this.rest.uploadLimit,
    });
    this.interactionPayloads.set(interaction.id, payload);
    this.gateway.dispatch('INTERACTION_CREATE', payload);
    return interaction;
  }

  /**
   * The person an interaction showed a modal to (its response was callback type 9) submits it
   * (INTERACTION_CREATE type 5) with these text input values; a modal opened from a button
   * carries that button's message, as on Discord. Throws when no modal was shown.
   */
  submitModal(options: { openedBy: string; values: Record<string, string> } & InteractionTiming): StoredInteraction {
    const opener = this.guild.interactions.get(options.openedBy);
    const modal =
      opener?.response?.type === 9 ? (opener.response.data as { custom_id?: string } | undefined) : undefined;
    if (!opener || !modal?.custom_id) throw new Error(`interaction ${options.openedBy} showed no modal`);
    const interaction = this.newInteraction(5, opener.channelId, opener.userId, options.ageMs);
    const message = opener.componentMessageId
      ? (this.ephemeral(opener.channelId, opener.componentMessageId) ??
        this.guild.message(opener.channelId, opener.componentMessageId))
      : undefined;
    if (opener.componentMessageId) interaction.componentMessageId = opener.componentMessageId;
    const payload = modalSubmitPayload({
      id: interaction.id,
      token: interaction.token,
      user: this.guild.requireUser(interaction.userId),
      channel: this.guild.requireChannel(opener.channelId),
      guildId: interaction.guildId,
      attachmentSizeLimit: this.rest.uploadLimit,
      customId: modal.custom_id,
      values: options.values,
      ...(message ? { message: structuredClone(message) } : {}),
    });
    this.interactionPayloads.set(interaction.id, payload);
    this.gateway.dispatch('INTERACTION_CREATE', payload);
    return interaction;
  }

  /**
   * A person runs a slash command (INTERACTION_CREATE type 2, command type 1). The command id is
   * the registered one when the bot registered `name` (guild first, then global), else a new id.
   */
  runSlashCommand(
    options: {
      name: string;
      options?: APIApplicationCommandInteractionDataOption[];
      channelId?: string;
      userId?: string;
    } & InteractionTiming,
  ): StoredInteraction {
    const channelId = options.channelId ?? DISCORD_IDS.generalChannelId;
    const interaction = this.newInteraction(2, channelId, options.userId, options.ageMs);
    const commandGuildId = this.guild.guildIdOf(channelId);
    const guildCommand = commandGuildId
      ? this.guild.commands.get(commandGuildId)?.find((c) => c.name === options.name)
      : undefined;
    const command = guildCommand ?? this.guild.commands.get('global')?.find((c) => c.name === options.name);
    const channel = this.guild.requireChannel(channelId);
    const payload = slashCommandPayload({
      id: interaction.id,
      token: interaction.token,
      user: this.guild.requireUser(interaction.userId),
      channel,
      guildId: interaction.guildId,
      attachmentSizeLimit: this.rest.uploadLimit,
      commandId: command?.id ?? snowflake(),
      name: options.name,
      ...(options.options ? { options: options.options } : {}),
      ...(guildCommand && commandGuildId ? { commandGuildId } : {}),
      ...this.resolvedOptions(options.options ?? []),
    });
    this.interactionPayloads.set(interaction.id, payload);
    this.gateway.dispatch('INTERACTION_CREATE', payload);
    return interaction;
  }

  /**
   * The same INTERACTION_CREATE again, same id and token: what a bot sees when the gateway
   * replays it after a Resume, or when a restarted process is handed it again.
   */
  redeliverInteraction(interactionId: string): void {
    const payload = this.interactionPayloads.get(interactionId);
    if (!payload) throw new Error(`no interaction ${interactionId} to deliver again`);
    this.gateway.dispatch('INTERACTION_CREATE', structuredClone(payload));
  }

  /** A person starts a thread, from a message of theirs or bare (THREAD_CREATE, newly_created). */
  startThreadAsUser(options: {
    name: string;
    channelId?: string;
    messageId?: string;
    userId?: string;
  }): APIThreadChannel {
    const channelId = options.channelId ?? DISCORD_IDS.generalChannelId;
    const ownerId = options.userId ?? DISCORD_IDS.humanUserId;
    const thread = options.messageId
      ? this.guild.startThreadFromMessage(channelId, options.messageId, { name: options.name, ownerId })
      : this.guild.startThread(channelId, { name: options.name, ownerId });
    this.gateway.dispatch('THREAD_CREATE', { ...structuredClone(thread), newly_created: true });
    return thread;
  }

  /** Archive, lock or rename a thread as a moderator or Discord's auto-archive would (THREAD_UPDATE). */
  setThreadState(threadId: string, state: { archived?: boolean; locked?: boolean; name?: string }): APIThreadChannel {
    const thread = this.guild.setThreadState(threadId, state);
    this.gateway.dispatch('THREAD_UPDATE', structuredClone(thread));
    return thread;
  }

  /** Someone adds the bot to another server while it runs: GUILD_CREATE for it. */
  joinGuild(spec: FakeOtherGuildSpec): FakeOtherGuild {
    const guild = this.guild.addOtherGuild(spec);
    this.gateway.dispatch('GUILD_CREATE', this.guild.guildCreatePayload(spec.id));
    return guild;
  }

  /** THREAD_LIST_SYNC for the guild's active threads (Discord sends it when the bot gains access to channels). */
  syncThreads(channelIds?: string[]): void {
    const threads = this.guild
      .threads()
      .filter((t) => !t.thread_metadata?.archived && (!channelIds || channelIds.includes(t.parent_id!)));
    this.gateway.dispatch('THREAD_LIST_SYNC', {
      guild_id: this.guild.id,
      ...(channelIds ? { channel_ids: channelIds } : {}),
      threads: threads.map((t) => structuredClone(t)),
      members: threads.filter((t) => t.member).map((t) => ({ ...t.member })),
    });
  }

  /** Op 7 Reconnect; resolves once the client closed. Dispatch now, and it is replayed on the Resume. */
  forceReconnect(): Promise<void> {
    return this.gateway.requestReconnect();
  }

  // -------------------------------------------------------------------------------------------
  // Reading the world
  // -------------------------------------------------------------------------------------------

  /** A channel's or thread's messages as they stand now (after edits and deletions), oldest first. */
  thread(channelId: string): APIMessage[] {
    return this.guild.channelMessages(channelId).map((m) => structuredClone(m));
  }

  /** `username: content` per message, oldest first: the thread as a person would read it. */
  transcript(channelId: string): string[] {
    return this.guild.channelMessages(channelId).map((m) => `${m.author.username}: ${m.content}`);
  }

  /** A message of the channel, or an ephemeral one sent there (only its person sees it; the fake keeps it apart). */
  message(channelId: string, messageId: string): APIMessage | undefined {
    const message = this.guild.message(channelId, messageId) ?? this.ephemeral(channelId, messageId);
    return message && structuredClone(message);
  }

  private ephemeral(channelId: string, messageId: string): APIMessage | undefined {
    return this.guild.ephemeralMessages.find((m) => m.id === messageId && m.channel_id === channelId);
  }

  interaction(id: string): StoredInteraction | undefined {
    return this.guild.interactions.get(id);
  }

  /** Resolves with the first message in `channelId` (already there or coming) that matches. */
  async waitForMessage(
    channelId: string,
    predicate: (message: APIMessage) => boolean,
    timeoutMs = 15_000,
  ): Promise<APIMessage> {
    return until(() => this.guild.channelMessages(channelId).find(predicate), `a message in ${channelId}`, timeoutMs);
  }

  /** Discord resolves the users and channels that options name into `data.resolved`; discord.js reads them from there. */
  private resolvedOptions(options: APIApplicationCommandInteractionDataOption[]): {
    resolved?: Record<string, unknown>;
  } {
    const users: Record<string, unknown> = {};
    const members: Record<string, unknown> = {};
    const channels: Record<string, unknown> = {};
    const walk = (list: APIApplicationCommandInteractionDataOption[]): void => {
      for (const option of list) {
        if ('options' in option && option.options) walk(option.options);
        if (!('value' in option) || typeof option.value !== 'string') continue;
        if (option.type === ApplicationCommandOptionType.User) {
          const user = this.guild.requireUser(option.value);
          users[user.id] = userObject(user);
          members[user.id] = { ...memberWithoutUser(user), permissions: MEMBER_PERMISSIONS };
        } else if (option.type === ApplicationCommandOptionType.Channel) {
          const channel = this.guild.requireChannel(option.value);
          channels[channel.id] = { ...structuredClone(channel), permissions: APP_PERMISSIONS };
        }
      }
    };
    walk(options);
    const resolved = {
      ...(Object.keys(users).length ? { users, members } : {}),
      ...(Object.keys(channels).length ? { channels } : {}),
    };
    return Object.keys(resolved).length ? { resolved } : {};
  }

  private newInteraction(
    type: 2 | 3 | 5,
    channelId: string,
    userId: string | undefined,
    ageMs: number | undefined,
  ): StoredInteraction {
    const id = snowflake(Date.now() - (ageMs ?? 0));
    const interaction: StoredInteraction = {
      id,
      token: `fake-interaction-token-${id}`,
      type,
      createdAt: snowflakeTime(id),
      channelId,
      guildId: this.guild.guildIdOf(channelId),
      userId: this.guild.requireUser(userId ?? DISCORD_IDS.humanUserId).id,
      followUpIds: [],
    };
    this.guild.interactions.set(id, interaction);
    return interaction;
  }
}
