// Files a person attaches in the playground, between their upload and the turn that takes
// them: each is streamed to disk as it arrives (never held whole in memory), under a name the
// server makes (a random id: the client's name is shown, never used as a path), and handed to
// the files room through the 'web' FileSource, which reads only uploads staged here.
//
// How long a staged file stays (a sweep every SWEEP_MS, and at each upload):
// - not yet in a sent message: UNSENT_TTL_MS after its upload (the page uploads when the
//   person presses Send, so a file still unsent by then was abandoned);
// - in a message the bot took: until the files room has read it once to the end, then
//   READ_GRACE_MS more (its one retry), and at most SENT_TTL_MS if never read (a message
//   queued behind a long approval wait);
// - in a message the bot did not take (a channel message without @bot, a command, a
//   refusal): removed at once.
// The folder is private to this run (web-connector.ts): a restart forgets every staged file,
// and a message sent before it says so when its turn fetches them ("attach it again").
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { addAbortSignal, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { IncomingFile } from '../../src/engine/index.js';
import { FileTransferError, formatBytes, type FileDownload, type FileSource } from '../../src/files/index.js';

/** @internal */
export const UNSENT_TTL_MS = 10 * 60_000;
/** @internal */
export const READ_GRACE_MS = 10 * 60_000;
/** @internal */
export const SENT_TTL_MS = 24 * 60 * 60_000;
const SWEEP_MS = 60_000;
/** 16 random bytes, base64url: the upload's id, its file's name on disk, and its `web-upload:` URL. */
export const UPLOAD_ID = /^[A-Za-z0-9_-]{22}$/;
const URL_PREFIX = 'web-upload:';
/** Longer names are cut: a name is only shown and told to the model (the files room makes the safe one). */
const NAME_MAX = 255;

/** What the page is told of an upload, and what its message shows. */
export interface UploadedFile {
  id: string;
  name: string;
  mimeType?: string;
  size: number;
}

interface Staged extends UploadedFile {
  path: string;
  uploadedAt: number;
  sentAt?: number;
  readAt?: number;
}

/** An upload's outcome, as the HTTP answer carries it. */
export type UploadResult = { ok: true; upload: UploadedFile } | { ok: false; status: number; message: string };

export interface UploadStagingOptions {
  /** The private folder staged files are written in (made if missing). */
  dir: string;
  /** MAX_FILE_BYTES: the largest one upload. */
  maxFileBytes: number;
  /** What all staged files together may hold (MAX_CONVERSATION_FILE_BYTES): a page cannot fill the disk. */
  maxStagedBytes: number;
  now?: () => number;
}

export class UploadStaging {
  private readonly staged = new Map<string, Staged>();
  /** Bytes on disk and bytes of uploads still arriving. */
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly options: UploadStagingOptions) {
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  /**
   * Stream one upload to disk. `name` and `mimeType` are the client's (untrusted, kept for
   * display); the size is what actually arrived. Over the cap, the upload is cut off where
   * it crosses it and nothing of it is kept.
   */
  async receive(
    body: IncomingMessage,
    claimed: { name: string; mimeType?: string; length?: number },
  ): Promise<UploadResult> {
    const { maxFileBytes, maxStagedBytes } = this.options;
    const tooLarge = (size?: number): UploadResult => ({
      ok: false,
      status: 413,
      message: `${displayName(claimed.name)} is ${size === undefined ? 'larger than' : `${formatBytes(size)}, over`} ${formatBytes(maxFileBytes)}, the most the playground takes in one file (MAX_FILE_BYTES).`,
    });
    if (claimed.length !== undefined && claimed.length > maxFileBytes) return tooLarge(claimed.length);
    await this.sweep();
    const full = (): UploadResult => ({
      ok: false,
      status: 507,
      message: `The playground already holds ${formatBytes(this.bytes)} of files the bot has not taken yet (at most ${formatBytes(maxStagedBytes)}, MAX_CONVERSATION_FILE_BYTES); send what you attached, or try again in a few minutes.`,
    });
    if (this.bytes + (claimed.length ?? 0) > maxStagedBytes) return full();

    const id = randomBytes(16).toString('base64url');
    const path = join(this.options.dir, id);
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    let size = 0;
    let refusal: UploadResult | undefined;
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        size += chunk.length;
        this.bytes += chunk.length;
        if (size > maxFileBytes) refusal = tooLarge();
        else if (this.bytes > maxStagedBytes) refusal = full();
        done(refusal ? new Error('upload refused') : null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    } catch (error) {
      this.bytes -= size;
      await rm(path, { force: true });
      if (refusal) return refusal;
      throw error;
    }
    const upload: UploadedFile = {
      id,
      name: displayName(claimed.name),
      size,
      ...(claimed.mimeType ? { mimeType: claimed.mimeType } : {}),
    };
    this.staged.set(id, { ...upload, path, uploadedAt: this.now() });
    return { ok: true, upload };
  }

  /**
   * The staged uploads a message names, as the message will carry them; a missing one (never
   * staged, swept, or already in another message) is an error naming it.
   */
  take(
    ids: readonly string[],
  ): { ok: true; files: UploadedFile[]; incoming: IncomingFile[] } | { ok: false; message: string } {
    const found: Staged[] = [];
    for (const id of new Set(ids)) {
      const staged = this.staged.get(id);
      if (!staged || staged.sentAt !== undefined) {
        return {
          ok: false,
          message: `An attached file is no longer waiting to be sent (unsent files are kept for ${UNSENT_TTL_MS / 60_000} minutes, and not across a restart); attach it again.`,
        };
      }
      found.push(staged);
    }
    const at = this.now();
    for (const staged of found) staged.sentAt = at;
    return {
      ok: true,
      files: found.map(({ id, name, mimeType, size }) => ({ id, name, size, ...(mimeType ? { mimeType } : {}) })),
      incoming: found.map((staged) => ({
        platform: 'web',
        id: staged.id,
        name: staged.name,
        url: `${URL_PREFIX}${staged.id}`,
        size: staged.size,
        ...(staged.mimeType ? { mimeType: staged.mimeType } : {}),
      })),
    };
  }

  /** The message that carried them was not for the bot (or was refused): nothing will fetch them. */
  async discard(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.remove(id);
  }

  /** The 'web' FileSource: reads a staged upload, and nothing else. */
  readonly source: FileSource = {
    open: async (file: IncomingFile, signal: AbortSignal): Promise<FileDownload> => {
      const id = file.url.startsWith(URL_PREFIX) ? file.url.slice(URL_PREFIX.length) : undefined;
      if (file.platform !== 'web' || id === undefined || id !== file.id || !UPLOAD_ID.test(id)) {
        throw new FileTransferError('not fetched: it is not a file uploaded to this playground', false);
      }
      const staged = this.staged.get(id);
      if (!staged) {
        throw new FileTransferError(
          `not fetched: the playground no longer has this upload (it keeps uploads only while it runs, and a sent file ${SENT_TTL_MS / 3_600_000} hours at most); attach it again`,
          false,
        );
      }
      const stream = addAbortSignal(signal, createReadStream(staged.path));
      stream.once('end', () => {
        staged.readAt ??= this.now();
      });
      return { body: stream, size: staged.size, ...(staged.mimeType ? { contentType: staged.mimeType } : {}) };
    },
  };

  /** Remove what has outstayed its time (see the header). */
  async sweep(now = this.now()): Promise<void> {
    for (const staged of [...this.staged.values()]) {
      const due =
        staged.sentAt === undefined
          ? staged.uploadedAt + UNSENT_TTL_MS
          : staged.readAt !== undefined
            ? Math.min(staged.readAt + READ_GRACE_MS, staged.sentAt + SENT_TTL_MS)
            : staged.sentAt + SENT_TTL_MS;
      if (now >= due) await this.remove(staged.id);
    }
  }

  /** Ids staged now (for tests and the sweep's callers). */
  ids(): string[] {
    return [...this.staged.keys()];
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async remove(id: string): Promise<void> {
    const staged = this.staged.get(id);
    if (!staged) return;
    this.staged.delete(id);
    this.bytes -= staged.size;
    await rm(staged.path, { force: true });
  }
}

/** The name as shown: no control characters, at most NAME_MAX characters, never empty. */
function displayName(name: string): string {
  const shown = name
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, NAME_MAX);
  return shown || 'file';
}
