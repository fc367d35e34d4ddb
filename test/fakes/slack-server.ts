// FakeSlack: a real HTTP server on 127.0.0.1 (ephemeral port) that answers as the Slack Web
// API at `/api/<method>` (form or JSON bodies, `{ ok, error }` answers), so tests drive the real bolt App and
// WebClient end to end. It records every call as the SDK sent it (form fields decoded, the
// JSON-carrying fields parsed) and keeps the workspace's state: messages per channel and
// thread, reactions, streams, assistant-thread status. A test arranges with `failNext`,
// `enforceRateTiers` and `addMessage`, acts through the bot, then asserts on `waitForCall`,
// `message`, `thread` and `reactionsOn`. It also hosts the `response_url` sink (`/response/<id>`)
// that bolt's `respond()` posts to, and Slack's file URLs: shared files a test registers
// (`files.add`) and the bot's uploads (slack-files.ts).
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeAgentSessions } from './slack-agent-sessions.js';
import { FakeSlackFiles, type SlackFileObject } from './slack-files.js';
import { contextActionsProblems, invalidBlocks, modalInputProblems } from './slack-block-checks.js';
import { nextTs, SLACK_IDS, type AppMentionEventPayload, type UserMessageEventPayload } from './slack-payloads.js';
import { applyTaskChunks, chunksProblem, taskBlocksProblem, type FakeTask } from './slack-task-chunks.js';

/** The arguments of one Web API call: form fields (strings) with the JSON-carrying ones parsed. */
export type SlackArgs = Record<string, unknown>;

/** What the fake answered (`ok: false` answers carry `error`). */
export interface SlackAnswer {
  ok: boolean;
  error?: string;
  [field: string]: unknown;
}

export interface SlackCall {
  /** `chat.postMessage`, … */
  method: string;
  args: SlackArgs;
  headers: IncomingHttpHeaders;
  /** `Date.now()` when the call arrived. */
  at: number;
  /** HTTP status answered (200, or 429/500 when scripted or rate limited). */
  status: number;
  answer: unknown;
}

/**
 * A scripted failure. A string is a platform error (`200 {"ok":false,"error":…}`, thrown by the
 * WebClient as `WebAPIPlatformError`). An object is a raw HTTP answer, e.g.
 * `{ status: 429, headers: { 'retry-after': '1' } }` or `{ status: 500 }`; its body defaults to
 * `{"ok":false,"error":"ratelimited"}` for 429 and an HTML-ish text for 5xx, like Slack's edge.
 */
export type ScriptedFailure = string | { status: number; headers?: Record<string, string>; body?: unknown };

type StreamState = 'streaming' | 'stopped';

/** A message as the fake workspace holds it now (after updates and appends). */
export interface StoredMessage {
  channel: string;
  ts: string;
  /** Set on thread replies (and equal to `ts` on nothing: a root has no thread_ts here). */
  threadTs?: string;
  user: string;
  botId?: string;
  /** For a streamed message: everything appended so far (markdown_text and chunk texts). */
  text: string;
  blocks?: unknown[];
  attachments?: unknown[];
  /** Files shared with it (a person's file_share, or the bot's files.completeUploadExternal). */
  files?: SlackFileObject[];
  metadata?: unknown;
  /** How many `chat.update` calls changed it. */
  edits: number;
  /** Present on messages made by `chat.startStream`. */
  stream?: {
    state: StreamState;
    /** Every chunk received, in order (`markdown_text` given alone is kept as such a chunk). */
    chunks: unknown[];
    appendCalls: number;
    /** The tasks the message shows, as Slack keeps them (slack-task-chunks.ts). */
    tasks: FakeTask[];
  };
}

export interface EphemeralMessage {
  channel: string;
  user: string;
  ts: string;
  threadTs?: string;
  text: string;
  blocks?: unknown[];
}

export interface ReactionState {
  name: string;
  users: string[];
  count: number;
}

export interface FakeUser {
  id: string;
  name: string;
  realName: string;
  displayName: string;
  isBot?: boolean;
  tz?: string;
}

export interface AssistantThreadState {
  /** The status line; `''` once cleared (Slack clears it when the app replies in the thread). */
  status: string;
  loadingMessages?: string[];
  title?: string;
  prompts?: unknown[];
  promptsTitle?: string;
}

export interface ResponseUrlPost {
  /** The `<id>` of `/response/<id>`. */
  id: string;
  body: unknown;
  headers: IncomingHttpHeaders;
  at: number;
}

export interface SeedMessage {
  channel: string;
  text: string;
  ts?: string;
  user?: string;
  threadTs?: string;
  botId?: string;
  files?: SlackFileObject[];
}

/**
 * One rate limit, as a token bucket: `limit` calls per `windowMs`, starting full with `burst`
 * tokens (default `limit`). `perChannel` keys the bucket by the `channel` argument.
 */
export interface RateRule {
  limit: number;
  windowMs: number;
  burst?: number;
  perChannel?: boolean;
}

const MINUTE = 60_000;
const tier = (n: 1 | 2 | 3 | 4): RateRule => ({ limit: { 1: 1, 2: 20, 3: 50, 4: 100 }[n], windowMs: MINUTE });

/**
 * Slack's published limits per method (per workspace, per app). "Special" methods are given the
 * tier that matches their documented behaviour. Unlisted methods are not limited.
 */
