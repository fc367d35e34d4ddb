// The playground's HTTP side, on plain node:http bound to 127.0.0.1: the page's files, the
// live stream (SSE) and the JSON actions. Everything about who may ask is decided here,
// before a request reaches the bot:
//
// - Every /api/ route (the live stream and the actions) carries the access token
//   (access-token.ts) as `Authorization: Bearer <token>`, or gets 401 (none) / 403 (a wrong
//   one). Only a header: never a cookie, which the browser would also send to every other
//   server on 127.0.0.1 (cookies ignore the port), and never the query, which lands in
//   history and logs. The page holds the token in script state (page/access-token.js); a
//   cross-origin page cannot send the header without a preflight we never answer.
// - The page's own files (index.html, its scripts and CSS) are served without the token:
//   they are the repository's source, the same for everyone, and hold no conversation, no
//   setting and no token. All data comes over /api/.
// - The Host header must name the loopback address and our port: a DNS-rebinding site, whose
//   requests carry its own host name, is refused (403) even before the token is looked at. An
//   Origin header, when the browser sends one, must be this very origin (port included).
// - Action bodies are JSON (content-type checked), at most BODY_MAX bytes, parsed with zod.
// - Files: POST /api/uploads takes one file's raw bytes (its name URI-encoded in X-File-Name,
//   its type in Content-Type), streamed to disk up to MAX_FILE_BYTES (upload-staging.ts);
//   GET /api/files/<id> serves a file the bot posted, by its random id only, always as an
//   attachment of type application/octet-stream, so nothing it holds is ever shown as a page
//   of this origin (posted-files.ts).
// - The page may run only its own scripts (Content-Security-Policy), is never framed, and
//   sends no Referer.
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import type { AccessToken } from './access-token.js';
import type { LiveUpdates, PageSnapshot } from './live-updates.js';
import type { PostedFiles } from './posted-files.js';
import type { UploadStaging } from './upload-staging.js';
import {
  ClickBody,
  FeedbackBody,
  FeedbackReasonBody,
  FullViewBody,
  NoteActionBody,
  PostMessageBody,
  StopBody,
  ToolResultBody,
} from './request-bodies.js';

const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
const PAGE_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'render.js': 'text/javascript; charset=utf-8',
  'markdown.js': 'text/javascript; charset=utf-8',
  'markdown-blocks.js': 'text/javascript; charset=utf-8',
  'markdown-inline.js': 'text/javascript; charset=utf-8',
  'access-token.js': 'text/javascript; charset=utf-8',
  'live-stream.js': 'text/javascript; charset=utf-8',
  'composer.js': 'text/javascript; charset=utf-8',
  'file-transfer.js': 'text/javascript; charset=utf-8',
  'progress-view.js': 'text/javascript; charset=utf-8',
  'tool-result.js': 'text/javascript; charset=utf-8',
  'full-view.js': 'text/javascript; charset=utf-8',
  'private-answers.js': 'text/javascript; charset=utf-8',
  'thread-status.js': 'text/javascript; charset=utf-8',
  'feedback-buttons.js': 'text/javascript; charset=utf-8',
  'page-view.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};
const BODY_MAX = 256 * 1024;
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
  /** A card's "Full result": the whole result of its call, as the model got it. */
  toolResult(body: z.infer<typeof ToolResultBody>): Promise<ActionAnswer>;
  noteAction(body: z.infer<typeof NoteActionBody>): Promise<ActionAnswer>;
  /** 👍 / 👎 under a final answer (web-feedback.ts). */
  feedback(body: z.infer<typeof FeedbackBody>): Promise<ActionAnswer>;
  feedbackReason(body: z.infer<typeof FeedbackReasonBody>): Promise<ActionAnswer>;
}

export interface PlaygroundServerOptions {
  token: AccessToken;
  live: LiveUpdates;
  actions: PlaygroundActions;
  /** Where uploads are staged, and the files the bot posted. */
  uploads: Pick<UploadStaging, 'receive'>;
  posted: Pick<PostedFiles, 'open'>;
  /** Failures of the server itself (an action that threw). */
  onError: (error: unknown) => void;
}

export class PlaygroundServer {
  private readonly server: Server;

