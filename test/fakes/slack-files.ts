// The files part of FakeSlack: files people share (a test registers the bytes, name and type;
// events carry the file object this returns) served at their `url_private_download` on the
// fake's own origin, and the bot's uploads through files.uploadV2's three steps
// (files.getUploadURLExternal → a POST of the bytes to the `upload_url` it returned →
// files.completeUploadExternal, which shares the file into the channel or thread).
//
// Slack's one trap, played as Slack plays it: a download without the bot token, with another
// token, or with a token whose app lacks `files:read` is answered 200 with the workspace's HTML
// sign-in page, not an error. A bot that trusts the status saves that page as the file (the
// peers' trackers have it: "a Slack login page saved instead of the file").
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { SLACK_IDS } from './slack-payloads.js';

/** A file as Slack describes it inside `app_mention` / `message` events and files.info. */
export interface SlackFileObject {
  id: string;
  created?: number;
  timestamp?: number;
  name?: string;
  title?: string;
  mimetype?: string;
  filetype?: string;
  pretty_type?: string;
  user?: string;
  user_team?: string;
  editable?: boolean;
  size?: number;
  /** `hosted` (an upload), `snippet`, `post`, `external` (a Google Drive link…), `tombstone` (deleted), `hidden_by_limit`. */
  mode?: string;
  is_external?: boolean;
  external_type?: string;
  is_public?: boolean;
  public_url_shared?: boolean;
  display_as_bot?: boolean;
  username?: string;
  url_private?: string;
  url_private_download?: string;
  permalink?: string;
  permalink_public?: string;
  /** Slack Connect: `check_file_info` means the event carries only the id; files.info has the rest. */
  file_access?: string;
  [field: string]: unknown;
}

export interface AddFileInput {
  bytes: Buffer | string;
  name: string;
  /** Default `application/octet-stream`. */
  mimetype?: string;
  /** Who shared it; default `SLACK_IDS.humanUserId`. */
  user?: string;
  /** What the event carries: the whole object (default), or only its id (`check_file_info`, Slack Connect). */
  fileAccess?: 'visible' | 'check_file_info';
  /** Default `hosted`. `tombstone` and `hidden_by_limit` are served by no URL. */
  mode?: 'hosted' | 'snippet' | 'tombstone' | 'hidden_by_limit';
  /** Announce another size than the bytes' (a file edited after the event, a lying client). */
  size?: number;
  /** Default: a fresh `F0FAKE…` id. */
  id?: string;
  title?: string;
}

/** One GET of a file URL, as the fake answered it. */
export interface FileDownloadRecord {
  fileId: string;
  /** The request carried `Authorization: Bearer <the bot token>` and the app holds `files:read`. */
  authorized: boolean;
  /** Whether a bearer token was sent at all (never the token itself). */
  hadToken: boolean;
  served: 'file' | 'sign-in page' | 'not found' | 'scripted failure';
  at: number;
}

/** One upload through files.uploadV2, step by step. */
export interface FileUploadRecord {
  fileId: string;
  filename: string;
  /** The `length` announced to files.getUploadURLExternal. */
  length: number;
  /** The bytes POSTed to the upload URL (undefined until they arrive). */
  bytes?: Buffer;
  /** How they came: `multipart` (a form part, what @slack/web-api sends) or `raw`. */
  encoding?: 'multipart' | 'raw';
  /** Set by files.completeUploadExternal. */
  completed?: { channelId: string; threadTs?: string; initialComment?: string; title?: string; messageTs: string };
}

/** The HTML page Slack serves a file URL fetched without a usable bot token (200, text/html). */
export const SIGN_IN_PAGE = `<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>Slack</title></head><body><h1>Sign in to ${SLACK_IDS.teamName}</h1><p>${SLACK_IDS.teamDomain}.slack.com</p><form action="/signin" method="post"><input type="email" name="email"><button>Sign in with email</button></form></body></html>`;