const SLACK_RATE_RULES: Readonly<Record<string, RateRule>> = {
  'auth.test': tier(4), // "Special": generous in practice
  'apps.connections.open': tier(1),
  // "1 message per second per channel, short bursts allowed" (also a workspace-wide cap, not
  // modelled). Slack publishes no burst size: 3 is this fake's choice.
  'chat.postMessage': { limit: 1, windowMs: 1_000, burst: 3, perChannel: true },
  'chat.postEphemeral': tier(4),
  'chat.update': tier(3),
  'chat.delete': tier(3),
  'chat.getPermalink': tier(4), // "Special"
  'chat.startStream': tier(2),
  'chat.appendStream': tier(4),
  'chat.stopStream': tier(2),
  'reactions.add': tier(3),
  'reactions.remove': tier(2),
  'assistant.threads.setStatus': tier(3),
  'agents.sessions.setStatus': tier(3),
  'agents.sessions.rename': tier(3),
  'assistant.threads.setTitle': tier(3),
  'assistant.threads.setSuggestedPrompts': tier(3),
  'users.info': tier(4),
  'conversations.info': tier(3),
  'conversations.history': tier(3),
  'conversations.replies': tier(3),
};

export interface RateTierOptions {
  /**
   * Multiplies every window: `0.05` turns "per minute" into "per 3 s" so a test of a Tier 3
   * method runs in seconds. `retry-after` is reported in scaled seconds (at least 1, since the
   * WebClient parses it as an integer).
   */
  scale?: number;
  /** Replace or add rules, e.g. `{ 'chat.update': { limit: 2, windowMs: 1000 } }`. */
  rules?: Record<string, RateRule>;
  /**
   * Since 2025-05-29 (existing installs: 2026-03-03) apps not approved for the Marketplace get
   * `conversations.history` / `conversations.replies` at 1 request per minute and at most 15
   * messages per page. `true` applies both.
   */
  nonMarketplaceApp?: boolean;
}

/** Form fields that carry JSON (the WebClient JSON-encodes every non-scalar argument). */
const JSON_FIELDS: readonly string[] = [
  'blocks',
  'chunks',
  'metadata',
  'attachments',
  'prompts',
  'unfurls',
  'loading_messages',
  'view',
  'files',
];

/** A modal opened with `views.open`, as the fake holds it. */
export interface OpenedView {
  id: string;
  triggerId: string;
  view: Record<string, unknown>;
}

/** How long a trigger_id is good for (Slack: 3 seconds after the interaction). */
const TRIGGER_TTL_MS = 3_000;

