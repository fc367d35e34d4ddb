// FakeDiscordGateway: Discord's Gateway v10 (JSON text frames, no compression) for the real
// discord.js client (@discordjs/ws 1.2.3). It hangs a `ws` WebSocketServer (noServer) off the
// fake's HTTP server: `/gateway` is the URL `GET /gateway/bot` hands out, `/gateway/resume` the
// `resume_gateway_url` READY hands out, so a test can see which one a connection used.
//
// The one idea: a *session* outlives its connection. Every dispatch gets the session's next
// sequence number and goes into the session's buffer; it is sent at once only while a
// connection is bound to the session. A Resume (op 6) with the last sequence the client saw
// replays the buffered dispatches after it, then RESUMED, so an event dispatched while the
// client was reconnecting arrives exactly once.
//
// Protocol, as discord.js drives it:
//   server → Hello (op 10, heartbeat_interval); the first heartbeat comes after interval × jitter.
//   client → Identify (op 2): token (wrong → close 4004, `login()` rejects "Authentication failed"),
//            intents (privileged ones not enabled → close 4014), shard [0, 1].
//   server → READY (s=1: session_id, resume_gateway_url, the bot user, guilds as unavailable),
//            then GUILD_CREATE per guild. discord.js emits `clientReady` only once every READY
//            guild has arrived (without GUILD_CREATE it waits `waitGuildTimeout`, 15 s).
//   client → Heartbeat (op 1, d = last seq) ⇄ server Heartbeat ACK (op 11).
//   server → Reconnect (op 7): the client closes with 4200, waits 500 ms, connects to
//            resume_gateway_url and sends Resume (op 6 {token, session_id, seq}).
//   server → Invalid Session (op 9, d = resumable): d=true → Resume on the same socket;
//            d=false → the client closes (1000), forgets the session and re-identifies on the
//            gateway URL. Its identify throttle waits up to 5 s + 1.5 s jitter when the last
//            Identify was under 5 s ago: pass `ws: { buildIdentifyThrottler }` to skip that.
// Like Discord, it withholds dispatches whose intent was not identified (`dropped`), blanks
// message content without MESSAGE_CONTENT (1 << 15) unless the message is the bot's, mentions
// it or replies to it, and invalidates a session whose client closed with 1000 or 1001.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { DISCORD_IDS, until, userObject } from './discord-payloads.js';
import type { FakeDiscordGuild } from './discord-guild.js';

const GATEWAY_PATH = '/gateway';
const RESUME_PATH = '/gateway/resume';

/** Gateway opcodes (discord-api-types `GatewayOpcodes`), spelled out so a reader of frames can follow. */
const OP = {
  dispatch: 0,
  heartbeat: 1,
  identify: 2,
  presenceUpdate: 3,
  voiceStateUpdate: 4,
  resume: 6,
  reconnect: 7,
  requestGuildMembers: 8,
  invalidSession: 9,
  hello: 10,
  heartbeatAck: 11,
} as const;

/** Intent bits (discord-api-types `GatewayIntentBits`) the fake routes and checks. */
const INTENT = {
  guilds: 1 << 0,
  guildMembers: 1 << 1,
  guildPresences: 1 << 8,
  guildMessages: 1 << 9,
  guildMessageReactions: 1 << 10,
  guildMessageTyping: 1 << 11,
  directMessages: 1 << 12,
  directMessageReactions: 1 << 13,
  directMessageTyping: 1 << 14,
  messageContent: 1 << 15,
} as const;

export interface GatewayFrame {
  op: number;
  d: unknown;
  s: number | null;
  t: string | null;
}

export interface GatewayConnection {
  /** 0, 1, 2… in order of arrival. */
  index: number;
  /** `/gateway` or `/gateway/resume`. */
  path: string;
  /** The query the client connected with (`v=10&encoding=json`). */
  query: string;
  openedAt: number;
  /** How the client first started a session on this connection (a later op 9 d=true Resume on it does not change this). */
  started?: 'identify' | 'resume';
  sessionId?: string;
  closedAt?: number;
  closeCode?: number;
  /** Who closed it. */
  closedBy?: 'client' | 'server';
}

export interface ReceivedFrame {
  connection: number;
  op: number;
  d: unknown;
  at: number;
}

