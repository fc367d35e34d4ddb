// Files in: when a turn takes a person's message, the files it carries are fetched through
// their platform's source (transfer.ts) into the conversation's `uploads/` folder, judged by
// their bytes, prepared for the model (an image re-encoded to fit, a PDF's text extracted
// beside it) and returned as references for the transcript. Every file that does not make it
// comes back as a problem line for the thread, and the model is told too (user-turn.ts).
//
// The rules: bytes stream to disk and are counted as they come, never buffered whole; a cap
// is checked before a download (the declared size) and while it runs (the real one); a web
// page where a file was expected (Slack's sign-in page when a token is missing) is refused,
// never saved (one download's bytes: download.ts); a failed download is tried once more,
// unless a second try cannot help.
//
// The uploads folder is the workspace's: a command (in a shared folder, another thread's) can
// swap it for a link at any moment. So nothing here looks a name up twice: files are made and
// written by a FolderWriter (src/tools/folder-writer.ts; a root bot's writes as its commands'
// user), and read back through a folder held by descriptor, checked to be the file written.
import { type FileHandle, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { IncomingFile, StoredFile } from '../engine/index.js';
import { silentLogger, type EngineLogger } from '../engine/index.js';
import { InProcessWriter, type FolderWriter, type WrittenFile } from '../tools/folder-writer.js';
import {
  folderPathBelow,
  heldFilePath,
  NotAFolderError,
  openPinnedFile,
  openPinnedFolder,
  pinnedFolderBytes,
  type FolderPath,
} from '../tools/pinned-folder.js';
import { downloadOnce } from './download.js';
import { judgeFile } from './file-kind.js';
import { safeFileName } from './safe-name.js';
import { formatBytes } from './sizes.js';
import { FileTransferError, type FileTransfers } from './transfer.js';

/** What an image needs to reach a model (image-prep.ts), and a PDF's text (pdf-text.ts). */
export interface MediaPreparers {
  prepareImage?(
    absPath: string,
    outPathWithoutExt: string,
    request?: MediaRequest,
  ): Promise<
    { kind: 'as-is' } | { kind: 'copy'; path: string; mimeType: string } | { kind: 'unreadable'; reason: string }
  >;
  extractPdfText?(absPath: string, request?: MediaRequest): Promise<{ text: string } | { error: string }>;
}

/** Who shared the file, and the turn's signal: the preparers' heavy work takes turns between people and stops with the turn. */
export interface MediaRequest {
  requester: string;
  signal: AbortSignal;
  /** The very file saved, held open by intake: a PDF is read from it, never by its path (which leads through a link). */
  held?: FileHandle;
}

export interface IntakeOptions {
  transfers: FileTransfers;
  /** MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE, MAX_CONVERSATION_FILE_BYTES. */
  maxFileBytes: number;
  maxFilesPerMessage: number;
  maxConversationBytes: number;
  /** One download attempt's limit (default 2 minutes). */
  downloadTimeoutMs?: number;
  /**
   * Who makes and writes the files (default: this process, as the bot's user). A root bot's
   * is its commands' run-as user (src/sandbox/run-as-writer.ts): they must read and edit the
   * files, and a link they plant must lead nowhere they could not write themselves.
   */
  writer?: FolderWriter;
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
  private readonly writer: FolderWriter;

  constructor(private readonly options: IntakeOptions) {
    this.logger = options.logger ?? silentLogger;
    this.writer = options.writer ?? new InProcessWriter();
  }

  /** Let go of the writer's helper process, if it has one (it starts again when next needed). */
  close(): Promise<void> {
    return this.writer.close();
  }

  /** `requester` names who shared the files (platform, workspace, user), for the media preparers' turns. */
  async receive(
    place: UploadPlace,
    files: readonly IncomingFile[],
    signal: AbortSignal,
    requester = '',
  ): Promise<IntakeResult> {
    const { maxFilesPerMessage } = this.options;
    const stored: StoredFile[] = [];
    const problems: string[] = [];
    const missing: string[] = [];
    const notSaved = (line: string) => {
      problems.push(line);
      missing.push(line);
    };
    const uploads = folderPathBelow(place.folder, place.uploads);
    try {
      await this.writer.makeFolder(uploads);
    } catch (error) {
      const lines = files.map((file) => `${displayName(file.name)}: ${folderProblem(error)}`);
      return { stored, problems: lines, missing: lines };
    }
    let used = await pinnedFolderBytes(uploads);
    for (const [index, file] of files.entries()) {
      const shown = displayName(file.name);
      if (index >= maxFilesPerMessage) {
        notSaved(
          `${shown}: not fetched: a message may bring at most ${maxFilesPerMessage} file${maxFilesPerMessage === 1 ? '' : 's'} (MAX_FILES_PER_MESSAGE)`,
        );
        continue;
      }
      if (signal.aborted) {
        notSaved(`${shown}: not fetched: the turn was stopped`);
        continue;
      }
      try {
        const saved = await this.fetchOne(place, uploads, file, used, { requester, signal });
        used += saved.size;
        stored.push(saved);
        if (saved.size === 0) problems.push(`${shown}: the file is empty (0 bytes)`);
        else if (saved.unreadable)
          problems.push(`${shown}: saved as ${saved.path}, but the model cannot see it: ${saved.unreadable}`);
      } catch (error) {
        const reason =
          error instanceof FileTransferError
            ? error.message
            : error instanceof NotAFolderError
              ? folderProblem(error)
              : signal.aborted
                ? 'the turn was stopped'
                : `the download failed (${errorText(error)})`;
        if (!(error instanceof FileTransferError) && !(error instanceof NotAFolderError))
          this.logger.warn(
            { err: error, platform: file.platform, fileId: file.id },
            'a shared file could not be fetched',
          );
        notSaved(`${shown}: ${reason}`);
      }
    }
    return { stored, problems, missing };
  }

  private async fetchOne(
    place: UploadPlace,
    uploads: FolderPath,
    file: IncomingFile,
    used: number,
    request: MediaRequest,
  ): Promise<StoredFile> {
    const { signal } = request;
    const { maxFileBytes, maxConversationBytes } = this.options;
    if (file.size !== undefined && file.size > maxFileBytes) {
      throw new FileTransferError(
        `not fetched: ${formatBytes(file.size)} is over the ${formatBytes(maxFileBytes)} one file may be (MAX_FILE_BYTES)`,
        false,
      );
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

    let saving: WrittenFile;
    try {
      saving = await this.writer.createUnique(uploads, safeFileName(file.name));
    } catch (error) {
      // Not a download's failure: the folder it goes in was swapped or removed meanwhile, or is full of that name.
      throw new FileTransferError(
        error instanceof NotAFolderError || (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? folderProblem(error)
          : `not fetched: it could not be saved (${errorText(error)})`,
        false,
      );
    }
    let sharedName = file.name;
    let first: Uint8Array = new Uint8Array();
    let size = 0;
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          const got = await downloadOnce(
            source,
            file,
            saving,
            Math.min(maxFileBytes, room),
            signal,
            this.options.downloadTimeoutMs ?? 120_000,
          );
          ({ first, size } = got);
          if (got.name) sharedName = got.name;
          break;
        } catch (error) {
          const again = attempt === 1 && !signal.aborted && !(error instanceof FileTransferError && !error.retryable);
          if (!again) throw error;
          this.logger.info(
            { platform: file.platform, fileId: file.id, err: error },
            'a shared file download failed; trying once more',
          );
        }
      }
      // Named only by the download: the file moves to that name (made safe, never over another).
      if (sharedName !== file.name && safeFileName(sharedName) !== saving.name)
        await saving.rename(safeFileName(sharedName));
    } catch (error) {
      await saving.discard();
      throw error;
    }
    await saving.close();
    const name = saving.name;
    const absolute = path.join(place.uploads, name);

    const judged = judgeFile(first, name, file.mimeType);
    const storedFile: StoredFile = {
      path: relative(place.folder, absolute),
      name: sharedName,
      mimeType: judged.mimeType,
      size,
      kind: judged.kind,
    };
    if (
      (judged.kind === 'image' && this.options.media?.prepareImage) ||
      (judged.kind === 'pdf' && this.options.media?.extractPdfText)
    ) {
      await this.prepareMedia(place, uploads, saving, absolute, storedFile, request);
    }
    return storedFile;
  }

  /**
   * An image's copy for the model, or a PDF's text, made from the very file just saved: read
   * through the held uploads folder and checked to be that file (a command may have put its
   * own, or a link, at the name since). One that is not is left for the model as it is.
   */
  private async prepareMedia(
    place: UploadPlace,
    uploads: FolderPath,
    saved: WrittenFile,
    absolute: string,
    storedFile: StoredFile,
    request: MediaRequest,
  ): Promise<void> {
    const media = this.options.media!;
    const name = saved.name;
    const folder = await openPinnedFolder(uploads).catch(() => undefined);
    const original = folder ? await openPinnedFile(folder, name, saved.identity).catch(() => undefined) : undefined;
    // A folder of the bot's own: the image library writes its copy here (it writes through
    // links, and the workspace's commands can plant one at a name), and reads the original
    // through a link here to the descriptor held (a path of its own each time: libvips caches
    // what it read by path, and /proc/<pid>/fd/N names another file for the next upload).
    const scratch = await mkdtemp(path.join(tmpdir(), 'upload-prep-'));
    try {
      if (!original) {
        storedFile.unreadable = 'it changed in the workspace while it was being saved';
        return;
      }
      const held = heldFilePath(original, absolute);
      const source = held === absolute ? absolute : path.join(scratch, `original-${name}`);
      if (source !== absolute) await symlink(held, source);
      if (storedFile.kind === 'image' && media.prepareImage) {
        const prepared = await media.prepareImage(source, path.join(scratch, name), request);
        if (prepared.kind === 'copy') {
          const copies = { root: uploads.root, steps: [...uploads.steps, MODEL_COPIES] };
          const copy = await this.writeNew(copies, path.basename(prepared.path), await readFile(prepared.path));
          storedFile.modelCopy = {
            path: relative(place.folder, path.join(place.uploads, MODEL_COPIES, copy)),
            mimeType: prepared.mimeType,
          };
        }
        if (prepared.kind === 'unreadable') storedFile.unreadable = prepared.reason;
      }
      if (storedFile.kind === 'pdf' && media.extractPdfText) {
        const extracted = await media.extractPdfText(source, { ...request, held: original });
        if ('text' in extracted) {
          const text = await this.writeNew(uploads, `${name}.txt`, Buffer.from(extracted.text, 'utf8'));
          storedFile.textPath = relative(place.folder, path.join(place.uploads, text));
        } else {
          storedFile.unreadable = `its text could not be read (${extracted.error})`;
        }
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
      await original?.close();
      await folder?.close();
    }
  }

  /** A new file (`name`, or `name-2`…) in `at` holding `bytes`; resolves with the name it got. */
  private async writeNew(at: FolderPath, name: string, bytes: Uint8Array): Promise<string> {
    const file = await this.writer.createUnique(at, name);
    try {
      await file.write(bytes);
    } catch (error) {
      await file.discard();
      throw error;
    }
    await file.close();
    return file.name;
  }
}

/** Why nothing could be saved in the uploads folder, as the thread's line says it. */
function folderProblem(error: unknown): string {
  if (error instanceof NotAFolderError)
    return `not fetched: ${error.shown} in the workspace is not a folder (a link or a file has its name)`;
  return `not fetched: the uploads folder could not be made (${errorText(error)})`;
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
