// A file host on 127.0.0.1 for the files room's tests, and a FileSource that fetches from it
// over HTTP as a platform's source does: files a test registers, a sign-in page for a
// request without the token, failures on demand. Counts every request, so a test can say
// that a file was never downloaded.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { IncomingFile } from '../../src/engine/index.js';
import { FileTransferError, type FileDownload, type FileSource } from '../../src/files/index.js';

interface Hosted {
  bytes: Buffer;
  type: string;
  /** Answer 500 this many times first. */
  failures?: number;
  /** Answer Slack's sign-in page (HTML, 200) instead. */
  signIn?: boolean;
  /** Send the headers and the first bytes, then nothing more (until the host stops). */
  stall?: boolean;
}

export const TOKEN = 'xoxb-file-host-token';

export class FileHost {
  private server: Server | undefined;
  private readonly files = new Map<string, Hosted>();
  /** Every path asked for, in order. */
  readonly requests: string[] = [];
  private readonly stalled: import('node:http').ServerResponse[] = [];
  base = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      this.requests.push(path);
      const file = this.files.get(path);
      if (!file) {
        res.writeHead(404).end('not found');
        return;
      }
      if (file.signIn || req.headers.authorization !== `Bearer ${TOKEN}`) {
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end('<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to your workspace</body></html>');
        return;
      }
      if (file.failures && file.failures > 0) {
        file.failures--;
        res.writeHead(500).end('try again');
        return;
      }
      res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.bytes.length) });
      if (file.stall) {
        res.write(file.bytes.subarray(0, Math.ceil(file.bytes.length / 2)));
        this.stalled.push(res);
        return;
      }
      res.end(file.bytes);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Host a file; returns what a connector would put on the message for it. */
  add(name: string, bytes: Buffer, type: string, options: Omit<Hosted, 'bytes' | 'type'> = {}): IncomingFile {
    const path = `/files/${this.files.size + 1}/${encodeURIComponent(name)}`;
    this.files.set(path, { bytes, type, ...options });
    return {
      platform: 'test',
      id: `F${this.files.size}`,
      name,
      url: `${this.base}${path}`,
      mimeType: type,
      size: bytes.length,
    };
  }

  downloads(file: IncomingFile): number {
    const path = new URL(file.url).pathname;
    return this.requests.filter((request) => request === path).length;
  }

  /** A source that fetches with the token (or without: `token: undefined`), as a platform's does. */
  source(token: string | undefined = TOKEN): FileSource {
    return {
      open: async (file, signal): Promise<FileDownload> => {
        const response = await fetch(file.url, { signal, headers: token ? { authorization: `Bearer ${token}` } : {} });
        if (!response.ok || !response.body)
          throw new FileTransferError(`the download failed (HTTP ${response.status})`, response.status >= 500);
        const size = Number(response.headers.get('content-length'));
        return {
          body: Readable.fromWeb(response.body),
          contentType: response.headers.get('content-type') ?? undefined,
          ...(size ? { size } : {}),
        };
      },
    };
  }

  async stop(): Promise<void> {
    for (const response of this.stalled) response.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A 1x1 PNG. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
