// A root bot's writer (src/tools/folder-writer.ts): files made and written in folders the
// commands can change (uploads, granted folders) are made and written by a helper process
// running as the commands' run-as user (run-as-writer-helper.ts), never by root.
//
// One idea: the kernel keeps a root bot's writes where its commands could write anyway. The
// helper walks by descriptor and never follows a link, as the in-process writer does; should
// anything slip past that, it can still only write as an unprivileged user: a link to a
// folder only root may touch leads nowhere. And what it makes is that user's from its first
// byte, so nothing is chowned (a chown by name follows a link planted meanwhile).
//
// One helper per run-as user in the process (runAsWriterFor), started at the first request
// (a Node start: 0.2 s on a busy 2-core machine, bench/files-writers.ts), shared by every session's uploads and file
// tools, and ended after a minute with nothing to do, or when the bot exits (its input
// closes): nobody closes the shared one, since another core in the process (a test's second
// instance) may be using it. Its pipes do not keep the bot alive. It gets no environment
// (nothing of the bot's settings) and `/` as its working folder.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { NotAFileError, type FolderWriter, type WrittenFile } from '../tools/folder-writer.js';
import { folderPathOf, NotAFolderError, type FolderPath } from '../tools/pinned-folder.js';
import { RUN_AS_WRITER_SOURCE } from './run-as-writer-helper.js';
import type { SandboxOwner } from './run-as.js';

const IDLE_EXIT_MS = 60_000;
/** The helper holds a write's bytes and little else: a small heap is plenty. */
const HELPER_HEAP_MB = 32;
/** What is kept of the helper's stderr, for the error when it dies. */
const STDERR_KEEP_CHARS = 2_000;

type Reply =
  | { seq: number; ok: true; [field: string]: unknown }
  | { seq: number; ok: false; code: string; message: string; shown?: string; kind?: string };

interface Pending {
  resolve(reply: Reply & { ok: true }): void;
  reject(error: Error): void;
}

export interface RunAsWriterOptions {
  /** The helper ends after this long with nothing to do (default a minute). */
  idleMs?: number;
  /** The Node executable the helper runs on (default this process's). */
  execPath?: string;
}

export class RunAsWriter implements FolderWriter {
  private helper: HelperProcess | undefined;

  constructor(
    readonly owner: SandboxOwner,
    private readonly options: RunAsWriterOptions = {},
  ) {}

  async makeFolder(at: FolderPath): Promise<void> {
    await this.request({ op: 'folder', ...where(at) });
  }

  async createUnique(at: FolderPath, name: string): Promise<WrittenFile> {
    return this.fileFrom(await this.request({ op: 'create', ...where(at), name }), at);
  }

  async openForWriting(at: FolderPath, name: string): Promise<WrittenFile> {
    return this.fileFrom(await this.request({ op: 'open', ...where(at), name }), at);
  }

  async close(): Promise<void> {
    const helper = this.helper;
    this.helper = undefined;
    await helper?.stop();
  }

  /** The helper's process id while it runs (tests check who it runs as). */
  get pid(): number | undefined {
    return this.helper?.pid;
  }

  private helperProcess(): HelperProcess {
    if (!this.helper || this.helper.ended) {
      this.helper = new HelperProcess(
        this.owner,
        this.options.execPath ?? process.execPath,
        this.options.idleMs ?? IDLE_EXIT_MS,
      );
    }
    return this.helper;
  }

  private request(
    header: Record<string, unknown>,
    bytes?: Uint8Array,
    helper = this.helperProcess(),
  ): Promise<Reply & { ok: true }> {
    return helper.send(header, bytes);
  }

  private fileFrom(reply: Reply & { ok: true }, at: FolderPath): WrittenFile {
    // The file lives in the helper that opened it: later calls go to that one, even if another was started since.
    const helper = this.helper!;
    const id = reply.id as number;
    let name = reply.name as string;
    const call = (op: string, extra: Record<string, unknown> = {}, bytes?: Uint8Array) =>
      this.request({ op, id, ...extra }, bytes, helper);
    return {
      get name() {
        return name;
      },
      folder: folderPathOf(at),
      created: reply.created === true,
      identity: { dev: reply.dev as number, ino: reply.ino as number },
      size: reply.size as number,
      nlink: reply.nlink as number,
      async write(bytes) {
        await call('write', {}, bytes);
      },
      async truncate() {
        await call('truncate');
      },
      async rename(wanted) {
        name = (await call('rename', { name: wanted })).name as string;
        return name;
      },
      async close() {
        return (await call('close')).size as number;
      },
      async discard() {
        await call('discard').catch(() => undefined);
      },
    };
  }
}

const writers = new Map<string, RunAsWriter>();

/** The one writer (and helper) of this process for `owner`. */
export function runAsWriterFor(owner: SandboxOwner): RunAsWriter {
  const key = `${owner.uid}:${owner.gid}`;
  let writer = writers.get(key);
  if (!writer) {
    writer = new RunAsWriter(owner);
    writers.set(key, writer);
  }
  return writer;
}

