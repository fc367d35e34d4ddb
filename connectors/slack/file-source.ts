// How the bot fetches a file someone shared in Slack: a GET of its `url_private_download`
// with the bot token as `Authorization: Bearer`, streamed (never buffered here). The files
// room (src/files/intake.ts) calls it when a turn takes the message, and only then.
//
// The token is the bot's whole identity, so it goes only to Slack's file hosts (below, by exact
// name, over HTTPS on port 443) or to the configured SLACK_API_URL's own origin (a proxy, or the
// tests' fake Slack); a redirect is followed by hand, each hop checked the same way. A file URL
// elsewhere is refused without a request.
//
// Slack's trap: a file URL fetched without a token Slack accepts for files (no token, another
// app's, or an app installed without `files:read`) is answered 200 with the workspace's HTML
// sign-in page, not 401. A page where a file was expected is refused here and never saved.
// The token never appears in an error or a log line. The messages say what happened to the
// file and name no file: the files room puts each after the file's name in the thread's note.
import { Readable } from 'node:stream';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { IncomingFile } from '../../src/engine/index.js';
import { FileTransferError, type FileDownload, type FileSource } from '../../src/files/transfer.js';
import { LOOK_UP_WITH_FILES_INFO } from './inbound-files.js';

/**
 * Where Slack serves the files people share, by exact name: `files.slack.com` (url_private and
 * url_private_download, docs.slack.dev "Working with files"), `files.slack-gov.com` for GovSlack
 * (slack-gov.com), and the two other hosts Slack's own file URLs use (`files-edu.slack.com`,
 * `files-origin.slack.com`). No wildcard: `*.slack-edge.com` is Slack's CDN for public assets
 * (avatars, emoji), which never needs the bot token, and a name under a shared suffix is a
 * name someone else may come to serve. Workspace domains (`team.slack.com`) are not among them
 * either: they serve pages, not files. Only on HTTPS's own port: another port of a Slack host
 * is not the file service, and the token goes to nothing Slack does not document.
 */
const SLACK_FILE_HOSTS: readonly string[] = [
  'files.slack.com',
  'files-edu.slack.com',
  'files-origin.slack.com',
  'files.slack-gov.com',
];

/** Slack's file URLs answer directly; a few hops are room for a CDN, more is a loop. */
const MAX_REDIRECTS = 3;

const FILES_READ_HINT =
  'The Slack app needs the files:read scope: add it (manifest/slack.yaml lists it) and reinstall the app to the workspace.';

export interface SlackFileSourceOptions {
  /** The bot token (SLACK_BOT_TOKEN); without one Slack answers its sign-in page, which is refused. */
  token: string | undefined;
  /** SLACK_API_URL: its origin may serve files too (a proxy, the tests' fake). */
  apiUrl?: string | undefined;
  /** For files.info, when an event carried only a file's id (Slack Connect) or no URL. */
  client: Pick<WebClient, 'files'>;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
}

const FileInfoSchema = z.object({
  file: z.object({
    name: z.string().nullish(),
    mode: z.string().nullish(),
    is_external: z.boolean().nullish(),
    external_type: z.string().nullish(),
    url_private: z.string().nullish(),
    url_private_download: z.string().nullish(),
  }),
});

export class SlackFileSource implements FileSource {
  private readonly apiOrigin: string | undefined;

  constructor(private readonly options: SlackFileSourceOptions) {
    this.apiOrigin = options.apiUrl ? new URL(options.apiUrl).origin : undefined;
  }

