// The bot as a production host runs it: a copy of the project's tracked files (what a clean
// clone holds, with this working tree's edits, and no build: its first `npm start` compiles
// the bot), `npm ci --omit=dev` in it (no dev dependencies, no test code needed), and
// `npm start` there, with npm's script shell set to dash, Debian's /bin/sh, the shell that
// does not pass a signal on to its child. Signals go to the npm process itself, as
// `docker stop` or a process manager sends them.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jsonLines } from './bot-process.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a clean clone of this working tree holds (tracked files, with its edits), copied into `path`. */
async function copyClone(path: string): Promise<void> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter(Boolean)) {
    // Deleted in the working tree but still in the index: a clean clone of the edit would not have it.
    await mkdir(dirname(join(path, file)), { recursive: true });
    await cp(join(ROOT, file), join(path, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

/**
 * A clone of the project without a build (no dist/), its dependencies this checkout's own
 * (node_modules linked, not installed): for tests of what `npm start` does with the sources.
 */
export async function cloneCopy(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'chat-agent-clone-'));
  await copyClone(path);
  await symlink(join(ROOT, 'node_modules'), join(path, 'node_modules'), 'dir');
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A production copy of the project, installed without dev dependencies. */
export async function productionCopy(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'chat-agent-prod-'));
  await copyClone(path);
  // Install scripts are skipped and sqlite3's native binding is taken from this checkout's own
  // install (same Node, same machine): building it from source again takes a minute or more
  // here, and is what the `npm ci` that installed this checkout already did. Everything else is
  // exactly what `npm ci --omit=dev` installs.
  await run(
    'npm',
    ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: path, maxBuffer: 64 * 1024 * 1024 },
  );
  await cp(join(ROOT, 'node_modules', 'sqlite3', 'build'), join(path, 'node_modules', 'sqlite3', 'build'), {
    recursive: true,
  });
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export class NpmStart {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  /** The bot's own pid (from its log lines), distinct from npm's. */
  botPid = 0;
  port = 0;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** `npm start` in `dir`, until the Slack connector's start line (HTTP mode: its port). */
  static async start(dir: string, env: Record<string, string>, timeoutMs = 30_000): Promise<NpmStart> {
    const bot = new NpmStart(
      spawn('npm', ['start'], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          npm_config_script_shell: '/bin/dash',
          npm_config_update_notifier: 'false',
          METRICS_PORT: '0',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const startedAt = Date.now();
    for (;;) {
      const line = bot.lines().find((entry) => entry.msg === 'Slack connector started');
      if (line) {
        bot.port = Number(line.port);
        bot.botPid = Number(line.pid);
        return bot;
      }
      if (bot.child.exitCode !== null || Date.now() - startedAt > timeoutMs) {
        bot.child.kill('SIGKILL');
        throw new Error(
          `npm start did not reach readiness\nstdout:\n${bot.stdout.slice(-4000)}\nstderr:\n${bot.stderr.slice(-4000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** The JSON log lines so far. */
  lines(): Record<string, unknown>[] {
    return jsonLines(this.stdout);
  }

  get eventsUrl(): string {
    return `http://127.0.0.1:${this.port}/slack/events`;
  }

  /** SIGTERM to the npm process only (not its group). */
  terminate(): void {
    this.child.kill('SIGTERM');
  }

  /** For clean-up after a failure: npm and the bot. */
  async kill(): Promise<void> {
    for (const pid of [this.child.pid, this.botPid]) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await this.exited;
  }
}

/** Whether a process is still there. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process (pid and command) whose working directory is inside `dir`: what a stop must not leave behind. */
export async function processesIn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = await readlink(`/proc/${entry}/cwd`);
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue;
      found.push(`${entry} ${(await readFile(`/proc/${entry}/cmdline`, 'utf8')).replaceAll('\0', ' ').trim()}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
