// The whole bot as `npm start` runs it (start-command.ts: the compiled bot) in a child process,
// with only the environment a test gives (the developer's own must not leak in). One
// instance is one life of the process: `start` waits for the JSON log line that says the
// Slack connector listens (and reads its port from it) — or, with `{ waitFor: 'discord' }`,
// the line that says the Discord connector is ready, or with `{ waitFor: 'playground' }` runs
// `--playground` and waits for 'Playground started' — `kill` is a SIGKILL, the death no
// shutdown code can soften.
import { spawn, type ChildProcess } from 'node:child_process';
import { startCommand } from './start-command.js';

const STARTED = {
  slack: 'Slack connector started',
  discord: 'Discord connector started',
  playground: 'Playground started',
} as const;

export class BotProcess {
  stdout = '';
  stderr = '';
  /** The HTTP port the bot took (PORT=0 lets it pick), known once `start` resolves. */
  port = 0;
  /** The start-up line waited for, parsed (the Discord one carries `botUserId`, `guilds`, `inviteUrl`). */
  startedLine: Record<string, unknown> = {};
  /** Settles with the exit code (null after a signal) once the process is gone. */
  readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Spawn the bot and wait until it takes Slack events over HTTP (or, `waitFor: 'discord'`, until Discord is ready). */
  static async start(
    env: Record<string, string>,
    cwd: string,
    timeoutMs = 20_000,
    options: { waitFor?: keyof typeof STARTED } = {},
  ): Promise<BotProcess> {
    const started = STARTED[options.waitFor ?? 'slack'];
    // The playground is `npm run playground`: the start command with `--playground`.
    const { command, args } = startCommand(options.waitFor === 'playground' ? ['--playground'] : []);
    const bot = new BotProcess(
      spawn(command, args, {
        cwd,
        // METRICS_PORT: any free port, unless the test names one: bots of tests running side by side must not compete for 9464.
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', METRICS_PORT: '0', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const startedAt = Date.now();
    for (;;) {
      const line = bot.stdout.split('\n').find((l) => l.includes(started));
      if (line) {
        bot.startedLine = JSON.parse(line) as Record<string, unknown>;
        bot.port = typeof bot.startedLine.port === 'number' ? bot.startedLine.port : 0;
        return bot;
      }
      const problem = !bot.alive
        ? `the bot exited (${bot.child.exitCode}) before it started`
        : Date.now() - startedAt > timeoutMs
          ? `the bot did not start within ${timeoutMs} ms`
          : undefined;
      if (problem) {
        await bot.kill();
        throw new Error(`${problem}\nstdout:\n${bot.stdout.slice(-4000)}\nstderr:\n${bot.stderr.slice(-4000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Where Slack delivers events and clicks. */
  get eventsUrl(): string {
    return `http://127.0.0.1:${this.port}/slack/events`;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The process id (cluster tests match it with what the instance logged). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The JSON log lines printed so far (lines that are not JSON are skipped). */
  lines(): Record<string, unknown>[] {
    return jsonLines(this.stdout);
  }

  /** Send a signal (SIGSTOP/SIGCONT to pause and resume, SIGTERM for a graceful stop); nothing when the process is gone. */
  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /** SIGKILL now (synchronously: the moment of the kill is the moment of this call). */
  killNow(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  /** SIGKILL and wait until the process is gone. */
  async kill(): Promise<void> {
    this.killNow();
    await this.exited;
  }
}

/** The JSON log lines of a process's output (lines that are not JSON are skipped). */
export function jsonLines(output: string): Record<string, unknown>[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