  async open(file: IncomingFile, signal: AbortSignal): Promise<FileDownload> {
    const looked = file.url === LOOK_UP_WITH_FILES_INFO ? await this.lookUp(file, signal) : undefined;
    let url = this.allowed(looked?.url ?? file.url);
    for (let hop = 0; ; hop++) {
      const response = await this.get(url, signal);
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS)
          throw new FileTransferError('not fetched: Slack redirected the download too many times', false);
        url = this.allowed(new URL(response.headers.get('location')!, url).href);
        continue;
      }
      const accepted = await this.accepted(response, file);
      // A file the event named only by its id gets the name files.info gave it.
      return looked?.name ? { ...accepted, name: looked.name } : accepted;
    }
  }

  /** The URL when the token may go there; a refusal a retry cannot fix otherwise. */
  private allowed(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FileTransferError('not fetched: the address Slack gave for it is not a URL', false);
    }
    // The configured API's own origin (scheme, host and port, all three): a proxy in front of
    // Slack, or the tests' fake on 127.0.0.1. It is where the token goes for every API call
    // anyway; any other port or scheme of that host is not it.
    if (this.apiOrigin !== undefined && url.origin === this.apiOrigin) return url;
    const host = url.hostname.toLowerCase();
    if (!SLACK_FILE_HOSTS.includes(host)) {
      throw new FileTransferError(
        `not fetched: its address is not on a Slack file host (it points to ${shownHost(host)}), and the bot sends its Slack token nowhere else`,
        false,
      );
    }
    if (url.protocol !== 'https:')
      throw new FileTransferError(
        'not fetched: its address is not HTTPS, and the bot sends its Slack token over HTTPS only',
        false,
      );
    // `port` is '' for HTTPS's default (443, written or not).
    if (url.port !== '')
      throw new FileTransferError(
        `not fetched: its address names port ${url.port} of a Slack file host, and the bot sends its Slack token to port 443 only`,
        false,
      );
    return url;
  }

  private async get(url: URL, signal: AbortSignal): Promise<Response> {
    const send = this.options.fetch ?? globalThis.fetch;
    try {
      return await send(url, {
        headers: this.options.token ? { authorization: `Bearer ${this.options.token}` } : {},
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      // undici's messages name the host and the cause (ECONNRESET, a timeout), never the headers.
      throw new FileTransferError(`not fetched: could not reach Slack (${causeOf(error)})`);
    }
  }

  private async accepted(response: Response, file: IncomingFile): Promise<FileDownload> {
    const { status } = response;
    if (status !== 200) {
      await response.body?.cancel();
      if (status === 401 || status === 403)
        throw new FileTransferError(
          `not fetched: Slack refused the download (HTTP ${status}). ${FILES_READ_HINT}`,
          false,
        );
      if (status === 404 || status === 410)
        throw new FileTransferError(
          `not fetched: it is no longer on Slack (HTTP ${status}); it may have been deleted`,
          false,
        );
      throw new FileTransferError(
        `not fetched: Slack could not serve it (HTTP ${status})`,
        status === 408 || status === 429 || status >= 500,
      );
    }
    const contentType = response.headers.get('content-type') ?? undefined;
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    const size = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
    if (isSignInPage(contentType, file, size)) {
      await response.body?.cancel();
      throw new FileTransferError(
        `not saved: Slack sent its sign-in page instead of the file, so the bot's token was not accepted for files. ${FILES_READ_HINT}`,
        false,
      );
    }
    return {
      body: response.body ?? Readable.from([]),
      ...(contentType ? { contentType } : {}),
      ...(size !== undefined ? { size } : {}),
    };
  }

  /**
   * files.info for a file the event could not describe: its download URL now, or why there is
   * none (a file hidden by the workspace's plan, an external link, a deleted file).
   */
  private async lookUp(file: IncomingFile, signal: AbortSignal): Promise<{ url: string; name?: string }> {
    let answer: unknown;
    try {
      answer = await this.options.client.files.info({ file: file.id });
    } catch (error) {
      if (signal.aborted) throw error;
      const code = (error as { data?: { error?: unknown } }).data?.error;
      if (code === 'missing_scope' || code === 'not_allowed_token_type')
        throw new FileTransferError(`not fetched: Slack would not describe it (${code}). ${FILES_READ_HINT}`, false);
      if (code === 'file_not_found' || code === 'file_deleted')
        throw new FileTransferError('not fetched: it is no longer on Slack; it may have been deleted', false);
      throw new FileTransferError(
        `not fetched: could not ask Slack about it (${typeof code === 'string' ? code : causeOf(error)})`,
        typeof code !== 'string' || code === 'ratelimited' || code === 'internal_error',
      );
    }
    signal.throwIfAborted();
    const parsed = FileInfoSchema.safeParse(answer);
    if (!parsed.success)
      throw new FileTransferError('not fetched: Slack described it in a way the bot could not read', false);
    const info = parsed.data.file;
    if (info.mode === 'hidden_by_limit')
      throw new FileTransferError(
        "not fetched: it is hidden by the workspace's Slack plan (only recent files stay visible)",
        false,
      );
    if (info.is_external || info.mode === 'external') {
      throw new FileTransferError(
        `not fetched: it is a link to a file outside Slack${info.external_type ? ` (${shownHost(info.external_type)})` : ''}; share the file itself for the bot to read it`,
        false,
      );
    }
    const url = info.url_private_download || info.url_private;
    if (!url) throw new FileTransferError('not fetched: Slack gives no download address for it', false);
    return info.name ? { url, name: info.name } : { url };
  }
}

/**
 * HTML where a file was expected. A person may share an HTML file on purpose: then the page
 * is taken only when its length is the file's announced size, which Slack's sign-in page has
 * no reason to match.
 */
function isSignInPage(contentType: string | undefined, file: IncomingFile, size: number | undefined): boolean {
  if (!contentType || !/^\s*text\/html\b/i.test(contentType)) return false;
  const htmlExpected = /^text\/html\b/i.test(file.mimeType ?? '') || /\.html?$/i.test(file.name);
  if (!htmlExpected) return true;
  return file.size === undefined || size === undefined || size !== file.size;
}

/** A host (or Slack's word for a service) from outside, as a note shows it: letters, digits, dots and dashes, at most 80. */
function shownHost(host: string): string {
  return host.replace(/[^a-z0-9.\-_]/gi, '').slice(0, 80);
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