export interface SentFrame extends GatewayFrame {
  connection: number;
  at: number;
}

export interface DroppedDispatch {
  t: string;
  d: unknown;
  /** e.g. "intent GUILD_MESSAGES (512) not identified". */
  reason: string;
}

interface GatewaySession {
  id: string;
  seq: number;
  intents: number;
  shard: [number, number];
  /** Every dispatch of the session, for replay on Resume. */
  buffer: GatewayFrame[];
  /** The connection the session is bound to now; none between a drop and the Resume. */
  socket: WebSocket | undefined;
  invalid: boolean;
}

interface LiveConnection {
  record: GatewayConnection;
  socket: WebSocket;
  session?: GatewaySession;
}

export interface FakeGatewayOptions {
  token: string;
  guild: FakeDiscordGuild;
  /** `ws://127.0.0.1:P` of the fake, known once it listens. */
  origin: () => string;
  /** Discord sends 41250; a small value (e.g. 500) makes heartbeats happen inside a test. */
  heartbeatIntervalMs?: number;
  /** Privileged intents enabled in the (fake) developer portal. All on by default. */
  privilegedIntents?: { messageContent?: boolean; guildMembers?: boolean; guildPresences?: boolean };
  /** The bot is in the fake guild (default true). False: READY does not list it and no GUILD_CREATE follows for it (a bot not yet invited). */
  inGuild?: boolean;
}

export class FakeDiscordGateway {
  readonly connections: GatewayConnection[] = [];
  /** Every frame the client sent, in order. */
  readonly received: ReceivedFrame[] = [];
  /** Every frame sent to the client (replays included), in order. */
  readonly sent: SentFrame[] = [];
  /** Dispatches withheld because the session did not identify with their intent. */
  readonly dropped: DroppedDispatch[] = [];
  /** Why the fake refused a connection outright (a client option it cannot honour). */
  readonly protocolErrors: string[] = [];
  /** Answer heartbeats with op 11. Turn off to play a zombie connection (the client then reconnects and resumes). */
  ackHeartbeats = true;

  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly live = new Set<LiveConnection>();
  private readonly sessions = new Map<string, GatewaySession>();
  private closed = false;

  constructor(private readonly options: FakeGatewayOptions) {}

  get url(): string {
    return `${this.options.origin()}${GATEWAY_PATH}`;
  }

  get resumeUrl(): string {
    return `${this.options.origin()}${RESUME_PATH}`;
  }

  get heartbeatIntervalMs(): number {
    return this.options.heartbeatIntervalMs ?? 41_250;
  }

  /** Sessions that can still receive or replay dispatches. */
  get activeSessions(): number {
    return [...this.sessions.values()].filter((s) => !s.invalid).length;
  }

  /** Open connections now. */
  get openConnections(): number {
    return this.live.size;
  }

  /** The last sequence number handed out in the newest session. */
  get lastSequence(): number {
    return [...this.sessions.values()].at(-1)?.seq ?? 0;
  }

