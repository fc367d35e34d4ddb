// The base of the fake model servers: a real HTTP server on 127.0.0.1 (ephemeral port)
// that plays one scripted reply per request and records what it received, including
// whether the client hung up before the reply ended (how a test proves that an abort
// closed the connection). The OpenAI and Anthropic fakes build their wire formats on top.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One server-sent event: `event:` line (optional) and a JSON `data:` payload (or raw text). */
export interface SseEvent {
  event?: string;
  data: unknown;
}

export type FakeReply =
  /** Stream these events; `delayMs` between events. */
  | { kind: 'sse'; events: SseEvent[]; delayMs?: number; headers?: Record<string, string> }
  /** Stream these events, but after the first `holdAfter` wait for `until` (a test acts while an answer is visibly mid-stream). */
  | { kind: 'sse_held'; events: SseEvent[]; holdAfter: number; until: Promise<void> }
  /** Send headers and these events, then go silent with the connection open. */
  | { kind: 'sse_then_stall'; events: SseEvent[]; headers?: Record<string, string> }
  /** Send headers and these events, then destroy the socket mid-stream. */
  | { kind: 'sse_then_drop'; events: SseEvent[] }
  /** Never answer at all (not even headers). */
  | { kind: 'no_answer' }
  /** A JSON answer with a status (errors: 400, 401, 404, 429, 500…). */
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body. */
  body: unknown;
  /** True once the client closed the connection before the reply finished. */
  clientClosed: boolean;
}

export type ReplyScript = FakeReply | ((request: RecordedRequest) => FakeReply);

export class HttpFake {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: ReplyScript[] = [];
  private server: Server | undefined;
  private readonly openResponses = new Set<ServerResponse>();
  private responder: ((request: RecordedRequest) => FakeReply) | undefined;

  constructor(private readonly fallback: (request: RecordedRequest) => FakeReply) {}

  /** Queue replies, one per coming request; when the queue is empty the fallback answers. */
  reply(...replies: ReplyScript[]): this {
    this.queue.push(...replies);
    return this;
  }

  /**
   * Answer every request the queue does not cover with `responder` instead of the fallback:
   * a fake that decides from each request alone, so a client that restarts and asks again
   * gets an answer that fits what it sends, not the next line of a script.
   */
  respondWith(responder: (request: RecordedRequest) => FakeReply): this {
    this.responder = responder;
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    for (const res of this.openResponses) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Resolves once the given request's client has hung up (or rejects after `timeoutMs`). */
  async waitForClientClose(index: number, timeoutMs = 15_000): Promise<void> {
    const started = Date.now();
    while (!this.requests[index]?.clientClosed) {
      if (Date.now() - started > timeoutMs) throw new Error(`request ${index} was not closed by the client`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** A server's own validation of a request, before any script: a reply to refuse it with, or undefined. */
  protected refuse(_request: RecordedRequest): FakeReply | undefined {
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the raw text
    }
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      clientClosed: false,
    };
    this.requests.push(recorded);
    this.openResponses.add(res);
    res.on('close', () => {
      this.openResponses.delete(res);
      if (!res.writableFinished) recorded.clientClosed = true;
    });
    // A request the server refuses on sight does not use up the next scripted reply.
    const refusal = this.refuse(recorded);
    const next = refusal ? undefined : this.queue.shift();
    const reply =
      refusal ?? (typeof next === 'function' ? next(recorded) : (next ?? (this.responder ?? this.fallback)(recorded)));
    await this.play(reply, res);
  }

  private async play(reply: FakeReply, res: ServerResponse): Promise<void> {
    switch (reply.kind) {
      case 'no_answer':
        return;
      case 'json': {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(JSON.stringify(reply.body));
        return;
      }
      case 'sse_held': {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
        });
        res.flushHeaders();
        for (const [index, event] of reply.events.entries()) {
          if (index === reply.holdAfter) await reply.until;
          if (res.destroyed) return;
          res.write(formatSse(event));
        }
        res.end();
        return;
      }
      case 'sse':
      case 'sse_then_stall':
      case 'sse_then_drop': {
        const headers = 'headers' in reply ? reply.headers : undefined;
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
          ...headers,
        });
        res.flushHeaders();
        for (const event of reply.events) {
          if (res.destroyed) return;
          res.write(formatSse(event));
          if (reply.kind === 'sse' && reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
        }
        if (reply.kind === 'sse') res.end();
        else if (reply.kind === 'sse_then_drop') res.destroy();
        return;
      }
    }
  }
}

function formatSse(event: SseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  return `${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`;
}