const DOWNLOAD_PATH = /^\/files-pri\/([A-Z0-9]+)-([A-Z0-9]+)\/(download\/)?([^/]+)$/;

interface HostedFile {
  object: SlackFileObject;
  bytes: Buffer;
  fileAccess: 'visible' | 'check_file_info';
}

/** What a Web API handler of these methods answers, in the fake's own shape. */
type Answer = { ok: boolean; error?: string; [field: string]: unknown };

/** How the files part reaches the rest of the fake: its origin, its token rule, and posting a message. */
export interface FilesHost {
  origin(): string;
  /** True when `token` is the bot's (FakeSlack's `botToken`, or any `xoxb-` when none is set). */
  isBotToken(token: string | undefined): boolean;
  hasScope(scope: string): boolean;
  /** Post the bot's message sharing `files` (completeUploadExternal); returns its ts. */
  postFileMessage(fields: { channel: string; threadTs?: string; text: string; files: SlackFileObject[] }): string;
  /** A scripted raw failure for a download (FakeSlack.failNext('url_private_download', …)), if one is queued. */
  takeDownloadFailure(): { status: number; body?: unknown; headers?: Record<string, string> } | undefined;
}

let fileCounter = 0;
function nextFileId(): string {
  fileCounter += 1;
  return `F0FAKE${String(fileCounter).padStart(5, '0')}`;
}

export class FakeSlackFiles {
  readonly downloads: FileDownloadRecord[] = [];
  readonly uploads: FileUploadRecord[] = [];
  private readonly files = new Map<string, HostedFile>();
  private readonly uploadsByPath = new Map<string, FileUploadRecord>();

  constructor(private readonly host: FilesHost) {}

  /** Register a shared file; returns the object an event carries (put it in `files: [...]`). */
  add(input: AddFileInput): SlackFileObject {
    const id = input.id ?? nextFileId();
    const bytes = typeof input.bytes === 'string' ? Buffer.from(input.bytes) : input.bytes;
    const now = Math.floor(Date.now() / 1000);
    const mode = input.mode ?? 'hosted';
    const base = `${this.host.origin()}/files-pri/${SLACK_IDS.teamId}-${id}`;
    const name = encodeURIComponent(input.name);
    const filetype = input.name.includes('.') ? input.name.split('.').pop()!.toLowerCase() : 'binary';
    const object: SlackFileObject =
      mode === 'tombstone'
        ? {
            id,
            mode: 'tombstone',
            name: 'file-tombstone',
            title: 'file-tombstone',
            mimetype: 'application/octet-stream',
            filetype: 'binary',
            size: 0,
            created: now,
            timestamp: now,
            user: input.user ?? SLACK_IDS.humanUserId,
          }
        : {
            id,
            created: now,
            timestamp: now,
            name: input.name,
            title: input.title ?? input.name,
            mimetype: input.mimetype ?? 'application/octet-stream',
            filetype,
            pretty_type: filetype.toUpperCase(),
            user: input.user ?? SLACK_IDS.humanUserId,
            user_team: SLACK_IDS.teamId,
            editable: false,
            size: input.size ?? bytes.length,
            mode,
            is_external: false,
            external_type: '',
            is_public: true,
            public_url_shared: false,
            display_as_bot: false,
            username: '',
            // A file hidden by the plan's limit comes without its URLs.
            ...(mode === 'hidden_by_limit'
              ? {}
              : { url_private: `${base}/${name}`, url_private_download: `${base}/download/${name}` }),
            permalink: `https://${SLACK_IDS.teamDomain}.slack.com/files/${input.user ?? SLACK_IDS.humanUserId}/${id}/${name}`,
            permalink_public: `https://slack-files.com/${SLACK_IDS.teamId}-${id}-0123456789`,
          };
    const fileAccess = input.fileAccess ?? 'visible';
    this.files.set(id, { object, bytes, fileAccess });
    return this.eventObject(id)!;
  }