  /** For the HTTP server's `upgrade` event: true if the request was a gateway path and is handled. */
  handleUpgrade(req: IncomingMessage, stream: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== GATEWAY_PATH && url.pathname !== RESUME_PATH) return false;
    if (this.closed) {
      stream.end('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return true;
    }
    this.wss.handleUpgrade(req, stream, head, (socket) => this.onConnection(socket, url));
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Dispatch
  // -------------------------------------------------------------------------------------------

  /**
   * Send a dispatch (op 0) to every session: each gets its next sequence number and keeps the
   * frame for replay. Returns the sequence numbers given (empty if no session took it).
   */
  dispatch(t: string, d: unknown): number[] {
    const given: number[] = [];
    for (const session of this.sessions.values()) {
      if (session.invalid) continue;
      const seq = this.dispatchTo(session, t, d);
      if (seq !== undefined) given.push(seq);
    }
    return given;
  }

  private dispatchTo(session: GatewaySession, t: string, d: unknown): number | undefined {
    // READY and RESUMED belong to the session itself, whatever its shard.
    if (t !== 'READY' && t !== 'RESUMED' && !this.onShard(session, d)) return undefined;
    const required = requiredIntent(t, d);
    if (required !== undefined && (session.intents & required.bit) === 0) {
      this.dropped.push({ t, d, reason: `intent ${required.name} (${required.bit}) not identified` });
      return undefined;
    }
    const data = this.withoutUnentitledContent(session, t, d);
    const frame: GatewayFrame = { op: OP.dispatch, d: data, s: ++session.seq, t };
    session.buffer.push(frame);
    if (session.socket) this.send(session.socket, frame);
    return frame.s!;
  }

  /** Guild events go to the shard `(guild_id >> 22) % num_shards`; DMs to shard 0. */
  private onShard(session: GatewaySession, d: unknown): boolean {
    const [shardId, shardCount] = session.shard;
    const guildId =
      (d as { guild_id?: unknown } | null)?.guild_id ?? (isGuildPayload(d) ? (d as { id: string }).id : undefined);
    if (typeof guildId !== 'string') return shardId === 0;
    return Number((BigInt(guildId) >> 22n) % BigInt(shardCount)) === shardId;
  }

  /** Without MESSAGE_CONTENT, Discord sends guild messages with empty content, embeds, attachments and components (a forward's snapshots too). */
  private withoutUnentitledContent(session: GatewaySession, t: string, d: unknown): unknown {
    if (t !== 'MESSAGE_CREATE' && t !== 'MESSAGE_UPDATE') return d;
    if (session.intents & INTENT.messageContent) return d;
    const message = d as {
      guild_id?: string;
      author?: { id: string };
      mentions?: { id: string }[];
      referenced_message?: { author?: { id: string } } | null;
    };
    const bot = DISCORD_IDS.botUserId;
    if (
      !message.guild_id ||
      message.author?.id === bot ||
      message.mentions?.some((u) => u.id === bot) ||
      message.referenced_message?.author?.id === bot
    )
      return d;
    const snapshots = (d as { message_snapshots?: { message: Record<string, unknown> }[] }).message_snapshots;
    return {
      ...message,
      content: '',
      embeds: [],
      attachments: [],
      components: [],
      poll: undefined,
      // A forward's copies are message content too.
      ...(snapshots
        ? {
            message_snapshots: snapshots.map((s) => ({
              message: { ...s.message, content: '', embeds: [], attachments: [], components: [] },
            })),
          }
        : {}),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Failure injection
  // -------------------------------------------------------------------------------------------

  /**
   * Op 7 Reconnect on every open connection. Resolves once the client has closed them (with
   * 4200, keeping its session); it reconnects to `resume_gateway_url` and resumes about 500 ms
   * later. Dispatch something now and it is replayed on the Resume.
   */
  async requestReconnect(timeoutMs = 15_000): Promise<void> {
    const targets = [...this.live];
    if (targets.length === 0) throw new Error('no open gateway connection to send Reconnect (op 7) to');
    for (const connection of targets) this.send(connection.socket, { op: OP.reconnect, d: null, s: null, t: null });
    await until(
      () => (targets.every((c) => !this.live.has(c)) ? true : undefined),
      'the client to close after op 7',
      timeoutMs,
    );
  }

  /**
   * Op 9 Invalid Session on every open connection. `resumable: false` forgets the sessions
   * (no replay: the client re-identifies and gets READY and GUILD_CREATE again).
   */
  invalidateSession(resumable: boolean): void {
    for (const connection of this.live) {
      if (!resumable && connection.session) this.forget(connection.session);
      this.send(connection.socket, { op: OP.invalidSession, d: resumable, s: null, t: null });
    }
  }

  /**
   * Close every open connection from the server side with `code`. Codes discord.js resumes on:
   * 4000, 4001, 4002, 4009 (and any unknown code); it re-identifies on 1000, 4003, 4005, 4007,
   * 4008; it gives up on 4004, 4010–4014.
   */
  async closeConnections(code = 4000, reason = 'fake gateway closed the connection'): Promise<void> {
    const targets = [...this.live];
    for (const connection of targets) {
      connection.record.closedBy = 'server';
      connection.socket.close(code, reason);
    }
    await until(() => (targets.every((c) => !this.live.has(c)) ? true : undefined), 'gateway connections to close');
  }

  /** Drop every connection without a close frame (a network failure): the client resumes. */
  terminateConnections(): void {
    for (const connection of this.live) {
      connection.record.closedBy = 'server';
      connection.socket.terminate();
    }
  }

  /** Op 1 from the server: the client must heartbeat at once. */
  requestHeartbeat(): void {
    for (const connection of this.live) this.send(connection.socket, { op: OP.heartbeat, d: null, s: null, t: null });
  }

  // -------------------------------------------------------------------------------------------
  // Waits
  // -------------------------------------------------------------------------------------------

  /** How many sessions were started with Identify (READY sent). */
  get identifyCount(): number {
    return this.sent.filter((f) => f.t === 'READY').length;
  }

  /** How many Resumes succeeded (RESUMED sent), on a new connection or (after op 9 d=true) the same one. */
  get resumeCount(): number {
    return this.sent.filter((f) => f.t === 'RESUMED').length;
  }

  /** Resolves once READY has been sent `count` times in all. */
  async waitForIdentified(count = 1, timeoutMs = 15_000): Promise<void> {
    await until(
      () => (this.identifyCount >= count ? true : undefined),
      `${count} Identify(s) answered with READY`,
      timeoutMs,
    );
  }

  /**
   * Resolves once RESUMED has been sent `count` times in all. The client handles it a moment
   * later: wait for its `shardResume` event before injecting the next failure.
   */
  async waitForResumed(count = 1, timeoutMs = 15_000): Promise<void> {
    await until(
      () => (this.resumeCount >= count ? true : undefined),
      `${count} Resume(s) answered with RESUMED`,
      timeoutMs,
    );
  }

  /** Resolves once the client has sent `count` heartbeats (op 1) in all. */
  async waitForHeartbeats(count = 1, timeoutMs = 15_000): Promise<void> {
    await until(
      () => (this.received.filter((f) => f.op === OP.heartbeat).length >= count ? true : undefined),
      `${count} heartbeat(s)`,
      timeoutMs,
    );
  }

  /** Resolves once no connection is open (after `client.destroy()`). */
  async waitForNoConnections(timeoutMs = 15_000): Promise<void> {
    await until(() => (this.live.size === 0 ? true : undefined), 'every gateway connection to close', timeoutMs);
  }

  /** Terminate every socket and stop accepting. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const connection of this.live) connection.socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  // -------------------------------------------------------------------------------------------
  // Wire
  // -------------------------------------------------------------------------------------------

  private onConnection(socket: WebSocket, url: URL): void {
    const record: GatewayConnection = {
      index: this.connections.length,
      path: url.pathname,
      query: url.searchParams.toString(),
      openedAt: Date.now(),
    };
    this.connections.push(record);
    const connection: LiveConnection = { record, socket };
    this.live.add(connection);
    socket.on('error', () => undefined); // a reset by the client is not the fake's failure
    socket.on('close', (code) => this.onClose(connection, code));

    const refusal = refuseQuery(url.searchParams);
    if (refusal) {
      this.protocolErrors.push(refusal);
      // 4012 (invalid API version) is one discord.js does not retry: the test fails loudly instead of looping.
      record.closedBy = 'server';
      socket.close(4012, refusal.slice(0, 120));
      return;
    }
    socket.on('message', (data, isBinary) => this.onFrame(connection, data, isBinary));
    this.send(socket, {
      op: OP.hello,
      d: { heartbeat_interval: this.heartbeatIntervalMs, _trace: ['["fake-gateway",{"micros":0}]'] },
      s: null,
      t: null,
    });
  }

  private onClose(connection: LiveConnection, code: number): void {
    this.live.delete(connection);
    connection.record.closedAt = Date.now();
    connection.record.closeCode = code;
    connection.record.closedBy ??= 'client';
    const session = connection.session;
    if (!session || session.socket !== connection.socket) return;
    session.socket = undefined;
    // Discord: "closing with 1000 or 1001 invalidates the session"; any other code keeps it resumable.
    if (connection.record.closedBy === 'client' && (code === 1000 || code === 1001)) this.forget(session);
  }

  private onFrame(connection: LiveConnection, data: RawData, isBinary: boolean): void {
    const socket = connection.socket;
    if (isBinary) {
      socket.close(4002, 'binary frames are not JSON');
      return;
    }
    let frame: { op?: unknown; d?: unknown };
    try {
      frame = JSON.parse(text(data)) as { op?: unknown; d?: unknown };
    } catch {
      socket.close(4002, 'Error while decoding payload.');
      return;
    }
    const op = typeof frame.op === 'number' ? frame.op : -1;
    this.received.push({ connection: connection.record.index, op, d: frame.d, at: Date.now() });
    switch (op) {
      case OP.heartbeat:
        if (this.ackHeartbeats) this.send(socket, { op: OP.heartbeatAck, d: null, s: null, t: null });
        return;
      case OP.identify:
        this.onIdentify(connection, frame.d as IdentifyData);
        return;
      case OP.resume:
        this.onResume(connection, frame.d as ResumeData);
        return;
      case OP.presenceUpdate:
      case OP.voiceStateUpdate:
      case OP.requestGuildMembers:
        if (!connection.session) socket.close(4003, 'Not authenticated.');
        return;
      default:
        socket.close(4001, 'Unknown opcode.');
    }
  }

  private onIdentify(connection: LiveConnection, d: IdentifyData): void {
    const socket = connection.socket;
    if (connection.session) {
      socket.close(4005, 'Already authenticated.');
      return;
    }
    if (d?.token !== this.options.token) {
      socket.close(4004, 'Authentication failed.');
      return;
    }
    if (d.compress === true) {
      this.protocolErrors.push(
        'Identify asked for payload compression (compress: true); the fake sends JSON text only',
      );
      socket.close(4012, 'fake gateway: no compression');
      return;
    }
    const intents = Number(d.intents ?? 0);
    const privileged = this.options.privilegedIntents ?? {};
    const disallowed =
      (intents & INTENT.messageContent && privileged.messageContent === false) ||
      (intents & INTENT.guildMembers && privileged.guildMembers === false) ||
      (intents & INTENT.guildPresences && privileged.guildPresences === false);
    if (disallowed) {
      socket.close(4014, 'Disallowed intent(s).');
      return;
    }
    const shard: [number, number] = Array.isArray(d.shard) ? [Number(d.shard[0]), Number(d.shard[1])] : [0, 1];
    if (!(shard[1] >= 1 && shard[0] >= 0 && shard[0] < shard[1])) {
      socket.close(4010, 'Invalid shard.');
      return;
    }
    const session: GatewaySession = {
      id: randomBytes(16).toString('hex'),
      seq: 0,
      intents,
      shard,
      buffer: [],
      socket,
      invalid: false,
    };
    this.sessions.set(session.id, session);
    connection.session = session;
    connection.record.started = 'identify';
    connection.record.sessionId = session.id;

    const guild = this.options.guild;
    this.dispatchTo(session, 'READY', {
      v: 10,
      user: { ...userObject(guild.botUser), verified: true, mfa_enabled: false, email: null },
      guilds: this.guildIds().map((id) => ({ id, unavailable: true })),
      session_id: session.id,
      session_type: 'normal',
      resume_gateway_url: this.resumeUrl,
      shard,
      // GATEWAY_MESSAGE_CONTENT_LIMITED (1 << 19): the flag of an app in under 100 servers with the intent on.
      application: { id: DISCORD_IDS.applicationId, flags: privileged.messageContent === false ? 0 : 1 << 19 },
      private_channels: [],
      presences: [],
      relationships: [],
      guild_join_requests: [],
      user_settings: {},
      geo_ordered_rtc_regions: [],
      _trace: ['["fake-gateway",{"micros":0}]'],
    });
    for (const id of this.guildIds()) this.dispatchTo(session, 'GUILD_CREATE', guild.guildCreatePayload(id));
  }

  /** The servers READY lists: the fake guild unless the bot is not in it, then the others. */
  private guildIds(): string[] {
    const inGuild = this.options.inGuild ?? true;
    return this.options.guild.guildIds.filter((id) => inGuild || id !== this.options.guild.id);
  }

  private onResume(connection: LiveConnection, d: ResumeData): void {
    const socket = connection.socket;
    if (d?.token !== this.options.token) {
      socket.close(4004, 'Authentication failed.');
      return;
    }
    const session = typeof d.session_id === 'string' ? this.sessions.get(d.session_id) : undefined;
    if (!session || session.invalid) {
      // Discord's answer to a Resume it cannot honour: op 9 with d=false, then the client identifies.
      this.send(socket, { op: OP.invalidSession, d: false, s: null, t: null });
      return;
    }
    const seq = Number(d.seq ?? 0);
    if (seq > session.seq) {
      socket.close(4007, 'Invalid seq.');
      return;
    }
    if (session.socket && session.socket !== socket) session.socket.terminate();
    connection.session = session;
    connection.record.started ??= 'resume';
    connection.record.sessionId = session.id;
    for (const frame of session.buffer.filter((f) => (f.s ?? 0) > seq)) this.send(socket, frame);
    session.socket = socket;
    this.dispatchTo(session, 'RESUMED', { _trace: ['["fake-gateway",{"micros":0}]'] });
  }

  private forget(session: GatewaySession): void {
    session.invalid = true;
    session.buffer = [];
    this.sessions.delete(session.id);
  }

  private send(socket: WebSocket, frame: GatewayFrame): void {
    const connection = [...this.live].find((c) => c.socket === socket);
    this.sent.push({ ...frame, connection: connection?.record.index ?? -1, at: Date.now() });
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  }
}

interface IdentifyData {
  token?: unknown;
  intents?: unknown;
  shard?: unknown[];
  compress?: unknown;
  properties?: unknown;
}

interface ResumeData {
  token?: unknown;
  session_id?: unknown;
  seq?: unknown;
}

/** Why the fake cannot serve a connection with this query, or undefined. */
function refuseQuery(query: URLSearchParams): string | undefined {
  if (query.get('v') !== '10') return `gateway version v=${query.get('v')} requested; the fake speaks v=10 only`;
  if ((query.get('encoding') ?? 'json') !== 'json')
    return `encoding=${query.get('encoding')} requested; the fake speaks json only`;
  if (query.has('compress'))
    return `compress=${query.get('compress')} requested (is zlib-sync installed?); the fake sends uncompressed JSON only`;
  return undefined;
}

const GUILD_EVENTS = new Set([
  'GUILD_CREATE',
  'GUILD_UPDATE',
  'GUILD_DELETE',
  'CHANNEL_CREATE',
  'CHANNEL_UPDATE',
  'CHANNEL_DELETE',
  'CHANNEL_PINS_UPDATE',
  'THREAD_CREATE',
  'THREAD_UPDATE',
  'THREAD_DELETE',
  'THREAD_LIST_SYNC',
  'THREAD_MEMBER_UPDATE',
  'GUILD_ROLE_CREATE',
  'GUILD_ROLE_UPDATE',
  'GUILD_ROLE_DELETE',
]);

function isGuildPayload(d: unknown): boolean {
  const payload = d as { id?: unknown; channels?: unknown } | null;
  return typeof payload?.id === 'string' && Array.isArray(payload.channels);
}

/** The intent a dispatch needs (Discord's table in "Gateway Intents"), or undefined for always-sent ones. */
function requiredIntent(t: string, d: unknown): { name: string; bit: number } | undefined {
  const inGuild = typeof (d as { guild_id?: unknown } | null)?.guild_id === 'string';
  if (GUILD_EVENTS.has(t)) return { name: 'GUILDS', bit: INTENT.guilds };
  if (t === 'THREAD_MEMBERS_UPDATE') return { name: 'GUILD_MEMBERS', bit: INTENT.guildMembers };
  if (t.startsWith('MESSAGE_REACTION_'))
    return inGuild
      ? { name: 'GUILD_MESSAGE_REACTIONS', bit: INTENT.guildMessageReactions }
      : { name: 'DIRECT_MESSAGE_REACTIONS', bit: INTENT.directMessageReactions };
  if (t.startsWith('MESSAGE_'))
    return inGuild
      ? { name: 'GUILD_MESSAGES', bit: INTENT.guildMessages }
      : { name: 'DIRECT_MESSAGES', bit: INTENT.directMessages };
  if (t === 'TYPING_START')
    return inGuild
      ? { name: 'GUILD_MESSAGE_TYPING', bit: INTENT.guildMessageTyping }
      : { name: 'DIRECT_MESSAGE_TYPING', bit: INTENT.directMessageTyping };
  return undefined;
}

function text(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
