// FakeDiscordRest: Discord's HTTP API v10 as @discordjs/rest 2.6 calls it. discord.js builds
// every URL as `${rest.api}/v10${route}`, so with `rest: { api: 'http://127.0.0.1:P/api' }` the
// fake serves `/api/v10/…`. It records every call (route template, params, query, body — the
// `payload_json` of a multipart upload included — status, answer, time), answers from the
// shared FakeDiscordGuild and, like Discord, sends the bot's own actions back over the gateway
// (MESSAGE_CREATE for its posts, MESSAGE_UPDATE for edits, THREAD_CREATE for new threads,
// MESSAGE_REACTION_ADD for its reactions), so a bot that does not skip its own messages loops
// here as it would in production.
//
// Errors are Discord's: `{ message, code, errors? }` with its status, which discord.js throws as
// `DiscordAPIError` (`.code`, `.status`, `.method`, `.url`); bodies are checked against
// discord-limits.ts (2,000 characters → 50035, …). Failure injection: `failNext` (any
// status/code) and `rateLimitNext` (429 with `retry_after` and the `Retry-After` /
// `X-RateLimit-*` headers @discordjs/rest reads: it sleeps `Retry-After` seconds and retries by
// itself, so a test sees one 429 and one success for one `channel.send`).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type {
  APIApplicationCommand,
  APIMessage,
  APITextChannel,
  APIThreadChannel,
  ThreadMemberFlags,
} from 'discord.js';
import {
  channelType,
  isThread,
  parseEmojiSegment,
  type FakeDiscordGuild,
  type StoredInteraction,
} from './discord-guild.js';
import {
  DISCORD_LIMITS,
  DiscordApiError,
  FLAG,
  invalidFormBody,
  requestEntityTooLarge,
  threadOptions,
  unknownMessage,
  uploadLimitForTier,
  validateMessageBody,
  validateModal,
  type MessageBody,
} from './discord-limits.js';
import {
  DISCORD_IDS,
  compareSnowflakes,
  gatewayMessage,
  memberObject,
  messageObject,
  reactionAddPayload,
  snowflake,
  until,
  userObject,
  type FakeDiscordUser,
} from './discord-payloads.js';

/** The routes the fake serves, as `METHOD /template`: the names `calls`, `failNext` and `waitForCall` take. */
const DISCORD_ROUTES = [
  'GET /gateway',
  'GET /gateway/bot',
  'POST /attachments/refresh-urls',
  'GET /users/@me',
  'GET /users/:user',
  'POST /users/@me/channels',
  'GET /applications/@me',
  'GET /guilds/:guild',
  'GET /guilds/:guild/members/:user',
  'GET /guilds/:guild/threads/active',
  'GET /channels/:channel',
  'PATCH /channels/:channel',
  'GET /channels/:channel/messages',
  'POST /channels/:channel/messages',
  'GET /channels/:channel/messages/:message',
  'PATCH /channels/:channel/messages/:message',
  'DELETE /channels/:channel/messages/:message',
  'POST /channels/:channel/messages/:message/threads',
  'POST /channels/:channel/threads',
  'PUT /channels/:channel/thread-members/@me',
  'GET /channels/:channel/messages/:message/reactions/:emoji',
  'PUT /channels/:channel/messages/:message/reactions/:emoji/@me',
  'DELETE /channels/:channel/messages/:message/reactions/:emoji/@me',
  'DELETE /channels/:channel/messages/:message/reactions/:emoji/:user',
  'POST /channels/:channel/typing',
  'POST /interactions/:interaction/:token/callback',
  'POST /webhooks/:application/:token',
  'GET /webhooks/:application/:token/messages/:message',
  'PATCH /webhooks/:application/:token/messages/:message',
  'DELETE /webhooks/:application/:token/messages/:message',
  'GET /applications/:application/commands',
  'PUT /applications/:application/commands',
  'POST /applications/:application/commands',
  'GET /applications/:application/guilds/:guild/commands',
  'PUT /applications/:application/guilds/:guild/commands',
  'POST /applications/:application/guilds/:guild/commands',
] as const;

export type DiscordRoute = (typeof DISCORD_ROUTES)[number];

/** Routes whose token is in the path: discord.js sends them without `Authorization`. */
const UNAUTHENTICATED: ReadonlySet<string> = new Set<DiscordRoute>([
  'GET /gateway',
  'POST /interactions/:interaction/:token/callback',
  'POST /webhooks/:application/:token',
  'GET /webhooks/:application/:token/messages/:message',
  'PATCH /webhooks/:application/:token/messages/:message',
  'DELETE /webhooks/:application/:token/messages/:message',
]);

export interface UploadedFile {
  field: string;
  filename: string;
  size: number;
  contentType: string;
  /** The file's bytes as UTF-8 text: what a person opening the attachment reads. */
  text: string;
  /** The file's bytes exactly as uploaded. */
  bytes: Buffer;
}

export interface RestCall {
  method: string;
  /** The path after `/api/v10`, without the query: `/channels/123/messages`. */
  path: string;
  /** The matched template (`POST /channels/:channel/messages`), or `UNKNOWN <METHOD> <path>`. */
  route: DiscordRoute | `UNKNOWN ${string}`;
  params: Record<string, string>;
  query: Record<string, string>;
  /** The JSON body (for multipart uploads: the parsed `payload_json`). */
  body: unknown;
  files: UploadedFile[];
  headers: IncomingHttpHeaders;
  /** `Date.now()` when the request arrived. */
  at: number;
  status: number;
  answer: unknown;
}

