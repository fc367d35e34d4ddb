// Files in: when a turn takes a person's message, the files it carries are fetched through
// their platform's source (transfer.ts) into the conversation's `uploads/` folder, judged by
// their bytes, prepared for the model (an image re-encoded to fit, a PDF's text extracted
// beside it) and returned as references for the transcript. Every file that does not make it
// comes back as a problem line for the thread, and the model is told too (user-turn.ts).
//
// The rules: bytes stream to disk and are counted as they come, never buffered whole; a cap
// is checked before a download (the declared size) and while it runs (the real one); a web
// page where a file was expected (Slack's sign-in page when a token is missing) is refused,
// never saved; a failed download is tried once more, unless a second try cannot help.
import { lchown, lstat, type FileHandle, mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { IncomingFile, StoredFile } from '../engine/index.js';
import { silentLogger, type EngineLogger } from '../engine/index.js';
import { declaresHtml, judgeFile, looksLikeHtml, SNIFF_BYTES } from './file-kind.js';
import { createUnique, safeFileName } from './safe-name.js';
import { formatBytes } from './sizes.js';
import { FileTransferError, type FileSource, type FileTransfers } from './transfer.js';

/** What an image needs to reach a model (image-prep.ts), and a PDF's text (pdf-text.ts). */
export interface MediaPreparers {
  prepareImage?(absPath: string, outPathWithoutExt: string, request?: MediaRequest): Promise<{ kind: 'as-is' } | { kind: 'copy'; path: string; mimeType: string } | { kind: 'unreadable'; reason: string }>;
  extractPdfText?(absPath: string, request?: MediaRequest): Promise<{ text: string } | { error: string }>;
}

/** Who shared the file, and the turn's signal: the preparers' heavy work takes turns between people and stops with the turn. */
export interface MediaRequest {
  requester: string;
  signal: AbortSignal;
}

export interface IntakeOptions {
  transfers: FileTransfers;
  /** MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE, MAX_CONVERSATION_FILE_BYTES. */
  maxFileBytes: number;
  maxFilesPerMessage: number;
  maxConversationBytes: number;
  /** One download attempt's limit (default 2 minutes). */
  downloadTimeoutMs?: number;
  /** Who owns what is saved (a root bot's run-as uid: its commands must read and edit the files). */
  owner?: { uid: number; gid: number };
  media?: MediaPreparers;
  logger?: EngineLogger;
}

/** Where one conversation keeps its uploads. */
export interface UploadPlace {
  /** The conversation's folder: stored paths are relative to it. */
  folder: string;
  /** The uploads folder inside it (its own per thread when a channel or the workspace is shared). */
  uploads: string;
}

export interface IntakeResult {
  stored: StoredFile[];
  /** One line per file that did not reach the model in full, naming the file (for the thread's note). */
  problems: string[];
  /** Those of `problems` whose file was not saved at all (for the model's list of what did not come through). */
  missing: string[];
}

const MODEL_COPIES = '.for-model';

export class FileIntake {
  private readonly logger: EngineLogger;

  constructor(private readonly options: IntakeOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** `requester` names who shared the files (platform, workspace, user), for the media preparers' turns. */
  async receive(place: UploadPlace, files: readonly IncomingFile[], signal: AbortSignal, requester = ''): Promise<IntakeResult> {
    const { maxFilesPerMessage } = this.options;
    const stored: StoredFile[] = [];
    const problems: string[] = [];
    const missing: string[] = [];
    const notSaved = (line: string) => {
      problems.push(line);
      missing.push(line);
    };
    try {
      await this.ensureFolder(place, place.uploads);
    } catch (error) {
      const reason = error instanceof FileTransferError ? error.message : `not fetched: the uploads folder could not be made (${errorText(error)})`;
      const lines = files.map((file) => `${displayName(file.name)}: ${reason}`);
      return { stored, problems: lines, missing: lines };
    }
    let used = await folderBytes(place.uploads);
    for (const [index, file] of files.entries()) {
      const shown = displayName(file.name);
      if (index >= maxFilesPerMessage) {
        notSaved(`${shown}: not fetched: a message may bring at most ${maxFilesPerMessage} file${maxFilesPerMessage === 1 ? "" : "s"} (MAX_FILES_PER_MESSAGE)`);
        continue;
      }
      if (signal.aborted) {
        notSaved(`${shown}: not fetched: the turn was stopped`);
        continue;
      }
      try {
        const saved = await this.fetchOne(place, file, used, { requester, signal });
        used += saved.size;
        stored.push(saved);
        if (saved.size === 0) problems.push(`${shown}: the file is empty (0 bytes)`);
        else if (saved.unreadable) problems.push(`${shown}: saved as ${saved.path}, but the model cannot see it: ${saved.unreadable}`);
      } catch (error) {
        const reason = error instanceof FileTransferError ? error.message : signal.aborted ? 'the turn was stopped' : `the download failed (${errorText(error)})`;
        if (!(error instanceof FileTransferError)) this.logger.warn({ err: error, platform: file.platform, fileId: file.id }, 'a shared file could not be fetched');
        notSaved(`${shown}: ${reason}`);
      }
    }
    return { stored, problems, missing };
  }

  private async fetchOne(place: UploadPlace, file: IncomingFile, used: number, request: MediaRequest): Promise<StoredFile> {
    const { signal } = request;
    const { maxFileBytes, maxConversationBytes } = this.options;
    if (file.size !== undefined && file.size > maxFileBytes) {
      throw new FileTransferError(`not fetched: ${formatBytes(file.size)} is over the ${formatBytes(maxFileBytes)} one file may be (MAX_FILE_BYTES)`, false);
    }
    const room = maxConversationBytes - used;
    if ((file.size ?? 1) > room) {
      throw new FileTransferError(
        `not fetched: this conversation's files would pass the ${formatBytes(maxConversationBytes)} they may take together (MAX_CONVERSATION_FILE_BYTES; ${formatBytes(Math.max(0, room))} left)`,
        false,
      );
    }
    const source = this.options.transfers.source(file.platform);
    if (!source) throw new FileTransferError(`not fetched: this bot cannot fetch files from ${file.platform}`, false);

    const created = await createUnique(place.uploads, safeFileName(file.name));
    const { handle } = created;
    let { name } = created;
    let absolute = path.join(place.uploads, name);
    let sharedName = file.name;
    let first: Uint8Array = new Uint8Array();
    let size = 0;
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          const got = await this.download(source, file, handle, Math.min(maxFileBytes, room), signal);
          ({ first, size } = got);
          if (got.name) sharedName = got.name;
          break;
        } catch (error) {
          const again = attempt === 1 && !signal.aborted && !(error instanceof FileTransferError && !error.retryable);
          if (!again) throw error;
          this.logger.info({ platform: file.platform, fileId: file.id, err: error }, 'a shared file download failed; trying once more');
        }
      }
    } catch (error) {
      await handle.close().catch(() => undefined);
      await rm(absolute, { force: true });
      throw error;
    }
    await handle.close();
    if (sharedName !== file.name && safeFileName(sharedName) !== name) {
      // Named only by the download: the file moves to that name (made safe, never over another).
      const renamed = await createUnique(place.uploads, safeFileName(sharedName));
      await renamed.handle.close();
      const target = path.join(place.uploads, renamed.name);
      await rename(absolute, target);
      absolute = target;
      name = renamed.name;
    }
    if (this.options.owner) await lchown(absolute, this.options.owner.uid, this.options.owner.gid);

    const judged = judgeFile(first, name, file.mimeType);
    const storedFile: StoredFile = { path: relative(place.folder, absolute), name: sharedName, mimeType: judged.mimeType, size, kind: judged.kind };
    if (judged.kind === 'image' && this.options.media?.prepareImage) {
      // Prepared in a folder of the bot's own, then copied into a file created new: the image
      // library writes through links, and the workspace's commands can plant one at a name.
      const scratch = await mkdtemp(path.join(tmpdir(), 'image-prep-'));
      try {
        const prepared = await this.options.media.prepareImage(absolute, path.join(scratch, name), request);
        if (prepared.kind === 'copy') {
          const copies = path.join(place.uploads, MODEL_COPIES);
          await this.ensureFolder(place, copies);
          const copy = await createUnique(copies, path.basename(prepared.path));
          try {
            await copy.handle.writeFile(await readFile(prepared.path));
          } finally {
            await copy.handle.close();
          }
          const copyPath = path.join(copies, copy.name);
          if (this.options.owner) await lchown(copyPath, this.options.owner.uid, this.options.owner.gid);
          storedFile.modelCopy = { path: relative(place.folder, copyPath), mimeType: prepared.mimeType };
        }
        if (prepared.kind === 'unreadable') storedFile.unreadable = prepared.reason;
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    }
    if (judged.kind === 'pdf' && this.options.media?.extractPdfText) {
      const extracted = await this.options.media.extractPdfText(absolute, request);
      if ('text' in extracted) {
        const text = await createUnique(place.uploads, `${name}.txt`);
        try {
          await text.handle.writeFile(extracted.text, 'utf8');
        } finally {
          await text.handle.close();
        }
        const textPath = path.join(place.uploads, text.name);
        if (this.options.owner) await lchown(textPath, this.options.owner.uid, this.options.owner.gid);
        storedFile.textPath = relative(place.folder, textPath);
      } else {
        storedFile.unreadable = `its text could not be read (${extracted.error})`;
      }
    }
    return storedFile;
  }

  /** One attempt: the bytes stream into the file (emptied first), counted against `limit`. */
  private async download(
    source: FileSource,
    file: IncomingFile,
    handle: FileHandle,
    limit: number,
    signal: AbortSignal,
  ): Promise<{ first: Uint8Array; size: number; name?: string }> {
    await handle.truncate(0);
    // Not AbortSignal.any([signal, AbortSignal.timeout(ms)]): on Node 20 the timeout signal is
    // held only weakly there, and a garbage collection before it fires drops it, so a stalled
    // download never timed out (nodejs/node#57736; the stall test hung when the heap was
    // collected mid-download). A timer of our own holds its controller until it is cleared.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException('The download took too long', 'TimeoutError')), this.options.downloadTimeoutMs ?? 120_000);
    try {
      return await this.downloadWithin(AbortSignal.any([signal, deadline.signal]), source, file, handle, limit);
    } finally {
      clearTimeout(timer);
    }
  }

  private async downloadWithin(
    attempt: AbortSignal,
    source: FileSource,
    file: IncomingFile,
    handle: FileHandle,
    limit: number,
  ): Promise<{ first: Uint8Array; size: number }> {
    const expectsHtml = declaresHtml(file.name, file.mimeType);
    const opened = await source.open(file, attempt);
    if (!expectsHtml && (opened.contentType ?? '').toLowerCase().startsWith('text/html')) throw signInPage();
    if (opened.size !== undefined && opened.size > limit) throw new FileTransferError(`not fetched: ${formatBytes(opened.size)} is over the ${formatBytes(limit)} it may be`, false);
    const body = opened.body instanceof ReadableStream ? Readable.fromWeb(opened.body as import('node:stream/web').ReadableStream) : opened.body;
    let size = 0;
    const head: Uint8Array[] = [];
    let headBytes = 0;
    try {
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        attempt.throwIfAborted();
        size += chunk.byteLength;
        if (size > limit) throw new FileTransferError(`not fetched: it is larger than the ${formatBytes(limit)} it may be`, false);
        if (headBytes < SNIFF_BYTES) {
          head.push(chunk);
          headBytes += chunk.byteLength;
          if (!expectsHtml && headBytes >= 64 && looksLikeHtml(Buffer.concat(head))) throw signInPage();
        }
        await handle.write(chunk, 0, chunk.byteLength, size - chunk.byteLength);
      }
    } finally {
      if (body instanceof Readable) body.destroy();
    }
    const first = Buffer.concat(head).subarray(0, SNIFF_BYTES);
    if (!expectsHtml && looksLikeHtml(first)) throw signInPage();
    if (attempt.aborted) throw attempt.reason instanceof Error ? attempt.reason : new Error('the download was stopped');
    return { first, size, ...(opened.name ? { name: opened.name } : {}) };
  }

  /**
   * Make `dir` inside the conversation's folder, one level at a time, each a real folder: the
   * workspace's commands may have put a link where `uploads` goes, and the bot (root, maybe)
   * must never write where it leads.
   */
  private async ensureFolder(place: UploadPlace, dir: string): Promise<void> {
    const steps = path.relative(place.folder, dir).split(path.sep).filter(Boolean);
    let at = place.folder;
    for (const step of steps) {
      at = path.join(at, step);
      let made = false;
      try {
        await mkdir(at, { mode: 0o755 });
        made = true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const stats = await lstat(at);
      if (!stats.isDirectory()) throw new FileTransferError(`not fetched: ${relative(place.folder, at)} in the workspace is not a folder (a link or a file has its name)`, false);
      if (made && this.options.owner) await lchown(at, this.options.owner.uid, this.options.owner.gid);
    }
  }
}

function signInPage(): FileTransferError {
  return new FileTransferError('not saved: the download gave a web page instead of the file (a sign-in page: the bot may lack the files:read permission)', false);
}

/** A name for the thread and the model's text: one line, at most 100 characters. */
export function displayName(name: string): string {
  const line = name.replace(/[\p{Cc}\p{Cf}]/gu, '').trim();
  return (line.length > 100 ? `${line.slice(0, 99)}…` : line) || 'file';
}

function relative(folder: string, absolute: string): string {
  return path.relative(folder, absolute).split(path.sep).join('/');
}

function errorText(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'it took too long';
  return error instanceof Error ? error.message : String(error);
}

/** What the uploads folder holds, in bytes (model copies and extracted text included). */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    total += await stat(full).then((s) => s.size, () => 0);
  }
  return total;
}
