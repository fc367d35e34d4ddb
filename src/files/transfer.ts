// How files cross between a chat platform and the bot: each connector registers a source (it
// fetches a shared file with the platform's own credentials) and a sink (it posts a file into
// a thread), under its platform's name. The files room (intake.ts, attach-file.ts) only ever
// talks to these, so it knows nothing of Slack, Discord or the playground.
import type { Readable } from 'node:stream';
import type { IncomingFile } from '../engine/index.js';
import type { SessionKey } from '../store/session-store.js';

/** A file's bytes as a platform hands them over: a stream, read once, never buffered whole. */
export interface FileDownload {
  body: Readable | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
  /** The response's content type, when the platform says one (an HTML page where a file was expected is refused). */
  contentType?: string;
  /** The length the platform announced, when it did. */
  size?: number;
  /** The file's name, when only the download could tell it (a Slack Connect file the event named by id). */
  name?: string;
}

/**
 * Fetches a shared file. Throw `FileTransferError` with words a person can read (never a
 * token, never a signed URL's query) for a refusal or a failure; `retryable: false` for one
 * that a second try cannot fix (a host that is not the platform's, a sign-in page).
 */
export interface FileSource {
  open(file: IncomingFile, signal: AbortSignal): Promise<FileDownload>;
}

/** A file the bot posts into a thread (attach_file). */
export interface OutgoingFile {
  /** Its real path on disk (inside the conversation's folder), already checked and masked. */
  path: string;
  /** The name it is posted under (no folder). */
  name: string;
  mimeType: string;
  size: number;
  /** A short comment posted with it (plain text, may be empty). */
  comment?: string;
}

/** What the thread shows of a posted file, for the tool's result. */
export interface PostedFile {
  /** A link to the file where the platform gives one (the playground's download link, Slack's permalink). */
  link?: string;
}

/** Posts a file into a thread of its platform. Throws `FileTransferError` with the reason (a size over the platform's limit names both). */
export interface FileSink {
  /** The largest file this thread takes (Discord: the server's upload limit), when the platform has a limit. */
  maxBytes?(thread: SessionKey): Promise<number | undefined>;
  post(thread: SessionKey, file: OutgoingFile, signal: AbortSignal): Promise<PostedFile>;
}

/** A file could not be fetched or posted; the message is for a person (and the model). */
export class FileTransferError extends Error {
  constructor(
    message: string,
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'FileTransferError';
  }
}

/** The sources and sinks of the platforms this process runs, by platform name. */
export class FileTransfers {
  private readonly sources = new Map<string, FileSource>();
  private readonly sinks = new Map<string, FileSink>();

  registerSource(platform: string, source: FileSource): void {
    this.sources.set(platform, source);
  }

  registerSink(platform: string, sink: FileSink): void {
    this.sinks.set(platform, sink);
  }

  source(platform: string): FileSource | undefined {
    return this.sources.get(platform);
  }

  sink(platform: string): FileSink | undefined {
    return this.sinks.get(platform);
  }
}