/** A scripted answer for the next call of a route: a status with Discord's error body (or any body) and headers. */
export interface RestFailure {
  status: number;
  code?: number;
  message?: string;
  errors?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RateLimitOptions {
  /** How long the client must wait (default 200 ms); sent as seconds, with decimals, as Discord does in the body. */
  retryAfterMs?: number;
  /** A global limit: `X-RateLimit-Global: true`, `scope: global`; @discordjs/rest then blocks every route. */
  global?: boolean;
  /** `X-RateLimit-Scope`: `user` (default) or `shared` (a per-resource limit). */
  scope?: 'user' | 'shared';
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Request {
  method: string;
  route: DiscordRoute;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  files: UploadedFile[];
}

type Handler = (request: Request) => Answer;

export interface FakeRestOptions {
  token: string;
  guild: FakeDiscordGuild;
  /** The gateway's `ws://…/gateway`, for `GET /gateway/bot`. */
  gatewayUrl: () => string;
  /** A newly signed link to an attachment the CDN holds (`POST /attachments/refresh-urls`). */
  refreshUrl?: (url: string) => string | undefined;
  /** Send a dispatch to the bot (the gateway's `dispatch`). */
  dispatch: (t: string, d: unknown) => void;
  /** Echo the bot's own REST actions over the gateway, as Discord does (default true). */
  echoBotActions?: boolean;
  /** The application's "Public Bot" setting (`bot_public`); Discord creates applications with it on. */
  botPublic?: boolean;
  /** See `FakeDiscordRest.uploadLimitBytes`. */
  uploadLimitBytes?: number;
}

export class FakeDiscordRest {
  /** Every call, in arrival order (429s and scripted failures included). */
  readonly calls: RestCall[] = [];

  private readonly failures = new Map<string, RestFailure[]>();
  private readonly delays = new Map<string, number[]>();
  private readonly guild: FakeDiscordGuild;
  /** `<channel>:<nonce>` of messages created with `enforce_nonce`: which message, and when. */
  private readonly enforcedNonces = new Map<string, { messageId: string; at: number }>();

  /** "Public Bot" in the (fake) developer portal; a test may turn it off mid-way. */
  botPublic: boolean;

  /**
   * The largest file an upload may carry, in bytes; a larger one is refused as Discord does
   * (413, code 40005 "Request entity too large"). Undefined: the server's limit for its boost
   * tier (`guild.premiumTier`). A test may set it, e.g. to refuse a small file.
   */
  uploadLimitBytes: number | undefined;

  constructor(private readonly options: FakeRestOptions) {
    this.guild = options.guild;
    this.botPublic = options.botPublic ?? true;
    this.uploadLimitBytes = options.uploadLimitBytes;
  }

  /** The upload limit in force now (see `uploadLimitBytes`). */
  get uploadLimit(): number {
    return this.uploadLimitBytes ?? uploadLimitForTier(this.guild.premiumTier);
  }

  // -------------------------------------------------------------------------------------------
  // Arrange and assert
  // -------------------------------------------------------------------------------------------

  /** Channels that exist but the bot may not view (`GET /channels/:id` answers 403, 50001). */
  readonly hiddenChannels = new Set<string>();

  /** Answer the next calls of `route` with these failures, one per call, before any real handling. */
  failNext(route: DiscordRoute, ...failures: RestFailure[]): this {
    this.failures.set(route, [...(this.failures.get(route) ?? []), ...failures]);
    return this;
  }

  /** Answer the next `count` calls of `route` with 429 and Discord's rate-limit body and headers. */
  rateLimitNext(route: DiscordRoute, count = 1, options: RateLimitOptions = {}): this {
    const ms = options.retryAfterMs ?? 200;
    const seconds = ms / 1000;
    const global = options.global ?? false;
    const headers: Record<string, string> = global
      ? { 'retry-after': String(seconds), 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global' }
      : {
          'retry-after': String(seconds),
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String((Date.now() + ms) / 1000),
          'x-ratelimit-reset-after': String(seconds),
          'x-ratelimit-bucket': `fake-${Buffer.from(route).toString('hex').slice(0, 16)}`,
          'x-ratelimit-scope': options.scope ?? 'user',
        };
    const failure: RestFailure = {
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: seconds, global },
      headers,
    };
    return this.failNext(route, ...Array.from({ length: count }, () => failure));
  }

  private readonly answerHooks: {
    route: DiscordRoute;
    predicate: (call: RestCall) => boolean;
    action: (call: RestCall) => Promise<void> | void;
  }[] = [];

  /** Hold the next call(s) of `route` for `ms` before handling it (a slow Discord). */
  delayNext(route: DiscordRoute, ms: number, count = 1): this {
    this.delays.set(route, [...(this.delays.get(route) ?? []), ...Array.from({ length: count }, () => ms)]);
    return this;
  }

  /**
   * Once, when a call of `route` matching `predicate` has been handled (its effect is in the
   * guild) but before the answer reaches the bot, run `action` and wait for it.
   */
  onceAnswered(
    route: DiscordRoute,
    predicate: (call: RestCall) => boolean,
    action: (call: RestCall) => Promise<void> | void,
  ): this {
    this.answerHooks.push({ route, predicate, action });
    return this;
  }

  callsTo(route: DiscordRoute): RestCall[] {
    return this.calls.filter((call) => call.route === route);
  }

  /** Resolves with the first call (already made or coming) of `route` that matches. */
  async waitForCall(
    route: DiscordRoute,
    predicate: (call: RestCall) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<RestCall> {
    return until(
      () => this.calls.find((call) => call.route === route && predicate(call)),
      `a ${route} call`,
      timeoutMs,
    );
  }

  // -------------------------------------------------------------------------------------------
  // Wire
  // -------------------------------------------------------------------------------------------

  /** Serve one HTTP request whose path starts with `/api`. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname.replace(/^\/api\/v10(?=\/)/, '');
    const { body, files } = await parseBody(raw, req.headers['content-type']);
    const matched = url.pathname.startsWith('/api/v10/') ? matchRoute(method, path) : undefined;
    const call: RestCall = {
      method,
      path,
      route: matched?.route ?? `UNKNOWN ${method} ${url.pathname}`,
      params: matched?.params ?? {},
      query: Object.fromEntries(url.searchParams),
      body,
      files,
      headers: req.headers,
      at: Date.now(),
      status: 0,
      answer: undefined,
    };
    this.calls.push(call);

    const delay = matched && this.delays.get(matched.route)?.shift();
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    const answer = this.answer(matched, call, req.headers, url.searchParams);
    call.status = answer.status;
    call.answer = answer.body;
    const hook = this.answerHooks.find((h) => h.route === call.route && h.predicate(call));
    if (hook) {
      this.answerHooks.splice(this.answerHooks.indexOf(hook), 1);
      await hook.action(call);
    }
    send(res, answer);
  }

  private answer(
    matched: { route: DiscordRoute; params: Record<string, string> } | undefined,
    call: RestCall,
    headers: IncomingHttpHeaders,
    query: URLSearchParams,
  ): Answer {
    if (!matched) return { status: 404, body: { message: '404: Not Found', code: 0 } };
    const failure = this.failures.get(matched.route)?.shift();
    if (failure) {
      const body = failure.body ?? {
        message: failure.message ?? 'Scripted failure',
        code: failure.code ?? 0,
        ...(failure.errors ? { errors: failure.errors } : {}),
      };
      return { status: failure.status, body, headers: failure.headers };
    }
    if (!UNAUTHENTICATED.has(matched.route) && headers.authorization !== `Bot ${this.options.token}`) {
      return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
    }
    // Discord refuses the whole request when one of its files is over the upload limit.
    if (call.files.some((file) => file.size > this.uploadLimit)) {
      const refusal = requestEntityTooLarge();
      return { status: refusal.status, body: refusal.body };
    }
    try {
      return this.handlers[matched.route]({
        method: call.method,
        route: matched.route,
        params: matched.params,
        query,
        body: call.body,
        files: call.files,
      });
    } catch (error) {
      if (error instanceof DiscordApiError) return { status: error.status, body: error.body };
      return { status: 500, body: { message: `fake Discord failed: ${(error as Error).message}`, code: 0 } };
    }
  }

  private echo(t: string, d: unknown): void {
    if (this.options.echoBotActions ?? true) this.options.dispatch(t, d);
  }

  private echoMessage(t: 'MESSAGE_CREATE' | 'MESSAGE_UPDATE', message: APIMessage): void {
    if ((message.flags ?? 0) & FLAG.ephemeral) return; // ephemeral messages never reach the gateway
    this.echo(
      t,
      gatewayMessage(message, this.guild.guildIdOf(message.channel_id), (id) => this.guild.user(id)),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Messages
  // -------------------------------------------------------------------------------------------

  /** Create a message from a bot body (channel message, interaction reply or follow-up). */
  private createMessage(
    channelId: string,
    body: MessageBody,
    files: UploadedFile[],
    extra: {
      type?: number;
      webhook?: boolean;
      interaction?: StoredInteraction;
      allowEphemeral?: boolean;
      loading?: boolean;
    } = {},
  ): APIMessage {
    validateMessageBody(body, { creating: !extra.loading, hasFiles: files.length > 0 });
    // Discord's `enforce_nonce`: the same nonce again within a few minutes returns the message
    // created then, and creates nothing (no MESSAGE_CREATE either).
    const nonceKey = body.enforce_nonce && body.nonce !== undefined ? `${channelId}:${String(body.nonce)}` : undefined;
    const earlier = nonceKey ? this.enforcedNonces.get(nonceKey) : undefined;
    if (earlier && Date.now() - earlier.at <= DISCORD_LIMITS.enforcedNonceMs) {
      const existing = this.guild.message(channelId, earlier.messageId);
      if (existing) return { ...structuredClone(existing), nonce: body.nonce! };
    }
    const channel = this.guild.requireChannel(channelId);
    if (isThread(channel)) this.reopenIfArchived(channel);
    let referenced: APIMessage | undefined;
    if (body.message_reference?.message_id) {
      referenced = this.guild.message(
        body.message_reference.channel_id ?? channelId,
        body.message_reference.message_id,
      );
      if (!referenced && body.message_reference.fail_if_not_exists !== false) {
        throw invalidFormBody('message_reference', 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
      }
    }
    const allowedFlags =
      FLAG.suppressEmbeds |
      FLAG.suppressNotifications |
      FLAG.componentsV2 |
      (extra.allowEphemeral ? FLAG.ephemeral : 0);
    const content = body.content ?? '';
    const resolved = this.guild.resolveMentions(content, body.allowed_mentions, referenced);
    const interaction = extra.interaction;
    const message = {
      channelId,
      author: this.guild.botUser,
      content,
      type: extra.type ?? (referenced ? 19 : 0),
      mentions: resolved.mentions,
      mentionRoles: resolved.mentionRoles,
      mentionEveryone: resolved.mentionEveryone,
      components: body.components ?? [],
      embeds: body.embeds ?? [],
      attachments: files.map((file) => ({
        id: snowflake(),
        filename: file.filename,
        size: file.size,
        content_type: file.contentType,
        url: `https://cdn.discordapp.com/attachments/${channelId}/${snowflake()}/${file.filename}`,
        proxy_url: `https://media.discordapp.net/attachments/${channelId}/${snowflake()}/${file.filename}`,
      })),
      flags: ((body.flags ?? 0) & allowedFlags) | (extra.loading ? FLAG.loading : 0),
      tts: body.tts ?? false,
      ...(referenced
        ? {
            messageReference: {
              message_id: referenced.id,
              channel_id: referenced.channel_id,
              ...optionalGuildId(this.guild.guildIdOf(channelId)),
            },
            referencedMessage: structuredClone(referenced),
          }
        : {}),
      ...(extra.webhook ? { webhookId: DISCORD_IDS.applicationId, applicationId: DISCORD_IDS.applicationId } : {}),
      ...(interaction ? { interactionMetadata: interactionMetadata(interaction, this.guild) } : {}),
    };
    if ((message.flags & FLAG.ephemeral) !== 0) {
      const ephemeral = messageObject(message);
      this.guild.ephemeralMessages.push(ephemeral);
      return ephemeral;
    }
    // The nonce comes back in the answer and over the gateway, but is not kept: a message
    // fetched later (GET) has none, as on Discord.
    const stored = this.guild.addMessage(message, body.allowed_mentions);
    if (nonceKey) this.enforcedNonces.set(nonceKey, { messageId: stored.id, at: Date.now() });
    const created = body.nonce !== undefined ? { ...stored, nonce: body.nonce } : stored;
    this.echoMessage('MESSAGE_CREATE', created);
    return created;
  }

  /** Apply a bot edit (channel PATCH, interaction update, webhook edit). */
  private editMessage(message: APIMessage, body: MessageBody, files: UploadedFile[]): APIMessage {
    validateMessageBody(
      { ...body, flags: body.flags ?? message.flags },
      { creating: false, hasFiles: files.length > 0 },
    );
    if (
      ((message.flags ?? 0) & FLAG.componentsV2) !== 0 &&
      body.flags !== undefined &&
      (body.flags & FLAG.componentsV2) === 0
    ) {
      throw invalidFormBody(
        'flags',
        'MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG',
        'The IS_COMPONENTS_V2 flag cannot be removed once set',
      );
    }
    const channel = this.guild.channel(message.channel_id);
    if (channel && isThread(channel) && channel.thread_metadata?.archived)
      throw new DiscordApiError(400, 50083, 'Thread is archived');
    const patch: Parameters<FakeDiscordGuild['editMessage']>[1] = {};
    if (body.content !== undefined) patch.content = body.content ?? '';
    if (body.embeds !== undefined) patch.embeds = (body.embeds ?? []) as APIMessage['embeds'];
    if (body.components !== undefined) patch.components = (body.components ?? []) as APIMessage['components'];
    if (body.flags !== undefined)
      patch.flags =
        ((message.flags ?? 0) & ~(FLAG.suppressEmbeds | FLAG.loading)) |
        (body.flags & (FLAG.suppressEmbeds | FLAG.componentsV2));
    else if ((message.flags ?? 0) & FLAG.loading) patch.flags = (message.flags ?? 0) & ~FLAG.loading;
    const edited = this.guild.editMessage(message, patch, body.allowed_mentions);
    this.echoMessage('MESSAGE_UPDATE', edited);
    return edited;
  }

  /** Sending into an archived thread unarchives it (Discord), unless it is locked (50083 for a bot without MANAGE_THREADS). */
  private reopenIfArchived(thread: APIThreadChannel): void {
    if (!thread.thread_metadata?.archived) return;
    if (thread.thread_metadata.locked) throw new DiscordApiError(400, 50083, 'Thread is archived');
    this.guild.setThreadState(thread.id, { archived: false });
    this.echo('THREAD_UPDATE', structuredClone(thread));
  }

  private requireBotMessage(channelId: string, messageId: string): APIMessage {
    const message = this.guild.requireMessage(channelId, messageId);
    if (message.author.id !== DISCORD_IDS.botUserId)
      throw new DiscordApiError(403, 50005, 'Cannot edit a message authored by another user');
    return message;
  }

  // -------------------------------------------------------------------------------------------
  // Interactions
  // -------------------------------------------------------------------------------------------

  private interactionCallback(request: Request): Answer {
    const interaction = this.guild.interactions.get(request.params.interaction!);
    if (!interaction) throw new DiscordApiError(404, 10062, 'Unknown interaction');
    if (interaction.token !== request.params.token) throw new DiscordApiError(401, 50027, 'Invalid Webhook Token');
    if (interaction.response) throw new DiscordApiError(400, 40060, 'Interaction has already been acknowledged.');
    if (Date.now() - interaction.createdAt > DISCORD_LIMITS.interactionAckMs)
      throw new DiscordApiError(404, 10062, 'Unknown interaction');
    const body = (request.body ?? {}) as { type?: number; data?: MessageBody & Record<string, unknown> };
    const data = body.data ?? {};
    // A button's interaction, or a modal's submit from a button: both may update that message.
    const onMessage = interaction.componentMessageId !== undefined;
    let message: APIMessage | undefined;
    switch (body.type) {
      case 4:
        message = this.createMessage(interaction.channelId, data, request.files, {
          type: interaction.type === 2 ? 20 : 0,
          webhook: true,
          interaction,
          allowEphemeral: true,
        });
        interaction.originalMessageId = message.id;
        break;
      case 5:
        // The "Bot is thinking…" message: a real message with the LOADING flag, filled by an @original edit or the first follow-up.
        message = this.createLoadingMessage(interaction, (data.flags ?? 0) & FLAG.ephemeral);
        interaction.originalMessageId = message.id;
        break;
      case 6:
      case 7: {
        if (!onMessage)
          throw invalidFormBody(
            'type',
            'INTERACTION_RESPONSE_TYPE_INVALID',
            'Interaction response type is not valid for this interaction type',
          );
        interaction.originalMessageId = interaction.componentMessageId;
        if (body.type === 7) {
          const target = this.guild.findMessage(interaction.componentMessageId!);
          if (!target) throw unknownMessage();
          message = this.editMessage(target, data, request.files);
        }
        break;
      }
      case 9:
        // A modal: shown to the person (recorded as the response, for submitModal); never in answer to a modal.
        if (interaction.type === 5)
          throw invalidFormBody(
            'type',
            'INTERACTION_RESPONSE_TYPE_INVALID',
            'Interaction response type is not valid for this interaction type',
          );
        validateModal(body.data);
        break;
      default:
        throw invalidFormBody(
          'type',
          'INTERACTION_RESPONSE_TYPE_INVALID',
          `Interaction response type ${String(body.type)} is not valid for this interaction type`,
        );
    }
    interaction.response = { type: body.type, at: Date.now(), data: body.data };
    if (request.query.get('with_response') !== 'true') return { status: 204 };
    return {
      status: 200,
      body: {
        interaction: {
          id: interaction.id,
          type: interaction.type,
          ...(interaction.originalMessageId ? { response_message_id: interaction.originalMessageId } : {}),
          ...(body.type === 5 ? { response_message_loading: true } : {}),
          ...(message ? { response_message_ephemeral: ((message.flags ?? 0) & FLAG.ephemeral) !== 0 } : {}),
        },
        ...(message ? { resource: { type: body.type, message } } : { resource: { type: body.type } }),
      },
    };
  }

  private createLoadingMessage(interaction: StoredInteraction, ephemeralFlag: number): APIMessage {
    return this.createMessage(interaction.channelId, { content: '', flags: ephemeralFlag }, [], {
      type: interaction.type === 2 ? 20 : 0,
      webhook: true,
      interaction,
      allowEphemeral: true,
      loading: true,
    });
  }

  /** The interaction behind a webhook route; refuses what Discord refuses (unknown or expired token, no response yet). */
  private webhookInteraction(request: Request): StoredInteraction {
    if (request.params.application !== DISCORD_IDS.applicationId)
      throw new DiscordApiError(404, 10015, 'Unknown Webhook');
    const interaction = [...this.guild.interactions.values()].find((i) => i.token === request.params.token);
    if (!interaction || Date.now() - interaction.createdAt > DISCORD_LIMITS.interactionTokenMs)
      throw new DiscordApiError(401, 50027, 'Invalid Webhook Token');
    // Before the initial response there is no webhook message to follow up or edit.
    if (!interaction.response) throw new DiscordApiError(404, 10015, 'Unknown Webhook');
    return interaction;
  }

  private webhookMessage(interaction: StoredInteraction, messageId: string): APIMessage {
    const id = messageId === '@original' ? interaction.originalMessageId : messageId;
    if (!id || (id !== interaction.originalMessageId && !interaction.followUpIds.includes(id))) throw unknownMessage();
    const message = this.guild.findMessage(id);
    if (!message) throw unknownMessage();
    return message;
  }

  // -------------------------------------------------------------------------------------------
  // Routes
  // -------------------------------------------------------------------------------------------

  private readonly handlers: Record<DiscordRoute, Handler> = {
    'GET /gateway': () => ({ status: 200, body: { url: this.options.gatewayUrl() } }),

    'GET /gateway/bot': () => ({
      status: 200,
      body: {
        url: this.options.gatewayUrl(),
        shards: 1,
        // @discordjs/ws caches this answer for `reset_after` ms and waits 5 s between Identifies per `max_concurrency` bucket.
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
      },
    }),

    'GET /users/@me': () => ({
      status: 200,
      body: { ...userObject(this.guild.botUser), verified: true, mfa_enabled: false, email: null, locale: 'en-US' },
    }),

    'GET /users/:user': ({ params }) => ({ status: 200, body: userObject(this.guild.requireUser(params.user!)) }),

    'POST /users/@me/channels': ({ body }) => {
      const recipient = (body as { recipient_id?: string } | undefined)?.recipient_id;
      if (!recipient) throw invalidFormBody('recipient_id', 'BASE_TYPE_REQUIRED', 'This field is required');
      return { status: 200, body: this.guild.dmChannelFor(recipient) };
    },

    'GET /applications/@me': () => ({
      status: 200,
      body: applicationObject(this.guild.botUser, { botPublic: this.botPublic, guilds: this.guild.guildIds.length }),
    }),

    // Discord's answer for a link it does not recognise is the same link back.
    'POST /attachments/refresh-urls': ({ body }) => {
      const urls = (body as { attachment_urls?: unknown } | undefined)?.attachment_urls;
      if (!Array.isArray(urls) || urls.length === 0 || urls.length > 50 || !urls.every((u) => typeof u === 'string')) {
        throw invalidFormBody('attachment_urls', 'BASE_TYPE_REQUIRED', 'This field is required');
      }
      return {
        status: 200,
        body: {
          refreshed_urls: urls.map((original) => ({
            original,
            refreshed: this.options.refreshUrl?.(original) ?? original,
          })),
        },
      };
    },

    'GET /guilds/:guild': ({ params }) => {
      if (!this.guild.hasGuild(params.guild!)) throw new DiscordApiError(404, 10004, 'Unknown Guild');
      const {
        channels: _c,
        threads: _t,
        members: _m,
        presences: _p,
        voice_states: _v,
        ...guild
      } = this.guild.guildCreatePayload(params.guild);
      return { status: 200, body: guild };
    },

    'GET /guilds/:guild/members/:user': ({ params }) => {
      if (!this.guild.hasGuild(params.guild!)) throw new DiscordApiError(404, 10004, 'Unknown Guild');
      const user = this.guild.user(params.user!);
      if (!user || !this.guild.isMember(params.guild!, user.id))
        throw new DiscordApiError(404, 10007, 'Unknown Member');
      return { status: 200, body: memberObject(user) };
    },

    'GET /guilds/:guild/threads/active': ({ params }) => {
      if (!this.guild.hasGuild(params.guild!)) throw new DiscordApiError(404, 10004, 'Unknown Guild');
      const threads = this.guild.threads(params.guild).filter((t) => !t.thread_metadata?.archived);
      return { status: 200, body: { threads, members: threads.filter((t) => t.member).map((t) => t.member) } };
    },

    'GET /channels/:channel': ({ params }) => {
      // A channel the bot's roles cannot view: Discord answers 403 Missing Access, not 404.
      if (this.hiddenChannels.has(params.channel!)) throw new DiscordApiError(403, 50001, 'Missing Access');
      return { status: 200, body: this.guild.requireChannel(params.channel!) };
    },

    'PATCH /channels/:channel': ({ params, body }) => {
      const patch = (body ?? {}) as {
        name?: string;
        archived?: boolean;
        locked?: boolean;
        auto_archive_duration?: 60 | 1440 | 4320 | 10080;
        topic?: string;
      };
      const channel = this.guild.requireChannel(params.channel!);
      if (isThread(channel)) {
        if (patch.name !== undefined && (patch.name.length < 1 || patch.name.length > DISCORD_LIMITS.threadNameChars)) {
          throw invalidFormBody(
            'name',
            'BASE_TYPE_BAD_LENGTH',
            `Must be between 1 and ${DISCORD_LIMITS.threadNameChars} in length.`,
          );
        }
        if (patch.auto_archive_duration !== undefined)
          channel.thread_metadata!.auto_archive_duration = patch.auto_archive_duration;
        const thread = this.guild.setThreadState(channel.id, patch);
        this.echo('THREAD_UPDATE', structuredClone(thread));
        return { status: 200, body: thread };
      }
      if (channelType(channel) === 1)
        throw new DiscordApiError(400, 50024, 'Cannot execute action on this channel type');
      const text = channel as APITextChannel;
      if (patch.name !== undefined) text.name = patch.name;
      if (patch.topic !== undefined) text.topic = patch.topic;
      this.echo('CHANNEL_UPDATE', structuredClone(channel));
      return { status: 200, body: channel };
    },

    'GET /channels/:channel/messages': ({ params, query }) => {
      this.guild.requireChannel(params.channel!);
      const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 50)));
      // Discord answers newest first, whatever the cursor.
      let messages = this.guild.channelMessages(params.channel!);
      const before = query.get('before');
      const after = query.get('after');
      const around = query.get('around');
      if (before) messages = messages.filter((m) => compareSnowflakes(m.id, before) < 0).slice(-limit);
      else if (after) messages = messages.filter((m) => compareSnowflakes(m.id, after) > 0).slice(0, limit);
      else if (around) {
        const index = messages.findIndex((m) => compareSnowflakes(m.id, around) >= 0);
        const start = Math.max(0, (index < 0 ? messages.length : index) - Math.floor(limit / 2));
        messages = messages.slice(start, start + limit);
      } else messages = messages.slice(-limit);
      return { status: 200, body: messages.reverse() };
    },

    'POST /channels/:channel/messages': ({ params, body, files }) => ({
      status: 200,
      body: this.createMessage(params.channel!, body ?? {}, files),
    }),

    'GET /channels/:channel/messages/:message': ({ params }) => ({
      status: 200,
      body: this.guild.requireMessage(params.channel!, params.message!),
    }),

    'PATCH /channels/:channel/messages/:message': ({ params, body, files }) => {
      const message = this.requireBotMessage(params.channel!, params.message!);
      return { status: 200, body: this.editMessage(message, body ?? {}, files) };
    },

    'DELETE /channels/:channel/messages/:message': ({ params }) => {
      this.guild.deleteMessage(params.channel!, params.message!);
      this.echo('MESSAGE_DELETE', {
        id: params.message,
        channel_id: params.channel,
        ...optionalGuildId(this.guild.guildIdOf(params.channel!)),
      });
      return { status: 204 };
    },

    'POST /channels/:channel/messages/:message/threads': ({ params, body }) => {
      const options = threadOptions(body);
      const thread = this.guild.startThreadFromMessage(params.channel!, params.message!, {
        ...options,
        ownerId: DISCORD_IDS.botUserId,
      });
      this.echo('THREAD_CREATE', { ...structuredClone(thread), newly_created: true });
      return { status: 201, body: thread };
    },

    'POST /channels/:channel/threads': ({ params, body }) => {
      const options = threadOptions(body);
      const type = (body as { type?: number } | undefined)?.type === 12 ? 12 : 11;
      const thread = this.guild.startThread(params.channel!, { ...options, type, ownerId: DISCORD_IDS.botUserId });
      this.echo('THREAD_CREATE', { ...structuredClone(thread), newly_created: true });
      return { status: 201, body: thread };
    },

    'PUT /channels/:channel/thread-members/@me': ({ params }) => {
      const thread = this.guild.requireThread(params.channel!);
      if (!thread.member) {
        thread.member = {
          id: thread.id,
          user_id: DISCORD_IDS.botUserId,
          join_timestamp: new Date().toISOString(),
          flags: 0 as ThreadMemberFlags,
        };
        thread.member_count = (thread.member_count ?? 0) + 1;
        this.echo('THREAD_MEMBER_UPDATE', { ...thread.member, guild_id: thread.guild_id });
      }
      return { status: 204 };
    },

    'GET /channels/:channel/messages/:message/reactions/:emoji': ({ params }) => {
      const message = this.guild.requireMessage(params.channel!, params.message!);
      const ids = this.guild.reactors(message.id, parseEmojiSegment(params.emoji!));
      return {
        status: 200,
        body: ids.flatMap((id) => (this.guild.user(id) ? [userObject(this.guild.user(id)!)] : [])),
      };
    },

    'PUT /channels/:channel/messages/:message/reactions/:emoji/@me': ({ params }) => {
      const message = this.guild.requireMessage(params.channel!, params.message!);
      this.refuseInArchivedThread(params.channel!);
      const emoji = parseEmojiSegment(params.emoji!);
      if (this.guild.addReaction(message, emoji, DISCORD_IDS.botUserId)) {
        const guildId = this.guild.guildIdOf(params.channel!);
        this.echo(
          'MESSAGE_REACTION_ADD',
          reactionAddPayload({
            user: this.guild.botUser,
            channelId: params.channel!,
            messageId: message.id,
            emoji,
            messageAuthorId: message.author.id,
            ...(guildId ? { guildId } : {}),
          }),
        );
      }
      return { status: 204 };
    },

    'DELETE /channels/:channel/messages/:message/reactions/:emoji/@me': ({ params }) =>
      this.removeReaction(params.channel!, params.message!, params.emoji!, DISCORD_IDS.botUserId),

    'DELETE /channels/:channel/messages/:message/reactions/:emoji/:user': ({ params }) =>
      this.removeReaction(params.channel!, params.message!, params.emoji!, params.user!),

    'POST /channels/:channel/typing': ({ params }) => {
      this.guild.requireChannel(params.channel!);
      return { status: 204 };
    },

    'POST /interactions/:interaction/:token/callback': (request) => this.interactionCallback(request),

    'POST /webhooks/:application/:token': (request) => {
      const interaction = this.webhookInteraction(request);
      const body = (request.body ?? {}) as MessageBody;
      const original = interaction.originalMessageId
        ? this.guild.findMessage(interaction.originalMessageId)
        : undefined;
      // Discord: "When using this endpoint directly after responding with DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, it functions
      // as Edit Original Interaction Response for backwards compatibility": the first follow-up fills the loading message.
      const message =
        interaction.response?.type === 5 && original && ((original.flags ?? 0) & FLAG.loading) !== 0
          ? this.editMessage(original, body, request.files)
          : this.createMessage(interaction.channelId, body, request.files, {
              webhook: true,
              interaction,
              allowEphemeral: true,
            });
      if (message.id !== interaction.originalMessageId) interaction.followUpIds.push(message.id);
      return request.query.get('wait') === 'false' ? { status: 204 } : { status: 200, body: message };
    },

    'GET /webhooks/:application/:token/messages/:message': (request) => {
      const interaction = this.webhookInteraction(request);
      return { status: 200, body: this.webhookMessage(interaction, request.params.message!) };
    },

    'PATCH /webhooks/:application/:token/messages/:message': (request) => {
      const interaction = this.webhookInteraction(request);
      const message = this.webhookMessage(interaction, request.params.message!);
      return { status: 200, body: this.editMessage(message, request.body ?? {}, request.files) };
    },

    'DELETE /webhooks/:application/:token/messages/:message': (request) => {
      const interaction = this.webhookInteraction(request);
      const message = this.webhookMessage(interaction, request.params.message!);
      if (((message.flags ?? 0) & FLAG.ephemeral) === 0) {
        this.guild.deleteMessage(message.channel_id, message.id);
        this.echo('MESSAGE_DELETE', {
          id: message.id,
          channel_id: message.channel_id,
          ...optionalGuildId(this.guild.guildIdOf(message.channel_id)),
        });
      }
      return { status: 204 };
    },

    'GET /applications/:application/commands': ({ params }) => ({
      status: 200,
      body: this.commandsOf(params.application!, 'global'),
    }),
    'PUT /applications/:application/commands': ({ params, body }) => ({
      status: 200,
      body: this.overwriteCommands(params.application!, 'global', body),
    }),
    'POST /applications/:application/commands': ({ params, body }) =>
      this.upsertCommand(params.application!, 'global', body),
    'GET /applications/:application/guilds/:guild/commands': ({ params }) => ({
      status: 200,
      body: this.commandsOf(params.application!, this.requireGuildId(params.guild!)),
    }),
    'PUT /applications/:application/guilds/:guild/commands': ({ params, body }) => ({
      status: 200,
      body: this.overwriteCommands(params.application!, this.requireGuildId(params.guild!), body),
    }),
    'POST /applications/:application/guilds/:guild/commands': ({ params, body }) =>
      this.upsertCommand(params.application!, this.requireGuildId(params.guild!), body),
  };

  private removeReaction(channelId: string, messageId: string, emojiSegment: string, userId: string): Answer {
    const message = this.guild.requireMessage(channelId, messageId);
    this.refuseInArchivedThread(channelId);
    const emoji = parseEmojiSegment(emojiSegment);
    if (this.guild.removeReaction(message, emoji, userId)) {
      const guildId = this.guild.guildIdOf(channelId);
      this.echo('MESSAGE_REACTION_REMOVE', {
        user_id: userId,
        channel_id: channelId,
        message_id: messageId,
        emoji,
        burst: false,
        type: 0,
        ...(guildId ? { guild_id: guildId } : {}),
      });
    }
    return { status: 204 };
  }

  /** In an archived thread nobody can react or edit (developers/topics/threads.mdx). */
  private refuseInArchivedThread(channelId: string): void {
    const channel = this.guild.channel(channelId);
    if (channel && isThread(channel) && channel.thread_metadata?.archived)
      throw new DiscordApiError(400, 50083, 'Thread is archived');
  }

  private requireGuildId(guildId: string): string {
    if (!this.guild.hasGuild(guildId)) throw new DiscordApiError(403, 50001, 'Missing Access');
    return guildId;
  }

  private requireApplication(applicationId: string): void {
    if (applicationId !== DISCORD_IDS.applicationId) throw new DiscordApiError(403, 50001, 'Missing Access');
  }

  private commandsOf(applicationId: string, scope: string): APIApplicationCommand[] {
    this.requireApplication(applicationId);
    return this.guild.commands.get(scope) ?? [];
  }

  /** Bulk overwrite: the list becomes exactly the body; a command keeps its id when its name survives. */
  private overwriteCommands(applicationId: string, scope: string, body: unknown): APIApplicationCommand[] {
    this.requireApplication(applicationId);
    if (!Array.isArray(body)) throw invalidFormBody('_root', 'BASE_TYPE_ARRAY', 'Must be an array.');
    if (body.length > 100) throw invalidFormBody('_root', 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
    const previous = this.guild.commands.get(scope) ?? [];
    const next = body.map((raw, index) => commandObject(raw, scope, previous, index));
    this.guild.commands.set(scope, next);
    return next;
  }

  private upsertCommand(applicationId: string, scope: string, body: unknown): Answer {
    this.requireApplication(applicationId);
    const previous = this.guild.commands.get(scope) ?? [];
    const command = commandObject(body, scope, previous, 0);
    const existed = previous.some((c) => c.id === command.id);
    this.guild.commands.set(scope, [...previous.filter((c) => c.id !== command.id), command]);
    return { status: existed ? 200 : 201, body: command };
  }
}

const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

function commandObject(
  raw: unknown,
  scope: string,
  previous: APIApplicationCommand[],
  index: number,
): APIApplicationCommand {
  const input = (raw ?? {}) as {
    name?: string;
    description?: string;
    type?: number;
    options?: unknown[];
    default_member_permissions?: string | null;
    contexts?: number[] | null;
    integration_types?: number[];
    nsfw?: boolean;
  };
  const type = input.type ?? 1;
  const name = input.name ?? '';
  if (!COMMAND_NAME.test(name) || (type === 1 && name !== name.toLowerCase()))
    throw invalidFormBody(`${index}.name`, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
  if (type === 1 && (!input.description || input.description.length > 100))
    throw invalidFormBody(`${index}.description`, 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  const kept = previous.find((c) => c.name === name && (c.type as number) === type);
  return {
    id: kept?.id ?? snowflake(),
    application_id: DISCORD_IDS.applicationId,
    ...(scope !== 'global' ? { guild_id: scope } : {}),
    name,
    description: input.description ?? '',
    type,
    options: (input.options ?? []) as APIApplicationCommand['options'],
    default_member_permissions: input.default_member_permissions ?? null,
    nsfw: input.nsfw ?? false,
    integration_types: input.integration_types ?? [0],
    contexts: input.contexts ?? null,
    version: snowflake(),
  };
}

/** `guild_id` when the channel is in a server (a DM's events carry none). */
function optionalGuildId(guildId: string | undefined): { guild_id?: string } {
  return guildId ? { guild_id: guildId } : {};
}

/**
 * The application as `GET /applications/@me` answers (Discord's developer documentation, resources/application):
 * `bot_public` is true for a new application until "Public Bot" is turned off in the portal.
 */
function applicationObject(
  bot: FakeDiscordUser,
  state: { botPublic: boolean; guilds: number },
): Record<string, unknown> {
  return {
    id: DISCORD_IDS.applicationId,
    name: bot.globalName ?? bot.username,
    icon: null,
    description: '',
    summary: '',
    type: null,
    bot_public: state.botPublic,
    bot_require_code_grant: false,
    bot: userObject(bot),
    verify_key: '0'.repeat(64),
    flags: 1 << 19,
    team: null,
    owner: userObject({ id: DISCORD_IDS.humanUserId, username: 'ada', globalName: 'Ada Lovelace' }),
    approximate_guild_count: state.guilds,
    redirect_uris: [],
    interactions_endpoint_url: null,
    install_params: { scopes: ['bot', 'applications.commands'], permissions: '0' },
    integration_types_config: { '0': {} },
  };
}

function interactionMetadata(interaction: StoredInteraction, guild: FakeDiscordGuild): Record<string, unknown> {
  const user = guild.user(interaction.userId);
  return {
    id: interaction.id,
    type: interaction.type,
    ...(user ? { user: userObject(user) } : {}),
    authorizing_integration_owners: interaction.guildId ? { '0': interaction.guildId } : { '1': interaction.userId },
    ...(interaction.componentMessageId ? { interacted_message_id: interaction.componentMessageId } : {}),
  };
}

/** Parse a JSON body, or a multipart one (discord.js uses multipart with `payload_json` when files are attached). */
async function parseBody(
  raw: Buffer,
  contentType: string | undefined,
): Promise<{ body: unknown; files: UploadedFile[] }> {
  if (raw.length === 0) return { body: undefined, files: [] };
  if (contentType?.startsWith('multipart/form-data')) {
    const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
    const files: UploadedFile[] = [];
    let body: unknown;
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') {
        if (field === 'payload_json') body = JSON.parse(value);
      } else {
        const bytes = Buffer.from(await value.arrayBuffer());
        files.push({
          field,
          filename: value.name,
          size: value.size,
          contentType: value.type,
          text: bytes.toString('utf8'),
          bytes,
        });
      }
    }
    return { body, files };
  }
  const text = raw.toString('utf8');
  try {
    return { body: JSON.parse(text), files: [] };
  } catch {
    return { body: text, files: [] };
  }
}

/** Match `METHOD /path` against the route table; `:name` segments capture (URL-decoded except `:emoji`). */
function matchRoute(method: string, path: string): { route: DiscordRoute; params: Record<string, string> } | undefined {
  const segments = path.split('/').filter(Boolean);
  // Literal segments win over parameters (`/users/@me` before `/users/:user`): try the most literal templates first.
  const candidates = DISCORD_ROUTES.filter((route) => route.startsWith(`${method} `)).sort(
    (a, b) => literalCount(b) - literalCount(a),
  );
  for (const route of candidates) {
    const template = route
      .slice(method.length + 1)
      .split('/')
      .filter(Boolean);
    if (template.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const ok = template.every((part, index) => {
      const segment = segments[index]!;
      if (part.startsWith(':')) {
        params[part.slice(1)] = part === ':emoji' ? segment : decodeURIComponent(segment);
        return true;
      }
      return part === segment;
    });
    if (ok) return { route, params };
  }
  return undefined;
}

function literalCount(route: string): number {
  return route.split('/').filter((part) => part && !part.startsWith(':')).length;
}

function send(res: ServerResponse, answer: Answer): void {
  if (answer.status === 204 || answer.body === undefined) {
    res.writeHead(answer.status, { ...answer.headers });
    res.end();
    return;
  }
  res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
  res.end(JSON.stringify(answer.body));
}