function where(at: FolderPath): { root: string; steps: readonly string[] } {
  return { root: path.resolve(at.root), steps: at.steps };
}

/** One helper process and the requests waiting for its answers. */
class HelperProcess {
  ended = false;
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private lines = '';
  private stderr = '';
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly exited: Promise<void>;

  constructor(
    private readonly owner: SandboxOwner,
    private readonly execPath: string,
    private readonly idleMs: number,
  ) {
    this.child = spawn(execPath, [`--max-old-space-size=${HELPER_HEAP_MB}`, '-e', RUN_AS_WRITER_SOURCE], {
      uid: owner.uid,
      gid: owner.gid,
      cwd: '/',
      env: {},
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.fail(`it ended (${signal ?? `exit code ${code}`})`);
        resolve();
      });
      this.child.once('error', (error) => {
        this.fail(
          `${this.execPath} could not be started as that user (${(error as NodeJS.ErrnoException).code ?? error.message}): Node must be installed where every user may run it`,
        );
        resolve();
      });
    });
    const stdout = this.child.stdout as Readable;
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => this.take(chunk));
    const stderr = this.child.stderr as Readable;
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-STDERR_KEEP_CHARS)));
    (this.child.stdin as Writable).on('error', () => undefined);
    this.child.unref();
    this.holdOpen(false);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  send(header: Record<string, unknown>, bytes?: Uint8Array): Promise<Reply & { ok: true }> {
    if (this.ended) return Promise.reject(this.error('it is not running'));
    const seq = ++this.seq;
    const json = Buffer.from(JSON.stringify({ ...header, seq }), 'utf8');
    const data = bytes ?? new Uint8Array(0);
    const frame = Buffer.allocUnsafe(8);
    frame.writeUInt32BE(json.length, 0);
    frame.writeUInt32BE(data.byteLength, 4);
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.holdOpen(true);
      const stdin = this.child.stdin as Writable;
      stdin.write(frame);
      stdin.write(json);
      if (data.byteLength > 0) stdin.write(data);
    });
  }

  async stop(): Promise<void> {
    if (!this.ended) (this.child.stdin as Writable).end();
    await this.exited;
  }

  private take(chunk: string): void {
    this.lines += chunk;
    for (let newline = this.lines.indexOf('\n'); newline >= 0; newline = this.lines.indexOf('\n')) {
      const line = this.lines.slice(0, newline);
      this.lines = this.lines.slice(newline + 1);
      let reply: Reply;
      try {
        reply = JSON.parse(line) as Reply;
      } catch {
        continue;
      }
      const waiting = this.pending.get(reply.seq);
      if (!waiting) continue;
      this.pending.delete(reply.seq);
      if (reply.ok) waiting.resolve(reply);
      else waiting.reject(replyError(reply));
    }
    if (this.pending.size === 0) this.holdOpen(false);
  }

  /**
   * While an answer is awaited, the helper's output keeps the bot's event loop alive; idle, it
   * does not (a bot may exit with its helper still there: it ends when its input closes), and
   * the helper is ended after `idleMs`.
   */
  private holdOpen(busy: boolean): void {
    const stdout = this.child.stdout as Readable & { ref?(): void; unref?(): void };
    const stdin = this.child.stdin as Writable & { unref?(): void };
    const stderr = this.child.stderr as Readable & { unref?(): void };
    stdin.unref?.();
    stderr.unref?.();
    clearTimeout(this.idleTimer);
    if (busy) {
      stdout.ref?.();
      return;
    }
    stdout.unref?.();
    this.idleTimer = setTimeout(() => {
      if (this.pending.size === 0) (this.child.stdin as Writable).end();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private fail(why: string): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    const error = this.error(why);
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }

  private error(why: string): Error {
    const tail = this.stderr.trim();
    return new Error(
      `the helper that writes files as uid ${this.owner.uid} failed: ${why}${tail ? ` (${tail.split('\n').at(-1)})` : ''}`,
    );
  }
}

/** The helper's refusal as the same errors the in-process writer throws. */
function replyError(reply: Reply & { ok: false }): Error {
  if (reply.code === 'ENOTFOLDER') return new NotAFolderError(reply.shown ?? '?');
  if (reply.code === 'ENOTFILE')
    return new NotAFileError(
      reply.shown ?? '?',
      reply.kind === 'link' || reply.kind === 'directory' ? reply.kind : 'special',
    );
  // A system call's failure comes as its code alone (callers put it in words, as they do Node's).
  return Object.assign(new Error(reply.message || errnoText(reply.code)), { code: reply.code });
}

function errnoText(code: string): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOENT':
      return 'no such file or folder';
    case 'ENOSPC':
      return 'no space left on the disk';
    case 'EDQUOT':
      return 'the disk quota is used up';
    default:
      return code;
  }
}
