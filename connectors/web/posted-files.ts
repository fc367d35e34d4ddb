// Files the bot posts into a playground thread (attach_file), and the only way to fetch them
// back: the 'web' FileSink copies the file into this run's private folder under a random id
// (what the conversation's folder holds later does not change what was posted, as on Slack),
// adds a file message to the thread, and the download route (http-server.ts) serves a posted
// file by that id alone: never a path, never a file the bot did not post.
//
// The download sits behind the access token like every /api/ route; the page fetches it with
// the token in its header and saves the bytes (page/app.js), so the token never rides in a
// URL. Posted files live as long as the run (the folder is removed at close, like the token
// dies with it) and as long as their thread: /forget removes them with it.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileTransferError, type FileSink, type OutgoingFile, type PostedFile } from '../../src/files/transfer.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import { newMessageId, type PageThreads } from './page-threads.js';

/** 16 random bytes, base64url: unguessable, and the file's name on disk. */
const POSTED_ID = /^[A-Za-z0-9_-]{22}$/;

interface Posted {
  path: string;
  name: string;
  size: number;
  threadId: string;
}

export interface PostedFilesOptions {
  /** The private folder posted copies are kept in (made if missing). */
  dir: string;
  threads: PageThreads;
  /** The page's origin (known once the server listens): the link the tool's result carries. */
  origin: () => string;
}

export class PostedFiles {
  private readonly posted = new Map<string, Posted>();

  constructor(private readonly options: PostedFilesOptions) {}

  readonly sink: FileSink = {
    post: async (thread: SessionKey, file: OutgoingFile, signal: AbortSignal): Promise<PostedFile> => {
      const { threads, dir } = this.options;
      if (thread.platform !== 'web' || !threads.get(thread.thread)) {
        throw new FileTransferError(
          'This playground thread is gone (it may have been forgotten); the file was not posted.',
          false,
        );
      }
      const id = randomBytes(16).toString('base64url');
      const path = join(dir, id);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      try {
        await pipeline(createReadStream(file.path), createWriteStream(path, { flags: 'wx', mode: 0o600 }), { signal });
      } catch (error) {
        await rm(path, { force: true });
        if (signal.aborted) throw error;
        throw new FileTransferError(`Could not copy ${file.name} to post it: ${(error as Error).message}`);
      }
      const size = (await stat(path)).size;
      this.posted.set(id, { path, name: file.name, size, threadId: thread.thread });
      const comment = file.comment?.trim();
      await threads.add(thread.thread, {
        kind: 'file',
        id: newMessageId(),
        at: Date.now(),
        file: { id, name: file.name, size, mimeType: file.mimeType },
        ...(comment ? { comment } : {}),
      });
      return { link: `${this.options.origin()}${downloadPath(id)}` };
    },
  };

  /** A posted file's bytes, by its id; undefined for any id the bot did not post in a thread that still exists. */
  open(id: string): { body: Readable; name: string; size: number } | undefined {
    if (!POSTED_ID.test(id)) return undefined;
    const posted = this.posted.get(id);
    if (!posted || !this.options.threads.get(posted.threadId)) return undefined;
    return { body: createReadStream(posted.path), name: posted.name, size: posted.size };
  }

  /** The thread was removed (/forget): its files go with it. */
  async removeThread(threadId: string): Promise<void> {
    for (const [id, posted] of [...this.posted.entries()]) {
      if (posted.threadId !== threadId) continue;
      this.posted.delete(id);
      await rm(posted.path, { force: true });
    }
  }
}

/** Where the page downloads a posted file (with its token in the header). */
function downloadPath(id: string): string {
  return `/api/files/${id}`;
}
