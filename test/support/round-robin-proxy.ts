// The load balancer in front of several bot instances in the cluster tests: an HTTP server
// on a random loopback port that hands each request to the next backend in turn, exactly as
// it came (method, path, headers, the raw body bytes, so a Slack signature still verifies),
// and returns the backend's answer as it is. A backend that is down gets a 502 and the
// request is NOT tried elsewhere: Slack retries on its own, and a test of "the owner died"
// must see that failure, not a proxy that hides it. `pinNext` sends the next request to a
// chosen instance (a thread reply landing on a non-owner); `setBackend` follows an instance
// that restarted on a new port.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ForwardedRequest {
  /** Which backend got it. */
  backend: number;
  method: string;
  path: string;
  /** The backend's status, or 502 when it could not be reached. */
  status: number;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection, not to the request.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
]);

export class RoundRobinProxy {
  /** Every request, in arrival order, with where it went and how it ended. */
  readonly forwarded: ForwardedRequest[] = [];
  private turn = 0;
  private pinned: number | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly backends: string[],
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Start on 127.0.0.1 with a random port, in front of these base URLs (http://host:port[/prefix]). */
  static async start(backends: string[]): Promise<RoundRobinProxy> {
    if (backends.length === 0) throw new Error('a round-robin proxy needs at least one backend');
    const server = createServer();
    const proxy = new RoundRobinProxy(server, [...backends]);
    server.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => proxy.forward(incoming, outgoing));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next request goes to backend `index`; the rotation resumes after it where it was. */
  pinNext(index: number): void {
    this.check(index);
    this.pinned = index;
  }

  /** Point backend `index` at a new base URL (an instance restarted on another port). */
  setBackend(index: number, url: string): void {
    this.check(index);
    this.backends[index] = url;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private check(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.backends.length)
      throw new Error(`no backend ${index} (there are ${this.backends.length})`);
  }

  private choose(): number {
    if (this.pinned !== undefined) {
      const chosen = this.pinned;
      this.pinned = undefined;
      return chosen;
    }
    const chosen = this.turn % this.backends.length;
    this.turn++;
    return chosen;
  }

  private forward(incoming: IncomingMessage, outgoing: ServerResponse): void {
    const backend = this.choose();
    const record: ForwardedRequest = {
      backend,
      method: incoming.method ?? 'GET',
      path: incoming.url ?? '/',
      status: 0,
    };
    this.forwarded.push(record);
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.once('end', () => {
      const body = Buffer.concat(chunks);
      const base = new URL(this.backends[backend]!);
      const headers: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(incoming.headers))
        if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
      headers['content-length'] = String(body.length);
      // agent: false, a connection per request: a pooled keep-alive socket to an instance that
      // restarted would fail the next request with ECONNRESET, a 502 the test did not cause.
      const upstream = httpRequest(
        {
          host: base.hostname,
          port: base.port,
          agent: false,
          method: record.method,
          path: base.pathname.replace(/\/$/, '') + record.path,
          headers,
        },
        (answer) => {
          record.status = answer.statusCode ?? 0;
          const answerHeaders: OutgoingHttpHeaders = {};
          for (const [name, value] of Object.entries(answer.headers))
            if (!HOP_BY_HOP.has(name) && value !== undefined) answerHeaders[name] = value;
          outgoing.writeHead(record.status, answerHeaders);
          answer.pipe(outgoing);
        },
      );
      upstream.once('error', (error) => {
        // Unreachable (refused, reset before an answer): the load balancer's 502, no retry.
        if (outgoing.headersSent) {
          outgoing.destroy();
          return;
        }
        record.status = 502;
        outgoing.writeHead(502, { 'content-type': 'text/plain' });
        outgoing.end(`backend ${backend} unreachable: ${error.message}`);
      });
      upstream.end(body);
    });
  }
}