  /** The file as an event carries it. */
  eventObject(id: string): SlackFileObject | undefined {
    const file = this.files.get(id);
    if (!file) return undefined;
    if (file.fileAccess === 'check_file_info')
      return {
        id,
        file_access: 'check_file_info',
        created: file.object.created,
        timestamp: file.object.timestamp,
        user: file.object.user,
      };
    return structuredClone(file.object);
  }

  /** Downloads of one file (every attempt, whatever was served). */
  downloadsOf(fileId: string): FileDownloadRecord[] {
    return this.downloads.filter((download) => download.fileId === fileId);
  }

  // ---- the file URLs -------------------------------------------------------------------

  /** True when `path` is a file URL or an upload URL of this fake (FakeSlack routes it here). */
  owns(path: string): boolean {
    return path.startsWith('/files-pri/') || path.startsWith('/upload/v1/');
  }

  handle(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse): void {
    if (path.startsWith('/upload/v1/')) return this.receiveUpload(method, path, headers, body, res);
    this.serveDownload(method, path, headers, res);
  }

  private serveDownload(method: string, path: string, headers: IncomingHttpHeaders, res: ServerResponse): void {
    const match = DOWNLOAD_PATH.exec(path);
    const file = match && match[1] === SLACK_IDS.teamId ? this.files.get(match[2]!) : undefined;
    const token = bearer(headers);
    const authorized = this.host.isBotToken(token) && this.host.hasScope('files:read');
    const record: FileDownloadRecord = {
      fileId: match?.[2] ?? '',
      authorized,
      hadToken: token !== undefined,
      served: 'not found',
      at: Date.now(),
    };
    this.downloads.push(record);
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    // Without the bot's token (or its files:read), Slack does not say 401: it serves its sign-in page.
    if (!authorized) {
      record.served = 'sign-in page';
      res
        .writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-length': Buffer.byteLength(SIGN_IN_PAGE),
        })
        .end(method === 'HEAD' ? undefined : SIGN_IN_PAGE);
      return;
    }
    const failure = this.host.takeDownloadFailure();
    if (failure) {
      record.served = 'scripted failure';
      const text =
        failure.body === undefined
          ? `<html><body>${failure.status}</body></html>`
          : typeof failure.body === 'string'
            ? failure.body
            : JSON.stringify(failure.body);
      res.writeHead(failure.status, { 'content-type': 'text/html', ...failure.headers }).end(text);
      return;
    }
    if (!file || file.object.mode === 'tombstone' || file.object.mode === 'hidden_by_limit') {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>File not found</body></html>');
      return;
    }
    record.served = 'file';
    const name = file.object.name ?? 'file';
    res.writeHead(200, {
      'content-type': file.object.mimetype ?? 'application/octet-stream',
      'content-length': file.bytes.length,
      ...(match?.[3] ? { 'content-disposition': `attachment; filename="${name.replace(/["\\\r\n]/g, '_')}"` } : {}),
    });
    res.end(method === 'HEAD' ? undefined : file.bytes);
  }

  private receiveUpload(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
    res: ServerResponse,
  ): void {
    const upload = this.uploadsByPath.get(path);
    if (method !== 'POST' || !upload) {
      res
        .writeHead(method === 'POST' ? 404 : 405, { 'content-type': 'text/plain' })
        .end(method === 'POST' ? 'upload url not found' : 'method not allowed');
      return;
    }
    void multipartFile(headers, body).then(
      (part) => {
        upload.bytes = part ?? body;
        upload.encoding = part ? 'multipart' : 'raw';
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${upload.bytes.length}`);
      },
      () => res.writeHead(400, { 'content-type': 'text/plain' }).end('bad multipart body'),
    );
  }

  // ---- the Web API methods -------------------------------------------------------------

  readonly handlers: Record<string, (args: Record<string, unknown>) => Answer> = {
    'files.getUploadURLExternal': (args) => {
      if (!this.host.hasScope('files:write'))
        return { ok: false, error: 'missing_scope', needed: 'files:write', provided: 'chat:write' };
      const filename = typeof args.filename === 'string' ? args.filename : '';
      const length = Number(args.length);
      if (!filename) return { ok: false, error: 'invalid_arguments' };
      if (!Number.isInteger(length) || length < 1) return { ok: false, error: 'invalid_arguments' };
      const fileId = nextFileId();
      const path = `/upload/v1/${fileId}-${Math.random().toString(36).slice(2, 10)}`;
      const upload: FileUploadRecord = { fileId, filename, length };
      this.uploads.push(upload);
      this.uploadsByPath.set(path, upload);
      return { ok: true, upload_url: `${this.host.origin()}${path}`, file_id: fileId };
    },

    'files.completeUploadExternal': (args) => {
      if (!this.host.hasScope('files:write'))
        return { ok: false, error: 'missing_scope', needed: 'files:write', provided: 'chat:write' };
      const entries = Array.isArray(args.files) ? (args.files as { id?: unknown; title?: unknown }[]) : undefined;
      if (!entries || entries.length === 0) return { ok: false, error: 'invalid_arguments' };
      const uploads = entries.map((entry) => this.uploads.find((upload) => upload.fileId === entry.id));
      if (uploads.some((upload) => !upload?.bytes)) return { ok: false, error: 'file_not_found' };
      const channel = typeof args.channel_id === 'string' ? args.channel_id : undefined;
      const threadTs = typeof args.thread_ts === 'string' ? args.thread_ts : undefined;
      const comment = typeof args.initial_comment === 'string' ? args.initial_comment : undefined;
      // Without a channel the file stays private to the app (Slack allows it): nothing is posted.
      if (threadTs && !channel) return { ok: false, error: 'invalid_arguments' };
      const objects = uploads.map((upload, i) => {
        const title = typeof entries[i]!.title === 'string' ? entries[i]!.title : upload!.filename;
        const object = this.add({
          id: upload!.fileId,
          bytes: upload!.bytes!,
          name: upload!.filename,
          title,
          user: SLACK_IDS.botUserId,
          mimetype: mimeOf(upload!.filename),
        });
        return { upload: upload!, title, object };
      });
      if (channel) {
        const ts = this.host.postFileMessage({
          channel,
          ...(threadTs ? { threadTs } : {}),
          text: comment ?? '',
          files: objects.map((o) => o.object),
        });
        for (const { upload, title } of objects)
          upload.completed = {
            channelId: channel,
            ...(threadTs ? { threadTs } : {}),
            ...(comment !== undefined ? { initialComment: comment } : {}),
            title,
            messageTs: ts,
          };
      }
      return { ok: true, files: objects.map(({ object }) => ({ id: object.id, title: object.title })) };
    },

    'files.info': (args) => {
      if (!this.host.hasScope('files:read'))
        return { ok: false, error: 'missing_scope', needed: 'files:read', provided: 'chat:write' };
      const file = this.files.get(typeof args.file === 'string' ? args.file : '');
      if (!file) return { ok: false, error: 'file_not_found' };
      if (file.object.mode === 'tombstone') return { ok: false, error: 'file_deleted' };
      return { ok: true, file: structuredClone(file.object), comments: [], response_metadata: { next_cursor: '' } };
    },
  };
}

function bearer(headers: IncomingHttpHeaders): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
}

/** The first file part of a multipart body (what the WebClient POSTs to an upload URL), or undefined for a raw body. */
async function multipartFile(headers: IncomingHttpHeaders, body: Buffer): Promise<Buffer | undefined> {
  const type = headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) return undefined;
  const form = await new Response(body, { headers: { 'content-type': type } }).formData();
  for (const [, value] of form) {
    if (typeof value !== 'string') return Buffer.from(await value.arrayBuffer());
  }
  return undefined;
}

const MIME_BY_SUFFIX: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  csv: 'text/csv',
  txt: 'text/plain',
  md: 'text/markdown',
  json: 'application/json',
};

function mimeOf(name: string): string {
  return MIME_BY_SUFFIX[name.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';
}
