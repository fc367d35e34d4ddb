// A real Redis for the cluster tests: Debian's redis-server (7.0.15; `apt-get install
// redis-server`, which .ci/run does) on a random loopback port, in a throwaway folder, with
// the failures a test needs at hand: stop (SIGTERM, a clean shutdown), kill (SIGKILL),
// pause/resume (SIGSTOP/SIGCONT: a server that holds its connections open and answers
// nothing) and restart on the SAME port, so clients configured with `url` reconnect on
// their own, as they would to a production Redis that came back ("Redis down 20 s").
//
// By default nothing is persisted (`--save '' --appendonly no`): a restart starts empty.
// `durable: true` turns on the append-only file with fsync every second, the production
// setting cluster mode asks for, for tests where data must survive a restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { freePort } from './loopback-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServerOptions {
  /** Append-only file, fsync every second, so a restart keeps the data (default false). */
  durable?: boolean;
  /** The redis-server binary (default: REDIS_SERVER, else redis-server on PATH). */
  binary?: string;
}

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

export class RedisServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;
  /** What the server printed (warnings and worse), for a failing test's message. */
  output = '';

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly options: RedisServerOptions,
  ) {}

  /** Start a server on a free loopback port and wait until it answers PING. */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const dir = await mkdtemp(join(tmpdir(), 'chat-agent-redis-'));
    // A free port can be taken between our probe and the server's bind: try a few.
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      const server = new RedisServer(await freePort(), dir, options);
      try {
        await server.launch();
        return server;
      } catch (error) {
        lastError = error;
        await server.kill();
      }
    }
    await rm(dir, { recursive: true, force: true });
    throw lastError instanceof Error ? lastError : new Error(String(lastError));
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** A clean shutdown (SIGTERM), waited for. A paused server is woken first so it can exit. */
  async stop(): Promise<void> {
    await this.signalAndWait('SIGTERM');
  }

  /** A crash (SIGKILL): nothing is flushed. */
  async kill(): Promise<void> {
    await this.signalAndWait('SIGKILL');
  }

  /** SIGSTOP: connections stay open, nothing is answered (a stalled or partitioned Redis). */
  pause(): void {
    if (!this.child || this.paused) return;
    this.child.kill('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    if (!this.child || !this.paused) return;
    this.child.kill('SIGCONT');
    this.paused = false;
  }

  /** Stop (if running) and start again on the same port and folder. */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Stop the server and remove its folder. */
  async dispose(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      this.options.durable ? 'yes' : 'no',
      ...(this.options.durable ? ['--appendfsync', 'everysec'] : []),
      // Quiet: no banner, no "ready to accept connections"; warnings still reach `output`.
      '--loglevel',
      'warning',
      '--daemonize',
      'no',
    ];
    const child = spawn(this.options.binary ?? process.env.REDIS_SERVER ?? 'redis-server', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.paused = false;
    child.stdout.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    let exitedEarly: ((reason: Error) => void) | undefined;
    const spawnFailed = new Promise<never>((_, reject) => (exitedEarly = reject));
    spawnFailed.catch(() => undefined);
    this.exited = new Promise((resolve) => {
      const gone = (reason: Error) => {
        if (this.child === child) this.child = undefined;
        exitedEarly?.(reason);
        resolve();
      };
      // A binary that cannot be spawned emits 'error' and never 'exit'.
      child.once('error', (error) =>
        gone(
          new Error(`redis-server could not start (is it installed? apt-get install redis-server): ${error.message}`),
        ),
      );
      child.once('exit', (code, signal) =>
        gone(
          new Error(
            `redis-server exited (${signal ?? code}) before answering on port ${this.port}: ${this.output.trim()}`,
          ),
        ),
      );
    });
    await Promise.race([waitForPing(this.port, START_TIMEOUT_MS), spawnFailed]);
    exitedEarly = undefined;
  }

  private async signalAndWait(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (this.paused && signal === 'SIGTERM') this.resume();
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
    this.paused = false;
  }
}

/** Poll with a raw RESP PING until the server answers +PONG (no client library involved). */
async function waitForPing(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await pingOnce(port)) return;
    if (Date.now() > deadline)
      throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}
