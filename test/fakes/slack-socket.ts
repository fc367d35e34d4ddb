// FakeSlackSocket: Slack's Socket Mode side (a WebSocket of envelopes, each acknowledged) on top of FakeSlack.
// It hangs a `ws` WebSocketServer (noServer) off FakeSlack's HTTP server for `/socket`, makes
// `apps.connections.open` answer `ws://127.0.0.1:P/socket?ticket=<n>`, greets every connection
// with `hello`, and delivers envelopes (`events_api`, `interactive`, `slash_commands`) to the
// newest open connection, resolving with the client's ack (`{envelope_id, payload}`).
// `disconnect()` plays Slack's `refresh_requested`: the client closes and (after its 5 s
// reconnect delay) calls `apps.connections.open` again.
//
// Order at teardown: stop the bot (its client closes the socket), then `close()` this fake,
// then `FakeSlack.stop()` (an upgraded socket still counts as a connection of the HTTP server,
// so `server.close()` would wait for it otherwise).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { FakeSlack } from './slack-server.js';
import { SLACK_IDS, type EventCallbackBody, type SlashCommandFields } from './slack-payloads.js';

export type EnvelopeType = 'events_api' | 'interactive' | 'slash_commands';

/** What Slack sends down the socket for one event, interaction or command. */
export interface Envelope {
  envelope_id: string;
  type: EnvelopeType;
  payload: unknown;
  accepts_response_payload: boolean;
  retry_attempt: number;
  retry_reason: string;
}

/** What the client sends back: `payload` is `{}` for a bare `ack()`, or what `ack(x)` was given. */
export interface SocketAck {
  envelope_id: string;
  payload?: unknown;
}

export interface DeliverOptions {
  /** How long to wait for the ack (default 15 s, generous for a busy machine; Slack itself waits 3 s, then retries). */
  timeoutMs?: number;
  /** To play a Slack retry of an undelivered envelope. */
  retryAttempt?: number;
  retryReason?: string;
  /** Default: false for events and block_actions, true for slash commands and view submissions. */
  acceptsResponsePayload?: boolean;
}

const SOCKET_PATH = '/socket';

