// FakeDiscordCdn: where the fake Discord keeps the bytes of the files people attach, served on
// the fake's own 127.0.0.1 server as Discord's CDN serves them: GET
// `/attachments/{channel}/{attachment}/{filename}?ex=…&is=…&hm=…` (the signed query real URLs
// carry; a URL without it, or with another signature, is 404 as on Discord). No token is
// needed: the URL is the credential. It records every request (so a test can prove a file was
// never fetched) and can fail the next ones (a 5xx, a hang-up, an HTML page) for retry tests.
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { snowflake } from './discord-payloads.js';

/** A file a person attaches: its name, bytes and (optional) type. */
export interface FakeAttachmentSpec {
  name: string;
  data: Buffer | string;
  contentType?: string;
}

/** An attachment object as Discord puts it on a message. */
export interface FakeAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  proxy_url: string;
  content_type?: string;
}

export interface CdnRequest {
  method: string;
  /** The path, without the signed query. */
  path: string;
  /** Whether the signed query matched. */
  signed: boolean;
  status: number;
  headers: IncomingMessage['headers'];
}

export type CdnFailure = { status: number; body?: string; contentType?: string } | 'hang-up';

interface Stored {
  bytes: Buffer;
  contentType: string;
  signature: string;
}

export class FakeDiscordCdn {
  /** Every request, in arrival order. */
  readonly requests: CdnRequest[] = [];
  private readonly files = new Map<string, Stored>();
  private readonly failures: CdnFailure[] = [];
  private readonly secret = randomBytes(16);

  constructor(private readonly origin: () => string) {}

  /** Keep a file for `channelId` and return the attachment object a message carries. */
  register(channelId: string, spec: FakeAttachmentSpec): FakeAttachment {
    const id = snowflake();
    const bytes = typeof spec.data === 'string' ? Buffer.from(spec.data, 'utf8') : spec.data;
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(spec.name)}`;
    const expires = Math.floor(Date.now() / 1000) + 86_400;
    const query = `ex=${expires.toString(16)}&is=${Math.floor(Date.now() / 1000).toString(16)}`;
    const signature = createHmac('sha256', this.secret).update(`${path}?${query}`).digest('hex');
    const contentType = spec.contentType ?? 'application/octet-stream';
    this.files.set(path, { bytes, contentType, signature });
    const signed = `${path}?${query}&hm=${signature}&`;
    return {
      id,
      filename: spec.name,
      size: bytes.length,
      url: `${this.origin()}${signed}`,
      // Discord's media proxy is another host; here the same server answers both.
      proxy_url: `${this.origin()}${signed}`,
      ...(spec.contentType ? { content_type: spec.contentType } : {}),
    };
  }

  /** Answer the next requests with these failures, one per request, before serving any file. */
  failNext(...failures: CdnFailure[]): this {
    this.failures.push(...failures);
    return this;
  }

  /** Requests for one attachment (by its id). */
  requestsFor(attachmentId: string): CdnRequest[] {
    return this.requests.filter((r) => r.path.split('/')[3] === attachmentId);
  }

  /** Serve one request whose path starts with `/attachments/`. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const stored = this.files.get(url.pathname);
    const hm = url.searchParams.get('hm');
    const unsigned = `${url.pathname}?ex=${url.searchParams.get('ex') ?? ''}&is=${url.searchParams.get('is') ?? ''}`;
    const signed = stored !== undefined && hm === stored.signature && createHmac('sha256', this.secret).update(unsigned).digest('hex') === hm;
    const request: CdnRequest = { method: req.method ?? 'GET', path: url.pathname, signed, status: 0, headers: req.headers };
    this.requests.push(request);
    const failure = this.failures.shift();
    if (failure === 'hang-up') {
      request.status = -1;
      req.socket.destroy();
      return;
    }
    if (failure) {
      request.status = failure.status;
      res.writeHead(failure.status, { 'content-type': failure.contentType ?? 'text/plain' });
      res.end(failure.body ?? '');
      return;
    }
    if (!stored || !signed || (req.method !== 'GET' && req.method !== 'HEAD')) {
      request.status = 404;
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('This content is no longer available.');
      return;
    }
    request.status = 200;
    res.writeHead(200, { 'content-type': stored.contentType, 'content-length': String(stored.bytes.length) });
    res.end(req.method === 'HEAD' ? undefined : stored.bytes);
  }
}
