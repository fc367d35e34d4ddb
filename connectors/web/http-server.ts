// The playground's HTTP side, on plain node:http bound to 127.0.0.1: the page's files, the
// live stream (SSE) and four JSON actions. Everything about who may ask is decided here,
// before a request reaches the bot:
//
// - Every request carries the access token (access-token.ts), or gets 401 (none) / 403 (a
//   wrong one). The page and the live stream carry it in the query (EventSource cannot set
//   headers); the actions in an `x-playground-token` header, which a cross-origin page cannot
//   send without a preflight we never answer; the page's own CSS and JS in an HttpOnly,
//   SameSite=Strict cookie set when the page was opened with the token (so the files can
//   import each other without each URL repeating it). The cookie is never enough for the
//   stream or an action: a cookie is what a cross-site request would bring along.
// - The Host header must name the loopback address and our port: a DNS-rebinding site, whose
//   requests carry its own host name, is refused (403) even before the token is looked at.
// - Action bodies are JSON (content-type checked), at most BODY_MAX bytes, parsed with zod.
// - The page may run only its own scripts (Content-Security-Policy), is never framed, and
//   sends no Referer (the URL holds the token).
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import type { AccessToken } from './access-token.js';
import type { LiveUpdates, PageSnapshot } from './live-updates.js';
import { ClickBody, FullViewBody, NoteActionBody, PostMessageBody, StopBody } from './request-bodies.js';

const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
const PAGE_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'render.js': 'text/javascript; charset=utf-8',
  'markdown.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};
const BODY_MAX = 256 * 1024;
const COOKIE = 'playground_token';
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** An action's answer: sent as JSON with `status` (200 unless said). */
export type ActionAnswer = { ok: true; [field: string]: unknown } | { ok: false; status: number; message: string };

/** What the server calls on the bot's side (web-connector.ts). */
export interface PlaygroundActions {
  snapshot(): PageSnapshot;
  postMessage(body: z.infer<typeof PostMessageBody>): Promise<ActionAnswer>;
  stop(body: z.infer<typeof StopBody>): Promise<ActionAnswer>;
  click(body: z.infer<typeof ClickBody>): Promise<ActionAnswer>;
  /** Show all: the expanded view of a card's call, with the proof its buttons send back. */
  fullView(body: z.infer<typeof FullViewBody>): Promise<ActionAnswer>;
  noteAction(body: z.infer<typeof NoteActionBody>): Promise<ActionAnswer>;
}

export interface PlaygroundServerOptions {
  token: AccessToken;
  live: LiveUpdates;
  actions: PlaygroundActions;
  /** Failures of the server itself (an action that threw). */
  onError: (error: unknown) => void;
}

export class PlaygroundServer {
  private readonly server: Server;

  constructor(private readonly options: PlaygroundServerOptions) {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        options.onError(error);
        if (!response.headersSent) reply(response, 500, { ok: false, message: 'The playground could not do that; see the bot log.' });
        else response.end();
      });
    });
  }

  /** Listen on 127.0.0.1 only (port 0: any free port). */
  async listen(port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return this.port;
  }

  /** Listen on `preferred` if it is free, else on any free port. */
  async listenPreferring(preferred: number): Promise<number> {
    try {
      return await this.listen(preferred);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error;
      return this.listen(0);
    }
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (!this.isOurHost(request.headers.host)) return reply(response, 403, { ok: false, message: 'This playground answers only at 127.0.0.1 or localhost.' });
    const route = `${request.method ?? 'GET'} ${url.pathname}`;
    const file = route.startsWith('GET /') ? pageFile(url.pathname) : undefined;
    const isPage = file === 'index.html';
    // Which ways of carrying the token count for this request (see the header).
    const given =
      url.pathname.startsWith('/api/')
        ? (request.headers['x-playground-token'] as string | undefined) ?? (route === 'GET /api/events' ? (url.searchParams.get('token') ?? undefined) : undefined)
        : (url.searchParams.get('token') ?? (isPage ? undefined : cookieOf(request, COOKIE)));
    if (given === undefined || given === '') {
      return reply(response, 401, { ok: false, message: 'The playground needs its access token: open the URL it printed when it started (…/?token=…).' });
    }
    if (!this.options.token.matches(given)) return reply(response, 403, { ok: false, message: 'Wrong access token: open the URL the playground printed when it started.' });

    if (file) return this.servePage(response, file);
    switch (route) {
      case 'GET /api/events':
        return this.options.live.open(response, this.options.actions.snapshot());
      case 'POST /api/messages':
        return this.act(request, response, PostMessageBody, (body) => this.options.actions.postMessage(body));
      case 'POST /api/stop':
        return this.act(request, response, StopBody, (body) => this.options.actions.stop(body));
      case 'POST /api/click':
        return this.act(request, response, ClickBody, (body) => this.options.actions.click(body));
      case 'POST /api/full-view':
        return this.act(request, response, FullViewBody, (body) => this.options.actions.fullView(body));
      case 'POST /api/note-action':
        return this.act(request, response, NoteActionBody, (body) => this.options.actions.noteAction(body));
      default:
        return reply(response, 404, { ok: false, message: `Nothing at ${route}.` });
    }
  }

  private isOurHost(host: string | undefined): boolean {
    return host === `127.0.0.1:${this.port}` || host === `localhost:${this.port}`;
  }

  private async servePage(response: ServerResponse, file: string): Promise<void> {
    const body = await readFile(`${PAGE_DIR}${file}`);
    const headers: Record<string, string> = { ...SECURITY_HEADERS, 'content-type': PAGE_FILES[file] ?? 'application/octet-stream' };
    // The page's own files come with the cookie (see the header); the token is URL-safe base64.
    if (file === 'index.html') headers['set-cookie'] = `${COOKIE}=${this.options.token.value}; HttpOnly; SameSite=Strict; Path=/`;
    response.writeHead(200, headers);
    response.end(body);
  }

  private async act<T extends z.ZodType>(request: IncomingMessage, response: ServerResponse, schema: T, work: (body: z.infer<T>) => Promise<ActionAnswer>): Promise<void> {
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      return reply(response, 415, { ok: false, message: 'Send JSON (content-type: application/json).' });
    }
    const raw = await readBody(request);
    if (raw === undefined) return reply(response, 413, { ok: false, message: `The request is larger than ${BODY_MAX} bytes.` });
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return reply(response, 400, { ok: false, message: 'The body is not JSON.' });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) return reply(response, 400, { ok: false, message: `Bad request: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ')}` });
    const answer = await work(parsed.data);
    return reply(response, answer.ok ? 200 : answer.status, answer);
  }
}

/** The page file a GET path names, if it is one ("/" is the page). */
function pageFile(pathname: string): string | undefined {
  const name = pathname === '/' ? 'index.html' : pathname.slice(1);
  return Object.hasOwn(PAGE_FILES, name) ? name : undefined;
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

function cookieOf(request: IncomingMessage, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = pair.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The body as text, or undefined when it is larger than BODY_MAX (the rest is not read). */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > BODY_MAX) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
