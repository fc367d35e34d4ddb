// Discord's file source and sink for the files room (src/files/transfer.ts).
//
// Source: an attachment's URL is its own credential (signed, expiring), so it is fetched with no
// token, and only from Discord's CDN (`cdn.discordapp.com`, `media.discordapp.net`, over https)
// or the host of the configured DISCORD_API_URL (a test's fake Discord serves its CDN there): a
// URL anywhere else is refused and never requested, as is a redirect. Discord's links expire
// (after about a day): a link that answers 404 is refreshed once through the REST API
// (`POST /attachments/refresh-urls`, the bot's token) and tried again, so a message that waited
// in the queue, or across a restart, still brings its files. Errors name the file, never the
// URL (its query is a signature).
//
// Sink: attach_file's file as a message in the thread, with its comment (pinging nobody),
// through the connector's REST client (outbound.ts). A file over the thread's upload limit
// (upload-limits.ts) is refused before any upload, with its size and the limit in words.
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { DiscordAPIError } from 'discord.js';
import type { IncomingFile } from '../../src/engine/index.js';
import { formatBytes } from '../../src/files/sizes.js';
import {
  FileTransferError,
  type FileDownload,
  type FileSink,
  type FileSource,
  type OutgoingFile,
  type PostedFile,
} from '../../src/files/transfer.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import type { DiscordOutbound } from './outbound.js';
import type { UploadLimits } from './upload-limits.js';

const CDN_HOSTS: ReadonlySet<string> = new Set(['cdn.discordapp.com', 'media.discordapp.net']);
/** Discord's code for an upload over the limit ("Request entity too large", HTTP 413). */
const ENTITY_TOO_LARGE = 40005;

export interface DiscordFileSourceOptions {
  /** The configured DISCORD_API_URL, whose host is trusted too (undefined: Discord's own). */
  apiUrl: string | undefined;
  /** A fresh link for an expired one (`POST /attachments/refresh-urls`), or undefined when Discord has none. */
  refresh?: (url: string) => Promise<string | undefined>;
}

export class DiscordFileSource implements FileSource {
  private readonly apiOrigin: string | undefined;

  constructor(private readonly options: DiscordFileSourceOptions) {
    this.apiOrigin = options.apiUrl ? new URL(options.apiUrl).origin : undefined;
  }

  async open(file: IncomingFile, signal: AbortSignal): Promise<FileDownload> {
    const url = this.checkedUrl(file, file.url);
    const response = await this.request(file, url, signal);
    if (response.status !== 404 || !this.options.refresh) return this.download(file, response);
    await response.body?.cancel();
    const fresh = await this.options.refresh(url.href).catch(() => undefined);
    if (!fresh || fresh === url.href) return this.download(file, new Response(null, { status: 404 }));
    return this.download(file, await this.request(file, this.checkedUrl(file, fresh), signal));
  }

  private async request(file: IncomingFile, url: URL, signal: AbortSignal): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(url, { signal, redirect: 'manual' });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new FileTransferError(`Could not download ${file.name} from Discord: ${networkReason(error)}.`);
    }
    return response;
  }

  /** The file's bytes from a response, or the refusal it means. */
  private async download(file: IncomingFile, response: Response): Promise<FileDownload> {
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new FileTransferError(
        `Discord sent ${file.name} elsewhere (HTTP ${response.status}); the bot follows no redirect for a file.`,
        false,
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      const gone = response.status === 404 || response.status === 403;
      const reason = gone ? 'the file was deleted or its link expired' : `HTTP ${response.status}`;
      throw new FileTransferError(
        `Could not download ${file.name} from Discord: ${reason}.`,
        !gone && response.status !== 400,
      );
    }
    const length = Number(response.headers.get('content-length') ?? NaN);
    const contentType = response.headers.get('content-type');
    return {
      body: response.body ?? Readable.from([]),
      ...(contentType ? { contentType } : {}),
      ...(Number.isSafeInteger(length) && length >= 0 ? { size: length } : {}),
    };
  }

  /** The URL to fetch, when it is Discord's CDN or the configured API's host; a refusal otherwise. */
  private checkedUrl(file: IncomingFile, link: string): URL {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      throw new FileTransferError(`${file.name} has no valid Discord link; it was not downloaded.`, false);
    }
    const cdn = url.protocol === 'https:' && CDN_HOSTS.has(url.hostname) && url.port === '';
    const configured = this.apiOrigin !== undefined && url.origin === this.apiOrigin;
    if ((!cdn && !configured) || url.username || url.password) {
      throw new FileTransferError(
        `${file.name} is not on Discord's file servers (${url.hostname || 'no host'}); it was not downloaded.`,
        false,
      );
    }
    return url;
  }
}

export interface DiscordFileSinkOptions {
  outbound: DiscordOutbound;
  limits: UploadLimits;
  /** The key's workspace for a DM (no server): its links use `@me`. */
  dmWorkspace: string;
}

export class DiscordFileSink implements FileSink {
  constructor(private readonly options: DiscordFileSinkOptions) {}

  maxBytes(thread: SessionKey): Promise<number> {
    return this.options.limits.forThread(thread);
  }

  async post(thread: SessionKey, file: OutgoingFile, signal: AbortSignal): Promise<PostedFile> {
    const limit = await this.maxBytes(thread);
    if (file.size > limit) throw overLimit(file.name, file.size, limit);
    const data = await readFile(file.path, { signal });
    // The file may have grown since it was checked: the bytes read are what is judged and sent.
    if (data.length > limit) throw overLimit(file.name, data.length, limit);
    let messageId: string;
    try {
      messageId = await this.options.outbound.upload(
        thread.thread,
        file.comment ?? '',
        { name: file.name, data, contentType: file.mimeType },
        signal,
      );
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof DiscordAPIError && (error.code === ENTITY_TOO_LARGE || error.status === 413)) {
        throw new FileTransferError(
          `Discord refused ${file.name} (${formatBytes(data.length)}) as larger than this server's upload limit; it was not posted.`,
          false,
        );
      }
      if (error instanceof DiscordAPIError) {
        throw new FileTransferError(
          `Discord refused ${file.name}: ${error.message} (code ${String(error.code)}).`,
          error.status >= 500,
        );
      }
      throw new FileTransferError(`Could not post ${file.name} to Discord: ${networkReason(error)}.`);
    }
    const guild = thread.workspace === this.options.dmWorkspace ? '@me' : thread.workspace;
    return { link: `https://discord.com/channels/${guild}/${thread.thread}/${messageId}` };
  }
}

function overLimit(name: string, size: number, limit: number): FileTransferError {
  return new FileTransferError(
    `${name} is ${formatBytes(size)}, over this Discord server's upload limit of ${formatBytes(limit)}; it was not posted.`,
    false,
  );
}

/** Why a request failed, in a few words and without its URL. */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message.replace(/https?:\/\/\S+/g, '<url>');
  return error instanceof Error ? error.message.replace(/https?:\/\/\S+/g, '<url>') : 'the connection failed';
}