  constructor(private readonly options: PlaygroundServerOptions) {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        options.onError(error);
        if (!response.headersSent)
          reply(response, 500, { ok: false, message: 'The playground could not do that; see the bot log.' });
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
    if (!this.isOurHost(request.headers.host))
      return reply(response, 403, { ok: false, message: 'This playground answers only at 127.0.0.1 or localhost.' });
    if (!this.isOurOrigin(request.headers.origin))
      return reply(response, 403, { ok: false, message: 'This playground answers only its own page.' });
    const route = `${request.method ?? 'GET'} ${url.pathname}`;
    const file = route.startsWith('GET /') ? pageFile(url.pathname) : undefined;
    if (file) return this.servePage(response, file);
    if (!url.pathname.startsWith('/api/')) return reply(response, 404, { ok: false, message: `Nothing at ${route}.` });

    const given = bearerToken(request.headers.authorization);
    if (given === undefined) {
      return reply(
        response,
        401,
        {
          ok: false,
          message: 'The playground needs its access token: open the address it printed in its terminal (…/#token=…).',
        },
        { 'www-authenticate': 'Bearer realm="playground"' },
      );
    }
    if (!this.options.token.matches(given)) {
      return reply(response, 403, {
        ok: false,
        message:
          'Wrong access token (the playground makes a new one at each start): open the address it printed in its terminal.',
      });
    }
    const download = /^GET \/api\/files\/([^/]+)$/.exec(route);
    if (download) return this.serveFile(response, download[1]!);
    switch (route) {
      case 'POST /api/uploads':
        return this.upload(request, response);
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
      case 'POST /api/tool-result':
        return this.act(request, response, ToolResultBody, (body) => this.options.actions.toolResult(body));
      case 'POST /api/note-action':
        return this.act(request, response, NoteActionBody, (body) => this.options.actions.noteAction(body));
      case 'POST /api/feedback':
        return this.act(request, response, FeedbackBody, (body) => this.options.actions.feedback(body));
      case 'POST /api/feedback-reason':
        return this.act(request, response, FeedbackReasonBody, (body) => this.options.actions.feedbackReason(body));
      default:
        return reply(response, 404, { ok: false, message: `Nothing at ${route}.` });
    }
  }

  private isOurHost(host: string | undefined): boolean {
    return host === `127.0.0.1:${this.port}` || host === `localhost:${this.port}`;
  }

  /** No Origin (a navigation, a same-origin GET) or exactly ours: another port is another origin. */
  private isOurOrigin(origin: string | undefined): boolean {
    return (
      origin === undefined || origin === `http://127.0.0.1:${this.port}` || origin === `http://localhost:${this.port}`
    );
  }

  private async servePage(response: ServerResponse, file: string): Promise<void> {
    const body = await readFile(`${PAGE_DIR}${file}`);
    response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': PAGE_FILES[file] ?? 'application/octet-stream' });
    response.end(body);
  }

  private async upload(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let name: string;
    try {
      name = decodeURIComponent(request.headers['x-file-name']?.toString() ?? '');
    } catch {
      return reply(response, 400, { ok: false, message: 'X-File-Name must be the file name, URI-encoded.' });
    }
    const type = /^[\w.+-]+\/[\w.+-]+/.exec(request.headers['content-type'] ?? '')?.[0]?.toLowerCase();
    const length =
      request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length']);
    const result = await this.options.uploads.receive(request, {
      name: name || 'file',
      ...(type ? { mimeType: type } : {}),
      ...(Number.isFinite(length) ? { length: length! } : {}),
    });
    // A refusal before the whole body came: say so and close, rather than read the rest.
    return reply(
      response,
      result.ok ? 200 : result.status,
      result,
      result.ok || request.readableEnded ? {} : { connection: 'close' },
    );
  }

  private async serveFile(response: ServerResponse, id: string): Promise<void> {
    const file = this.options.posted.open(id);
    if (!file) {
      return reply(response, 404, {
        ok: false,
        message:
          'The playground has no such file: it keeps the files the bot posted while it runs and while their thread exists. Ask the bot to attach it again.',
      });
    }
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'application/octet-stream',
      'content-length': String(file.size),
      'content-disposition': attachmentDisposition(file.name),
    });
    try {
      await pipeline(file.body, response);
    } catch (error) {
      response.destroy();
      throw error;
    }
  }

  private async act<T extends z.ZodType>(
    request: IncomingMessage,
    response: ServerResponse,
    schema: T,
    work: (body: z.infer<T>) => Promise<ActionAnswer>,
  ): Promise<void> {
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      return reply(response, 415, { ok: false, message: 'Send JSON (content-type: application/json).' });
    }
    const raw = await readBody(request);
    if (raw === undefined)
      return reply(response, 413, { ok: false, message: `The request is larger than ${BODY_MAX} bytes.` });
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return reply(response, 400, { ok: false, message: 'The body is not JSON.' });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      return reply(response, 400, {
        ok: false,
        message: `Bad request: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ')}`,
      });
    const answer = await work(parsed.data);
    return reply(response, answer.ok ? 200 : answer.status, answer);
  }
}

/** The page file a GET path names, if it is one ("/" is the page). */
function pageFile(pathname: string): string | undefined {
  const name = pathname === '/' ? 'index.html' : pathname.slice(1);
  return Object.hasOwn(PAGE_FILES, name) ? name : undefined;
}

function reply(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...SECURITY_HEADERS, ...headers, 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

/**
 * `attachment` with the name twice: an ASCII stand-in for old clients, and the real one
 * (RFC 6266 / 5987). Quotes, backslashes and control characters never reach the header.
 */
function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** The token of an `Authorization: Bearer <token>` header (undefined: none, another scheme, or empty). */
function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
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