const DEFAULT_USERS: FakeUser[] = [
  { id: SLACK_IDS.humanUserId, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada' },
  { id: SLACK_IDS.botUserId, name: SLACK_IDS.botName, realName: 'Fake Bot', displayName: 'fakebot', isBot: true },
];

interface Waiter {
  method: string;
  predicate: (call: SlackCall) => boolean;
  resolve: (call: SlackCall) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

type Handler = (args: SlackArgs, token: string | undefined) => SlackAnswer;

/** The bot scopes the fake app holds unless a test revokes one (the manifests' files scopes included). */
const GRANTED_SCOPES = ['files:read', 'files:write'];

export interface FakeSlackOptions {
  users?: FakeUser[];
  /**
   * The bot token file URLs accept. Unset: any `xoxb-` token is the bot's. Set: any other
   * token, like none, gets Slack's HTML sign-in page instead of the file.
   */
  botToken?: string;
  /** Channels `conversations.info` knows besides #general and the DM (SLACK_IDS); the bot is a member unless `member: false`. */
  channels?: FakeChannel[];
}

/** A channel as `conversations.info` describes it. */
export interface FakeChannel {
  id: string;
  name: string;
  /** Whether the bot is in it (a public channel it was not invited to: false). */
  member?: boolean;
}

export class FakeSlack {
  /** Every Web API call, in arrival order. */
  readonly calls: SlackCall[] = [];
  /** Every POST to a response_url (`/response/<id>`), in arrival order. */
  readonly responsePosts: ResponseUrlPost[] = [];

  private server: Server | undefined;
  private readonly messages = new Map<string, StoredMessage>();
  private readonly ephemeralPosts: EphemeralMessage[] = [];
  private readonly openedViews: OpenedView[] = [];
  private readonly reactionsByMessage = new Map<string, ReactionState[]>();
  private readonly assistantThreads = new Map<string, AssistantThreadState>();
  private readonly users = new Map<string, FakeUser>();
  private readonly channels = new Map<string, FakeChannel>();
  private readonly failures = new Map<string, ScriptedFailure[]>();
  private readonly waiters = new Set<Waiter>();
  private readonly responseWaiters = new Set<{
    id: string;
    resolve: (post: ResponseUrlPost) => void;
    timer: NodeJS.Timeout;
    reject: (e: Error) => void;
  }>();
  private rateRules: Record<string, RateRule> | undefined;
  private rateScale = 1;
  private historyPageCap: number | undefined;
  private readonly buckets = new Map<string, Bucket>();
  private socketUrl: (() => string) | undefined;

  private readonly answerHooks: {
    method: string;
    predicate: (call: SlackCall) => boolean;
    action: (call: SlackCall) => Promise<void>;
  }[] = [];
  private botToken: string | undefined;
  private readonly scopes = new Set(GRANTED_SCOPES);

  /**
   * Shared files and uploads: `files.add({ bytes, name, mimetype })` gives the file object an
   * event carries; `files.downloads` and `files.uploads` record what the bot fetched and posted.
   */
  readonly files: FakeSlackFiles;

  /** Agent sessions (slack-agent-sessions.ts): each thread's status history and title; `refuse()` plays a workspace without them. */
  readonly agentSessions = new FakeAgentSessions({
    stopStream: (args, token) => this.handlers['chat.stopStream']!(args, token),
    threadOf: (channel, ts) => this.messages.get(key(channel, ts))?.threadTs,
  });

  constructor(options: FakeSlackOptions = {}) {
    for (const user of [...DEFAULT_USERS, ...(options.users ?? [])]) this.users.set(user.id, user);
    for (const channel of [{ id: SLACK_IDS.channelId, name: SLACK_IDS.channelName }, ...(options.channels ?? [])])
      this.channels.set(channel.id, channel);
    this.botToken = options.botToken;
    this.files = new FakeSlackFiles({
      origin: () => this.origin,
      isBotToken: (token) =>
        token !== undefined && (this.botToken === undefined ? token.startsWith('xoxb-') : token === this.botToken),
      hasScope: (scope) => this.scopes.has(scope),
      postFileMessage: ({ channel, threadTs, text, files }) =>
        this.store({ channel, ts: nextTs(), threadTs, text, files }).ts,
      takeDownloadFailure: () => {
        const failure = this.failures.get('url_private_download')?.shift();
        return typeof failure === 'object' ? failure : undefined;
      },
    });
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Closes every connection (keep-alive ones too) and fails pending waits. */
  async stop(): Promise<void> {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`FakeSlack stopped while waiting for ${waiter.method}`));
    }
    this.waiters.clear();
    for (const waiter of this.responseWaiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`FakeSlack stopped while waiting for a response_url post`));
    }
    this.responseWaiters.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The underlying server, for a Socket Mode fake to attach its `upgrade` handler. */
  get httpServer(): Server {
    if (!this.server) throw new Error('FakeSlack is not started');
    return this.server;
  }

  get port(): number {
    return (this.httpServer.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** What `clientOptions.slackApiUrl` (or `SLACK_API_URL`) is set to: `http://127.0.0.1:P/api/`. */
  get apiUrl(): string {
    return `${this.origin}/api/`;
  }

  /** A response_url served by this fake; put it in `blockActions({ responseUrl })`. */
  responseUrl(id: string = `r${this.responsePosts.length + 1}`): string {
    return `${this.origin}/response/${encodeURIComponent(id)}`;
  }

  // ---------------------------------------------------------------------------------------
  // Arrange
  // ---------------------------------------------------------------------------------------

  /**
   * Make the next call(s) of `method` fail. `times` queues the same failure that many times.
   * `method` may be `'response_url'` to fail the next `respond()` post (status ≥ 400 only), or
   * `'url_private_download'` to fail the next authorised file download (a raw HTTP answer).
   */
  failNext(method: string, failure: ScriptedFailure, times = 1): this {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(failure);
    this.failures.set(method, queue);
    return this;
  }

  /** Apply Slack's per-method rate limits (off by default): calls over the limit get 429 + retry-after. */
  enforceRateTiers(options: RateTierOptions = {}): this {
    const marketplace: Record<string, RateRule> = options.nonMarketplaceApp
      ? { 'conversations.history': tier(1), 'conversations.replies': tier(1) }
      : {};
    this.rateRules = { ...SLACK_RATE_RULES, ...marketplace, ...options.rules };
    this.rateScale = options.scale ?? 1;
    this.historyPageCap = options.nonMarketplaceApp ? 15 : undefined;
    this.buckets.clear();
    return this;
  }

  disableRateTiers(): this {
    this.rateRules = undefined;
    this.historyPageCap = undefined;
    this.buckets.clear();
    return this;
  }

  /** The app loses a bot scope, as an install without it would: `files:read` → downloads get the sign-in page. */
  revokeScope(scope: string): this {
    this.scopes.delete(scope);
    return this;
  }

  /** The token the file URLs accept from now on (see `FakeSlackOptions.botToken`). */
  setBotToken(token: string | undefined): this {
    this.botToken = token;
    return this;
  }

  addUser(user: FakeUser): this {
    this.users.set(user.id, user);
    return this;
  }

  /**
   * Put a message that the bot did not write (a human's mention, an earlier thread reply) into
   * the workspace, so `conversations.replies` / `history` and `thread()` see it. Accepts the
   * event payload the test delivers to the bot.
   */
  addMessage(input: SeedMessage | AppMentionEventPayload | UserMessageEventPayload): StoredMessage {
    const seed: SeedMessage =
      'type' in input
        ? {
            channel: input.channel,
            text: input.text,
            ts: input.ts,
            user: input.user,
            threadTs: input.thread_ts,
            ...(input.files ? { files: input.files } : {}),
          }
        : input;
    const stored: StoredMessage = {
      channel: seed.channel,
      ts: seed.ts ?? nextTs(),
      user: seed.user ?? SLACK_IDS.humanUserId,
      text: seed.text,
      edits: 0,
      ...(seed.threadTs !== undefined && seed.threadTs !== seed.ts ? { threadTs: seed.threadTs } : {}),
      ...(seed.botId === undefined ? {} : { botId: seed.botId }),
      ...(seed.files === undefined ? {} : { files: structuredClone(seed.files) }),
    };
    this.messages.set(key(stored.channel, stored.ts), stored);
    return { ...stored };
  }

  /** Serve `apps.connections.open` with this ws URL (for a Socket Mode fake). */
  setSocketUrl(provider: (() => string) | undefined): this {
    this.socketUrl = provider;
    return this;
  }

  // ---------------------------------------------------------------------------------------
  // Assert
  // ---------------------------------------------------------------------------------------

  callsOf(method: string): SlackCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /**
   * The first call of `method` (already received or still to come) that matches `predicate`.
   * Bolt acks an event before its listener runs, so this is how a test sees what the bot did.
   */
  async waitForCall(
    method: string,
    predicate: (call: SlackCall) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<SlackCall> {
    const seen = this.calls.find((call) => call.method === method && predicate(call));
    if (seen) return seen;
    return new Promise<SlackCall>((resolve, reject) => {
      const waiter: Waiter = {
        method,
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const got = this.callsOf(method).map((call) => JSON.stringify(call.args));
          reject(
            new Error(
              `no matching ${method} call within ${timeoutMs} ms; received ${got.length}: ${got.join(' | ').slice(0, 2000)}`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** The first post to `/response/<id>` (already received or still to come). */
  async waitForResponse(id: string, timeoutMs = 15_000): Promise<ResponseUrlPost> {
    const seen = this.responsePosts.find((post) => post.id === id);
    if (seen) return seen;
    return new Promise<ResponseUrlPost>((resolve, reject) => {
      const waiter = {
        id,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.responseWaiters.delete(waiter);
          reject(new Error(`no post to response_url ${id} within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.responseWaiters.add(waiter);
    });
  }

  /** The message as it is now, or undefined (never posted, or deleted). */
  message(channel: string, ts: string): StoredMessage | undefined {
    const stored = this.messages.get(key(channel, ts));
    return stored && clone(stored);
  }

  /** The thread rooted at `ts`: the root (if known) then its replies, oldest first. */
  thread(channel: string, ts: string): StoredMessage[] {
    return [...this.messages.values()]
      .filter((m) => m.channel === channel && (m.ts === ts || m.threadTs === ts))
      .sort((a, b) => compareTs(a.ts, b.ts))
      .map(clone);
  }

  /** Every message of a channel (roots and replies), oldest first. */
  channelMessages(channel: string): StoredMessage[] {
    return [...this.messages.values()]
      .filter((m) => m.channel === channel)
      .sort((a, b) => compareTs(a.ts, b.ts))
      .map(clone);
  }

  /** The reactions on a message (including ones added to messages this fake never stored). */
  reactionsOn(channel: string, ts: string): ReactionState[] {
    return (this.reactionsByMessage.get(key(channel, ts)) ?? []).map((r) => ({ ...r, users: [...r.users] }));
  }

  ephemerals(channel?: string): EphemeralMessage[] {
    return this.ephemeralPosts.filter((e) => channel === undefined || e.channel === channel).map((e) => ({ ...e }));
  }

  /** Modals opened with `views.open`, oldest first. */
  views(): OpenedView[] {
    return this.openedViews.map((view) => structuredClone(view));
  }

  /** The suggested prompts at the top of a DM's Messages tab (set without thread_ts), or undefined. */
  tabPrompts(channel: string): { prompts: unknown[]; title?: string } | undefined {
    const state = this.assistantThreads.get(key(channel, ''));
    return state?.prompts
      ? {
          prompts: structuredClone(state.prompts),
          ...(state.promptsTitle !== undefined ? { title: state.promptsTitle } : {}),
        }
      : undefined;
  }

  /** Status, title and suggested prompts of an assistant thread, or undefined if never set. */
  assistantThread(channel: string, threadTs: string): AssistantThreadState | undefined {
    const state = this.assistantThreads.get(key(channel, threadTs));
    return state && { ...state };
  }

  // ---------------------------------------------------------------------------------------
  // Wire
  // ---------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const raw = body.toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');

    if (this.files.owns(url.pathname)) {
      this.files.handle(req.method ?? 'GET', url.pathname, req.headers, body, res);
      return;
    }
    if (url.pathname.startsWith('/response/')) {
      this.handleResponseUrl(decodeURIComponent(url.pathname.slice('/response/'.length)), req, raw, res);
      return;
    }
    if (!url.pathname.startsWith('/api/')) {
      send(res, 404, { ok: false, error: 'unknown_method' });
      return;
    }
    const method = url.pathname.slice('/api/'.length);
    const args = parseArgs(raw, req.headers['content-type'], url.searchParams);
    const call: SlackCall = { method, args, headers: req.headers, at: Date.now(), status: 200, answer: undefined };
    const reply = this.answer(method, args, req.headers);
    call.status = reply.status;
    call.answer = reply.body;
    this.record(call);
    const hook = this.answerHooks.find((h) => h.method === method && h.predicate(call));
    if (hook) {
      this.answerHooks.splice(this.answerHooks.indexOf(hook), 1);
      await hook.action(call);
    }
    send(res, reply.status, reply.body, reply.headers);
  }

  private handleResponseUrl(id: string, req: IncomingMessage, raw: string, res: ServerResponse): void {
    const post: ResponseUrlPost = {
      id,
      body: parseArgs(raw, req.headers['content-type'], new URLSearchParams()),
      headers: req.headers,
      at: Date.now(),
    };
    this.responsePosts.push(post);
    for (const waiter of this.responseWaiters) {
      if (waiter.id !== id) continue;
      clearTimeout(waiter.timer);
      this.responseWaiters.delete(waiter);
      waiter.resolve(post);
    }
    const failure = this.failures.get('response_url')?.shift();
    if (failure !== undefined && typeof failure !== 'string') {
      send(res, failure.status, failure.body ?? 'expired_url', failure.headers);
      return;
    }
    send(res, 200, { ok: true });
  }

  private record(call: SlackCall): void {
    this.calls.push(call);
    for (const waiter of this.waiters) {
      if (waiter.method !== call.method || !waiter.predicate(call)) continue;
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.resolve(call);
    }
  }

  private answer(
    method: string,
    args: SlackArgs,
    headers: IncomingHttpHeaders,
  ): { status: number; body: unknown; headers?: Record<string, string> } {
    const failure = this.failures.get(method)?.shift();
    if (failure !== undefined) {
      if (typeof failure === 'string') return { status: 200, body: { ok: false, error: failure } };
      const body =
        failure.body ??
        (failure.status === 429
          ? { ok: false, error: 'ratelimited' }
          : `<html><body>${failure.status} Server Error</body></html>`);
      return { status: failure.status, body, headers: failure.headers };
    }
    const limited = this.rateLimit(method, args);
    if (limited !== undefined)
      return { status: 429, body: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': String(limited) } };

    const token = bearer(headers) ?? str(args, 'token');
    if (token === undefined) return { status: 200, body: { ok: false, error: 'not_authed' } };
    const handler = this.agentSessions.handlers[method] ?? this.handlers[method] ?? this.files.handlers[method];
    if (!handler) return { status: 200, body: { ok: false, error: 'unknown_method' } };
    return { status: 200, body: handler(args, token) };
  }

  /**
   * Once, when a call of `method` matching `predicate` has been answered here but before the
   * answer reaches the bot, run `action` and wait for it: what it does happens at the instant
   * the call's effect is visible in the workspace (say, a person replying to a note the bot is
   * still posting).
   */
  onceAnswered(
    method: string,
    predicate: (call: SlackCall) => boolean,
    action: (call: SlackCall) => Promise<void>,
  ): this {
    this.answerHooks.push({ method, predicate, action });
    return this;
  }

  /** Seconds to wait when this call is over its method's limit, else undefined (and a token is spent). */
  private rateLimit(method: string, args: SlackArgs): number | undefined {
    const rule = this.rateRules?.[method];
    if (!rule) return undefined;
    const bucketKey = rule.perChannel ? `${method}:${str(args, 'channel') ?? ''}` : method;
    const capacity = rule.burst ?? rule.limit;
    const refillPerMs = rule.limit / (rule.windowMs * this.rateScale);
    const now = Date.now();
    const bucket = this.buckets.get(bucketKey) ?? { tokens: capacity, updatedAt: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.updatedAt) * refillPerMs);
    bucket.updatedAt = now;
    this.buckets.set(bucketKey, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000));
  }

  // ---------------------------------------------------------------------------------------
  // Methods
  // ---------------------------------------------------------------------------------------

  private readonly handlers: Record<string, Handler> = {
    'auth.test': () => ({
      ok: true,
      url: `https://${SLACK_IDS.teamDomain}.slack.com/`,
      team: SLACK_IDS.teamName,
      user: SLACK_IDS.botName,
      team_id: SLACK_IDS.teamId,
      user_id: SLACK_IDS.botUserId,
      bot_id: SLACK_IDS.botId,
      is_enterprise_install: false,
    }),

    'apps.connections.open': (_args, token) => {
      if (!token?.startsWith('xapp-')) return failed('not_allowed_token_type');
      const url = this.socketUrl?.();
      return url === undefined ? failed('unknown_method') : { ok: true, url };
    },

    'chat.postMessage': (args) => {
      const channel = str(args, 'channel');
      if (!channel) return failed('channel_not_found');
      const text = str(args, 'text') ?? '';
      const blocks = arr(args, 'blocks');
      const attachments = arr(args, 'attachments');
      if (!text && !blocks?.length && !attachments?.length) return failed('no_text');
      const refused = contextActionsProblems(blocks);
      if (refused.length > 0) return invalidBlocks(refused);
      const taskProblem = taskBlocksProblem(blocks);
      if (taskProblem) return failed(taskProblem);
      const threadTs = str(args, 'thread_ts');
      const stored = this.store({
        channel,
        ts: nextTs(),
        threadTs,
        text,
        blocks,
        attachments,
        metadata: args.metadata,
      });
      return { ok: true, channel, ts: stored.ts, message: wireMessage(stored) };
    },

    'chat.update': (args) => {
      const stored = this.find(args, 'ts');
      if (!stored) return failed('message_not_found');
      const refused = contextActionsProblems(arr(args, 'blocks'));
      if (refused.length > 0) return invalidBlocks(refused);
      const taskProblem = taskBlocksProblem(arr(args, 'blocks'));
      if (taskProblem) return failed(taskProblem);
      if (args.text !== undefined) stored.text = str(args, 'text') ?? '';
      if (args.blocks !== undefined) stored.blocks = arr(args, 'blocks');
      if (args.attachments !== undefined) stored.attachments = arr(args, 'attachments');
      if (args.metadata !== undefined) stored.metadata = args.metadata;
      stored.edits += 1;
      return { ok: true, channel: stored.channel, ts: stored.ts, text: stored.text, message: wireMessage(stored) };
    },

    'chat.delete': (args) => {
      const stored = this.find(args, 'ts');
      if (!stored) return failed('message_not_found');
      this.messages.delete(key(stored.channel, stored.ts));
      return { ok: true, channel: stored.channel, ts: stored.ts };
    },

    'chat.postEphemeral': (args) => {
      const channel = str(args, 'channel');
      const user = str(args, 'user');
      if (!channel) return failed('channel_not_found');
      if (!user) return failed('user_not_found');
      const ts = nextTs();
      const threadTs = str(args, 'thread_ts');
      const blocks = arr(args, 'blocks');
      this.ephemeralPosts.push({
        channel,
        user,
        ts,
        text: str(args, 'text') ?? '',
        ...(threadTs ? { threadTs } : {}),
        ...(blocks ? { blocks } : {}),
      });
      return { ok: true, message_ts: ts };
    },

    'chat.getPermalink': (args) => {
      const channel = str(args, 'channel');
      const ts = str(args, 'message_ts');
      if (!channel || !ts) return failed('message_not_found');
      return {
        ok: true,
        channel,
        permalink: `https://${SLACK_IDS.teamDomain}.slack.com/archives/${channel}/p${ts.replace('.', '')}`,
      };
    },

    'chat.startStream': (args) => {
      const channel = str(args, 'channel');
      if (!channel) return failed('channel_not_found');
      const threadTs = str(args, 'thread_ts');
      // Streamed messages are always thread replies; without thread_ts Slack refuses.
      if (!threadTs) return failed('invalid_arguments');
      // Outside a DM Slack must know who the stream is for (documented errors of chat.startStream).
      if (!channel.startsWith('D')) {
        if (!str(args, 'recipient_team_id')) return failed('missing_recipient_team_id');
        if (!str(args, 'recipient_user_id')) return failed('missing_recipient_user_id');
      }
      const chunkProblem = chunksProblem(args);
      if (chunkProblem) return failed(chunkProblem);
      const stored = this.store({ channel, ts: nextTs(), threadTs, text: '' });
      stored.stream = { state: 'streaming', chunks: [], appendCalls: 0, tasks: [] };
      appendStreamed(stored, args);
      return { ok: true, channel, ts: stored.ts };
    },

    'chat.appendStream': (args) => {
      const stored = this.find(args, 'ts');
      if (!stored) return failed('message_not_found');
      if (stored.stream?.state !== 'streaming') return failed('message_not_in_streaming_state');
      const chunkProblem = chunksProblem(args);
      if (chunkProblem) return failed(chunkProblem);
      appendStreamed(stored, args);
      stored.stream.appendCalls += 1;
      return { ok: true, channel: stored.channel, ts: stored.ts };
    },

    'chat.stopStream': (args) => {
      const stored = this.find(args, 'ts');
      if (!stored) return failed('message_not_found');
      if (stored.stream?.state !== 'streaming') return failed('message_not_in_streaming_state');
      const chunkProblem = chunksProblem(args);
      if (chunkProblem) return failed(chunkProblem);
      const blocks = arr(args, 'blocks');
      const refused = contextActionsProblems(blocks);
      if (refused.length > 0) return invalidBlocks(refused);
      appendStreamed(stored, args);
      if (blocks) stored.blocks = blocks;
      if (args.metadata !== undefined) stored.metadata = args.metadata;
      stored.stream.state = 'stopped';
      return { ok: true, channel: stored.channel, ts: stored.ts, message: wireMessage(stored) };
    },

    'reactions.add': (args, token) => {
      const target = this.reactionTarget(args);
      if (typeof target === 'string') return failed(target);
      const user = this.tokenUser(token);
      const existing = target.list.find((r) => r.name === target.name);
      if (existing?.users.includes(user)) return failed('already_reacted');
      if (existing) {
        existing.users.push(user);
        existing.count += 1;
      } else {
        target.list.push({ name: target.name, users: [user], count: 1 });
      }
      this.reactionsByMessage.set(target.key, target.list);
      return { ok: true };
    },

    'reactions.remove': (args, token) => {
      const target = this.reactionTarget(args);
      if (typeof target === 'string') return failed(target);
      const user = this.tokenUser(token);
      const existing = target.list.find((r) => r.name === target.name);
      if (!existing?.users.includes(user)) return failed('no_reaction');
      existing.users = existing.users.filter((u) => u !== user);
      existing.count -= 1;
      this.reactionsByMessage.set(
        target.key,
        target.list.filter((r) => r.count > 0),
      );
      return { ok: true };
    },

    'assistant.threads.setStatus': (args) => {
      const state = this.assistantState(args);
      if (typeof state === 'string') return failed(state);
      state.status = str(args, 'status') ?? '';
      const loading = arr(args, 'loading_messages');
      if (loading) state.loadingMessages = loading.map(String);
      else delete state.loadingMessages;
      return { ok: true };
    },

    'assistant.threads.setTitle': (args) => {
      const state = this.assistantState(args);
      if (typeof state === 'string') return failed(state);
      state.title = str(args, 'title') ?? '';
      return { ok: true };
    },

    'assistant.threads.setSuggestedPrompts': (args) => {
      // Slack's limits: one to four prompts, each a title and a message.
      const prompts = arr(args, 'prompts');
      const wellFormed = (prompt: unknown) => {
        const { title, message } = (prompt ?? {}) as { title?: unknown; message?: unknown };
        return typeof title === 'string' && title.length > 0 && typeof message === 'string' && message.length > 0;
      };
      if (!prompts || prompts.length === 0 || prompts.length > 4 || !prompts.every(wellFormed))
        return failed('invalid_arguments');
      // Without thread_ts: the prompts at the top of the Messages tab (the agent messaging experience).
      const state =
        str(args, 'thread_ts') === undefined && str(args, 'channel_id')
          ? this.tabState(str(args, 'channel_id')!)
          : this.assistantState(args);
      if (typeof state === 'string') return failed(state);
      state.prompts = arr(args, 'prompts') ?? [];
      const title = str(args, 'title');
      if (title !== undefined) state.promptsTitle = title;
      return { ok: true };
    },

    'views.open': (args) => {
      const triggerId = str(args, 'trigger_id');
      if (!triggerId) return failed('invalid_arguments');
      // Our payload fakes mint trigger ids as `<n>.<epoch ms>.<hex>`: enforce Slack's 3 s.
      const issuedAt = Number(triggerId.split('.')[1]);
      if (!Number.isFinite(issuedAt) || issuedAt <= 0) return failed('invalid_trigger_id');
      if (Date.now() - issuedAt > TRIGGER_TTL_MS) return failed('expired_trigger_id');
      const view = args.view;
      if (view === null || typeof view !== 'object' || Array.isArray(view)) return failed('invalid_arguments');
      const problems = [
        ...modalProblems(view as Record<string, unknown>),
        ...modalInputProblems(view as Record<string, unknown>),
      ];
      if (problems.length > 0)
        return {
          ok: false,
          error: 'invalid_arguments',
          response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) },
        };
      const id = `V${String(this.openedViews.length + 1).padStart(8, '0')}`;
      this.openedViews.push({ id, triggerId, view: structuredClone(view as Record<string, unknown>) });
      return {
        ok: true,
        view: {
          ...(view as Record<string, unknown>),
          id,
          team_id: SLACK_IDS.teamId,
          hash: `${Date.now()}.hash`,
          state: { values: {} },
        },
      };
    },

    'users.info': (args) => {
      const user = this.users.get(str(args, 'user') ?? '');
      if (!user) return failed('user_not_found');
      return {
        ok: true,
        user: {
          id: user.id,
          team_id: SLACK_IDS.teamId,
          name: user.name,
          deleted: false,
          real_name: user.realName,
          tz: user.tz ?? 'UTC',
          tz_offset: 0,
          is_bot: user.isBot ?? false,
          is_app_user: false,
          profile: {
            display_name: user.displayName,
            real_name: user.realName,
            display_name_normalized: user.displayName,
            real_name_normalized: user.realName,
          },
        },
      };
    },

    // A channel that does not exist and a private one the bot is not in look alike: channel_not_found.
    'conversations.info': (args) => {
      const id = str(args, 'channel') ?? '';
      if (id === SLACK_IDS.dmChannelId) return { ok: true, channel: { id, is_im: true, user: SLACK_IDS.humanUserId } };
      const channel = this.channels.get(id);
      if (!channel) return failed('channel_not_found');
      return {
        ok: true,
        channel: {
          id,
          name: channel.name,
          is_channel: true,
          is_private: false,
          is_archived: false,
          is_member: channel.member ?? true,
          context_team_id: SLACK_IDS.teamId,
        },
      };
    },

    'conversations.replies': (args) => {
      const channel = str(args, 'channel') ?? '';
      const ts = str(args, 'ts') ?? '';
      const thread = this.thread(channel, ts);
      if (thread.length === 0) return failed('thread_not_found');
      // `oldest` bounds the replies; the thread's root always comes first, as Slack sends it.
      const oldest = Number(str(args, 'oldest') ?? '0');
      return this.page(
        thread.filter((m) => m.ts === ts || Number(m.ts) >= oldest),
        args,
      );
    },

    'conversations.history': (args) => {
      const channel = str(args, 'channel');
      if (!channel) return failed('channel_not_found');
      // history lists roots only, newest first; replies stay inside their thread.
      const roots = this.channelMessages(channel)
        .filter((m) => m.threadTs === undefined)
        .reverse();
      return this.page(roots, args);
    },
  };

  // ---------------------------------------------------------------------------------------
  // State helpers
  // ---------------------------------------------------------------------------------------

  private store(fields: {
    channel: string;
    ts: string;
    threadTs: string | undefined;
    text: string;
    blocks?: unknown[];
    attachments?: unknown[];
    files?: SlackFileObject[];
    metadata?: unknown;
  }): StoredMessage {
    const stored: StoredMessage = {
      channel: fields.channel,
      ts: fields.ts,
      user: SLACK_IDS.botUserId,
      botId: SLACK_IDS.botId,
      text: fields.text,
      edits: 0,
      ...(fields.threadTs ? { threadTs: fields.threadTs } : {}),
      ...(fields.blocks ? { blocks: fields.blocks } : {}),
      ...(fields.attachments ? { attachments: fields.attachments } : {}),
      ...(fields.files ? { files: fields.files } : {}),
      ...(fields.metadata !== undefined ? { metadata: fields.metadata } : {}),
    };
    this.messages.set(key(stored.channel, stored.ts), stored);
    // Slack clears an assistant thread's status when the app replies in that thread.
    const status = fields.threadTs ? this.assistantThreads.get(key(fields.channel, fields.threadTs)) : undefined;
    if (status) status.status = '';
    return stored;
  }

  private find(args: SlackArgs, tsField: string): StoredMessage | undefined {
    return this.messages.get(key(str(args, 'channel') ?? '', str(args, tsField) ?? ''));
  }

  private reactionTarget(args: SlackArgs): { key: string; name: string; list: ReactionState[] } | string {
    const channel = str(args, 'channel');
    const ts = str(args, 'timestamp');
    const name = str(args, 'name');
    if (!channel || !ts) return 'no_item_specified';
    if (!name) return 'invalid_name';
    const messageKey = key(channel, ts);
    return { key: messageKey, name, list: this.reactionsByMessage.get(messageKey) ?? [] };
  }

  /** A user token (`xoxp-…`) is not modelled: every call acts as the bot. */
  private tokenUser(_token: string | undefined): string {
    return SLACK_IDS.botUserId;
  }

  /** The Messages tab of a DM, apart from its threads (suggested prompts set without thread_ts). */
  private tabState(channel: string): AssistantThreadState {
    const state = this.assistantThreads.get(key(channel, '')) ?? { status: '' };
    this.assistantThreads.set(key(channel, ''), state);
    return state;
  }

  private assistantState(args: SlackArgs): AssistantThreadState | string {
    const channel = str(args, 'channel_id');
    const threadTs = str(args, 'thread_ts');
    if (!channel) return 'channel_not_found';
    if (!threadTs) return 'invalid_arguments';
    const stateKey = key(channel, threadTs);
    const state = this.assistantThreads.get(stateKey) ?? { status: '' };
    this.assistantThreads.set(stateKey, state);
    return state;
  }

  private page(messages: StoredMessage[], args: SlackArgs): SlackAnswer {
    const requested = Number(str(args, 'limit') ?? '0') || 1000;
    const limit = this.historyPageCap === undefined ? requested : Math.min(requested, this.historyPageCap);
    const shown = messages.slice(0, limit);
    const hasMore = messages.length > shown.length;
    return {
      ok: true,
      messages: shown.map((m) => ({ ...wireMessage(m), ...this.replyInfo(m) })),
      has_more: hasMore,
      response_metadata: { next_cursor: hasMore ? `cursor_${shown.length}` : '' },
    };
  }

  private replyInfo(root: StoredMessage): Record<string, unknown> {
    if (root.threadTs !== undefined) return {};
    const replies = this.thread(root.channel, root.ts).filter((m) => m.ts !== root.ts);
    if (replies.length === 0) return {};
    return { thread_ts: root.ts, reply_count: replies.length, latest_reply: replies[replies.length - 1]!.ts };
  }
}

// ---------------------------------------------------------------------------------------
// Pure helpers
// ---------------------------------------------------------------------------------------

function key(channel: string, ts: string): string {
  return `${channel}/${ts}`;
}

/**
 * What Slack would refuse in a modal view (docs.slack.dev modal view and Block Kit limits):
 * type, a title, close and submit of at most 24 characters, at most 100 blocks, section texts
 * of at most 3,000 characters, button values of at most 2,000.
 */
export function modalProblems(view: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (view.type !== 'modal') problems.push('view type must be modal');
  const textOf = (field: unknown) => (field as { text?: unknown } | undefined)?.text;
  for (const field of ['title', 'close', 'submit']) {
    const text = textOf(view[field]);
    if (field === 'title' && typeof text !== 'string') problems.push('missing title');
    if (typeof text === 'string' && text.length > 24)
      problems.push(`${field} must be at most 24 characters [json-pointer:/view/${field}/text]`);
  }
  const blocks = view.blocks;
  if (!Array.isArray(blocks)) return [...problems, 'missing blocks'];
  if (blocks.length > 100) problems.push(`no more than 100 items allowed [json-pointer:/view/blocks]`);
  blocks.forEach((block: { type?: unknown; text?: { text?: unknown }; elements?: { value?: unknown }[] }, i) => {
    const text = block.text?.text;
    if (block.type === 'section' && typeof text === 'string' && text.length > 3000)
      problems.push(`must be less than 3001 characters [json-pointer:/view/blocks/${i}/text/text]`);
    for (const element of block.elements ?? []) {
      if (typeof element.value === 'string' && element.value.length > 2000)
        problems.push(`must be less than 2001 characters [json-pointer:/view/blocks/${i}/elements]`);
    }
  });
  return problems;
}

function failed(error: string): SlackAnswer {
  return { ok: false, error };
}

function str(args: SlackArgs, field: string): string | undefined {
  const value = args[field];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function arr(args: SlackArgs, field: string): unknown[] | undefined {
  const value = args[field];
  return Array.isArray(value) ? (value as unknown[]) : undefined;
}

function compareTs(a: string, b: string): number {
  const [as = '0', au = '0'] = a.split('.');
  const [bs = '0', bu = '0'] = b.split('.');
  return Number(as) - Number(bs) || Number(au) - Number(bu);
}

function clone(message: StoredMessage): StoredMessage {
  return structuredClone(message);
}

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

/** `markdown_text` and `chunks` of start/append/stop go onto the message in arrival order. */
function appendStreamed(stored: StoredMessage, args: SlackArgs): void {
  const markdown = str(args, 'markdown_text');
  const chunks = arr(args, 'chunks') ?? [];
  const received: unknown[] = markdown ? [{ type: 'markdown_text', text: markdown }, ...chunks] : chunks;
  if (stored.stream) applyTaskChunks(stored.stream.tasks, received);
  for (const chunk of received) {
    stored.stream?.chunks.push(chunk);
    const text =
      (chunk as { type?: unknown; text?: unknown }).type === 'markdown_text'
        ? (chunk as { text?: unknown }).text
        : undefined;
    if (typeof text === 'string') stored.text += text;
  }
}

/** A stored message in the shape Slack returns it inside answers. */
function wireMessage(m: StoredMessage): Record<string, unknown> {
  return {
    type: 'message',
    text: m.text,
    user: m.user,
    ts: m.ts,
    ...(m.botId ? { bot_id: m.botId, app_id: SLACK_IDS.appId } : {}),
    team: SLACK_IDS.teamId,
    ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
    ...(m.blocks ? { blocks: m.blocks } : {}),
    ...(m.attachments ? { attachments: m.attachments } : {}),
    ...(m.files ? { files: m.files, upload: true } : {}),
    ...(m.metadata !== undefined ? { metadata: m.metadata } : {}),
    ...(m.edits > 0 ? { edited: { user: m.user, ts: m.ts } } : {}),
  };
}

/**
 * Form bodies (what the WebClient sends) become string fields with the JSON-carrying ones
 * parsed; JSON bodies are taken as they are. Query parameters count too (GET-style calls).
 */
function parseArgs(raw: string, contentType: string | undefined, query: URLSearchParams): SlackArgs {
  const args: SlackArgs = Object.fromEntries(query);
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    try {
      const parsed: unknown = raw ? JSON.parse(raw) : {};
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) Object.assign(args, parsed);
      else args._body = parsed;
    } catch {
      args._raw = raw;
    }
    return args;
  }
  if (type === 'application/x-www-form-urlencoded' || (!type && raw.includes('='))) {
    for (const [field, value] of new URLSearchParams(raw)) {
      args[field] = JSON_FIELDS.includes(field) ? parseJsonField(value) : value;
    }
    return args;
  }
  if (raw) args._raw = raw;
  return args;
}

function parseJsonField(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const contentType = typeof body === 'string' ? 'text/html' : 'application/json; charset=utf-8';
  res.writeHead(status, { 'content-type': contentType, ...headers });
  res.end(text);
}
