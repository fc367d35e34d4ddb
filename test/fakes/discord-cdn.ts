// FakeDiscordCdn: where the fake Discord keeps the bytes of the files people attach, served on
// the fake's own 127.0.0.1 server as Discord's CDN serves them: GET
// `/attachments/{channel}/{attachment}/{filename}?ex=…&is=…&hm=…` (the signed query real URLs
// carry; a URL without it, with another signature, or expired, is 404 as on Discord). No token
// is needed: the URL is the credential. It records every request (so a test can prove a file
// was never fetched) and can fail the next ones (a 5xx, a hang-up, an HTML page) for retry
// tests. `expireLinks` plays the 24 hours after which Discord's links stop working, and
// `refresh` is what `POST /attachments/refresh-urls` answers: a newly signed link.
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

export type CdnFailure = { status: number; body?: string; contentType?: string; location?: string } | 'hang-up';

interface Stored {
  bytes: Buffer;
  contentType: string;
  /** The signatures (`hm`) of the links that work now. */
  signatures: Set<string>;
}

export class FakeDiscordCdn {
  /** Every request, in arrival order. */
  readonly requests: CdnRequest[] = [];
  private readonly files = new Map<string, Stored>();
  private readonly failures: CdnFailure[] = [];
  private readonly secret = randomBytes(16);
  private issued = 0;

  constructor(private readonly origin: () => string) {}

  /** Keep a file for `channelId` and return the attachment object a message carries. */
  register(channelId: string, spec: FakeAttachmentSpec): FakeAttachment {
    const id = snowflake();
    const bytes = typeof spec.data === 'string' ? Buffer.from(spec.data, 'utf8') : spec.data;
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(spec.name)}`;
    const contentType = spec.contentType ?? 'application/octet-stream';
    this.files.set(path, { bytes, contentType, signatures: new Set() });
    const signed = this.sign(path);
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

  /** The links of an attachment stop working, as Discord's do after 24 hours (a refreshed one works again). */
  expireLinks(attachmentId: string): void {
    for (const [path, stored] of this.files) if (path.split('/')[3] === attachmentId) stored.signatures.clear();
  }

  /** `POST /attachments/refresh-urls` for one URL: a newly signed link to the same file, or undefined for a file the CDN does not hold. */
  refresh(url: string): string | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return undefined;
    }
    if (!this.files.has(parsed.pathname)) return undefined;
    return `${this.origin()}${this.sign(parsed.pathname)}`;
  }

  /** A path and signed query that work until `expireLinks`; each link issued is a new one. */
  private sign(path: string): string {
    const now = Math.floor(Date.now() / 1000);
    this.issued += 1;
    const query = `ex=${(now + 86_400 + this.issued).toString(16)}&is=${now.toString(16)}`;
    const signature = this.signature(`${path}?${query}`);
    this.files.get(path)!.signatures.add(signature);
    return `${path}?${query}&hm=${signature}&`;
  }

  private signature(pathAndQuery: string): string {
    return createHmac('sha256', this.secret).update(pathAndQuery).digest('hex');
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
    const signed = stored !== undefined && hm !== null && stored.signatures.has(hm) && this.signature(unsigned) === hm;
    const request: CdnRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      signed,
      status: 0,
      headers: req.headers,
    };
    this.requests.push(request);
    const failure = this.failures.shift();
    if (failure === 'hang-up') {
      request.status = -1;
      req.socket.destroy();
      return;
    }
    if (failure) {
      request.status = failure.status;
      res.writeHead(failure.status, {
        'content-type': failure.contentType ?? 'text/plain',
        ...(failure.location ? { location: failure.location } : {}),
      });
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