interface PendingAck {
  socket: WebSocket;
  type: EnvelopeType;
  resolve: (ack: SocketAck) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class FakeSlackSocket {
  /** Every envelope sent, in order. */
  readonly envelopes: Envelope[] = [];
  /** Every ack received, in order. */
  readonly acks: SocketAck[] = [];
  /** The request URL (`/socket?ticket=<n>`) of every accepted connection, in order. */
  readonly accepted: string[] = [];
  /**
   * Connections the app holds elsewhere (other instances, another fake): Slack's `hello`
   * counts every open connection of the app in `num_connections`, so a new connection's hello
   * says this plus the ones open here.
   */
  otherConnections = 0;
  /** The `num_connections` of every `hello` sent, in order. */
  readonly helloCounts: number[] = [];

  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets: WebSocket[] = [];
  private readonly pending = new Map<string, PendingAck>();
  private readonly connectionWaiters = new Set<() => void>();
  private tickets = 0;
  private closed = false;

  /** Attaches to a started FakeSlack: from now on `apps.connections.open` hands out this socket. */
  constructor(private readonly fake: FakeSlack) {
    fake.httpServer.on('upgrade', this.onUpgrade);
    fake.setSocketUrl(() => `ws://127.0.0.1:${fake.port}${SOCKET_PATH}?ticket=${++this.tickets}`);
  }

  /** Open connections now. */
  get connections(): number {
    return this.sockets.length;
  }

  /** Resolves once `count` connections in all (since attach) have been greeted with `hello`. */
  async waitForConnection(count = 1, timeoutMs = 15_000): Promise<void> {
    if (this.accepted.length >= count) return;
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (this.accepted.length < count) return;
        clearTimeout(timer);
        this.connectionWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.connectionWaiters.delete(check);
        reject(
          new Error(`no Socket Mode connection #${count} within ${timeoutMs} ms (${this.accepted.length} so far)`),
        );
      }, timeoutMs);
      this.connectionWaiters.add(check);
    });
  }

  /** Resolves once no connection is open (e.g. after the bot stopped). */
  async waitForNoConnections(timeoutMs = 15_000): Promise<void> {
    const started = Date.now();
    while (this.sockets.length > 0) {
      if (Date.now() - started > timeoutMs)
        throw new Error(`${this.sockets.length} Socket Mode connection(s) still open after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** An Events API body (`eventCallback(...)`, as in HTTP mode) in an `events_api` envelope. */
  deliverEvent(body: EventCallbackBody<{ type: string }>, options: DeliverOptions = {}): Promise<SocketAck> {
    return this.deliver('events_api', body, options.acceptsResponsePayload ?? false, options);
  }

  /** An interactivity payload (`blockActions(...)`, a view submission, …) in an `interactive` envelope. */
  deliverInteractive(payload: { type: string }, options: DeliverOptions = {}): Promise<SocketAck> {
    const accepts = payload.type === 'view_submission' || payload.type === 'block_suggestion';
    return this.deliver('interactive', payload, options.acceptsResponsePayload ?? accepts, options);
  }

  /** Slash-command fields (`slashCommand(...)`, sent as JSON here) in a `slash_commands` envelope. */
  deliverSlashCommand(
    fields: SlashCommandFields | Record<string, string>,
    options: DeliverOptions = {},
  ): Promise<SocketAck> {
    return this.deliver('slash_commands', fields, options.acceptsResponsePayload ?? true, options);
  }

  /**
   * Send `{"type":"disconnect","reason":…}` to every open connection, as Slack does before it
   * recycles one. Resolves once the client has closed them.
   */
  async disconnect(reason = 'refresh_requested', timeoutMs = 15_000): Promise<void> {
    const targets = [...this.sockets];
    for (const socket of targets)
      socket.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'fake' } }));
    const started = Date.now();
    while (targets.some((socket) => this.sockets.includes(socket))) {
      if (Date.now() - started > timeoutMs)
        throw new Error(`the client did not close after disconnect (${reason}) within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Terminate every socket, fail pending acks, detach from FakeSlack. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fake.setSocketUrl(undefined);
    this.fake.httpServer.off('upgrade', this.onUpgrade);
    for (const socket of this.sockets) socket.terminate();
    this.failPending(() => true, 'FakeSlackSocket closed');
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private async deliver(
    type: EnvelopeType,
    payload: unknown,
    accepts: boolean,
    options: DeliverOptions,
  ): Promise<SocketAck> {
    const socket = this.sockets.at(-1);
    if (!socket) throw new Error(`no open Socket Mode connection to deliver ${type} on`);
    const envelope: Envelope = {
      envelope_id: randomUUID(),
      type,
      payload,
      accepts_response_payload: accepts,
      retry_attempt: options.retryAttempt ?? 0,
      retry_reason: options.retryReason ?? '',
    };
    const timeoutMs = options.timeoutMs ?? 15_000;
    const acked = new Promise<SocketAck>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(envelope.envelope_id);
        reject(new Error(`no ack for ${type} envelope ${envelope.envelope_id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(envelope.envelope_id, { socket, type, resolve, reject, timer });
    });
    this.envelopes.push(envelope);
    socket.send(JSON.stringify(envelope));
    return acked;
  }

  private readonly onUpgrade = (req: IncomingMessage, stream: Duplex, head: Buffer): void => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (this.closed || path !== SOCKET_PATH) {
      stream.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, stream, head, (socket) => this.onConnection(socket, req.url ?? SOCKET_PATH));
  };

  private onConnection(socket: WebSocket, url: string): void {
    this.sockets.push(socket);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(text(data));
    });
    socket.on('close', () => {
      const index = this.sockets.indexOf(socket);
      if (index >= 0) this.sockets.splice(index, 1);
      this.failPending((pending) => pending.socket === socket, 'the Socket Mode connection closed before the ack');
    });
    socket.on('error', () => undefined); // a reset by the client is not the fake's failure
    const numConnections = this.otherConnections + this.sockets.length;
    this.helloCounts.push(numConnections);
    socket.send(
      JSON.stringify({
        type: 'hello',
        num_connections: numConnections,
        debug_info: { host: 'fake', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: SLACK_IDS.appId },
      }),
    );
    this.accepted.push(url);
    for (const check of [...this.connectionWaiters]) check();
  }

  private onMessage(raw: string): void {
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    const id = (message as { envelope_id?: unknown } | null)?.envelope_id;
    if (typeof id !== 'string') return;
    const ack = message as SocketAck;
    this.acks.push(ack);
    const pending = this.pending.get(id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending.delete(id);
    pending.resolve(ack);
  }

  private failPending(which: (pending: PendingAck) => boolean, why: string): void {
    for (const [id, pending] of this.pending) {
      if (!which(pending)) continue;
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(new Error(`${why} (${pending.type} envelope ${id})`));
    }
  }
}

function text(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
