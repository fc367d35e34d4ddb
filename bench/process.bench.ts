// The process suite: what the bot, started by its real start command, holds in memory. `npm
// start` runs in Slack HTTP mode against FakeSlack with FakeOpenAI as the model, as a user runs
// it (npm, then the `exec`'d bot), in a folder of links to this checkout (so a developer's own
// .env, data/ and workspace/ stay out of it). The bot's resident memory is read from
// /proc/<pid>/status of its own process (its pid is in its log lines), not npm's.
//
//   - idle: once it has started (its 'Slack connector started' line) and settled (2 s), ten
//     samples 200 ms apart, the largest; the median of three starts;
//   - after its first answer (a mention answered, then settled the same way);
//   - 1,000 turns at once: 1,000 people mention it in the same moment, each turn one tool
//     call (list_dir) and an answer; the figure is the process's peak (VmHWM) over its life,
//     the median of three such bursts, each on a fresh bot (when the collector runs decides
//     the peak, so one burst alone varies by tens of MB), with its CPU time for scale.
//
// The build (bin/build.mjs) is made before the first start, so start-up times are not a
// compile's; it runs in a process of its own either way.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from '../bin/build.mjs';
import { FakeOpenAI, type FakeAnswer } from '../test/fakes/openai-server.js';
import { appMention, eventCallback, SLACK_IDS } from '../test/fakes/slack-payloads.js';
import { sendEvent } from '../test/fakes/slack-signer.js';
import { FakeSlack } from '../test/fakes/slack-server.js';
import { jsonLines } from '../test/support/bot-process.js';
import { slackHttpEnv } from '../test/support/bot-fakes.js';
import { waitFor } from '../test/support/engine-kit.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECRET = 'bench-signing-secret';
const STARTS = 3;
const SETTLE_MS = 2_000;
const SAMPLES = 10;
const SAMPLE_EVERY_MS = 200;
const CONCURRENT_TURNS = 1_000;
const BURSTS = 3;
/** The goals: resident memory idle and at the burst's peak, and the time from `npm start` to taking events. */
const GOALS = { idleMb: 90, startMs: 600, burstPeakMb: 250 };
/** How long one mention may wait for the bot's HTTP answer while 999 others arrive (a busy machine takes its time). */
const SEND_TIMEOUT_MS = 300_000;
/** Left out of the bot's folder: what a developer's checkout may hold that would change the run. */
const NOT_LINKED = new Set(['.env', '.git', 'data', 'workspace', 'mcp.json']);

interface Running {
  npm: ChildProcess;
  /** The bot's own process (npm `exec`s it from its script shell). */
  pid: number;
  port: number;
  startMs: number;
  stdout: () => string;
  stop(): Promise<void>;
}

/** A folder of links to this checkout's files, without a developer's .env, store or workspace. */
async function botFolder(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'bench-process-'));
  for (const entry of await readdir(ROOT))
    if (!NOT_LINKED.has(entry)) await symlink(join(ROOT, entry), join(path, entry));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** `npm start` in `folder` until Slack takes events. */
async function npmStart(folder: string, env: Record<string, string>): Promise<Running> {
  const started = performance.now();
  const npm = spawn('npm', ['start'], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, npm and the bot it execs: a failed run can end both.
    detached: true,
  });
  const killAll = (): void => {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  let stdout = '';
  let stderr = '';
  npm.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  try {
    await waitFor(() => stdout.includes('Slack connector started') || npm.exitCode !== null, 60_000);
  } catch (error) {
    killAll();
    throw error;
  }
  const line = jsonLines(stdout).find((entry) => entry.msg === 'Slack connector started');
  if (!line) {
    killAll();
    throw new Error(`npm start did not start the bot:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
  }
  const pid = Number(line.pid);
  const startMs = performance.now() - started;
  return {
    npm,
    pid,
    port: Number(line.port),
    startMs,
    stdout: () => stdout,
    async stop() {
      // SIGTERM to npm, as a process manager sends it; the bot stops within its own 20 s deadline.
      npm.kill('SIGTERM');
      await exited;
      await waitFor(() => !alive(pid), 30_000).catch(killAll);
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function status(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  if (!kb) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kb[1]) / 1024;
}

/** CPU time (user + system) the process has used so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** After SETTLE_MS, the largest of SAMPLES readings of the process's resident memory. */
async function settledRss(pid: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  let largest = 0;
  for (let i = 0; i < SAMPLES; i++) {
    largest = Math.max(largest, await status(pid, 'VmRSS'));
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
  }
  return largest;
}

/** Each turn: list the workspace, then answer; the state is in the conversation the SDK sends. */
function toolThenAnswer(request: { body: unknown }): FakeAnswer {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.at(-1)?.role === 'tool'
    ? { text: 'Done: the workspace is empty.' }
    : { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] };
}

async function withBot<T>(
  work: (bot: Running, fakes: { slack: FakeSlack; llm: FakeOpenAI }) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const folder = await botFolder();
  const slack = await new FakeSlack().start();
  const llm = await new FakeOpenAI().start();
  let bot: Running | undefined;
  try {
    bot = await npmStart(folder.path, slackHttpEnv({ dir: folder.path, slack, llm }, SECRET, env));
    return await work(bot, { slack, llm });
  } finally {
    await bot?.stop();
    await slack.stop();
    await llm.stop();
    await folder.remove();
  }
}

interface Idle {
  idleMb: number;
  npmMb: number;
  startMs: number;
  firstAnswerMb: number;
}

/** One start: idle, then one mention answered. */
function idleAndFirstAnswer(): Promise<Idle> {
  return withBot(async (bot, { slack }) => {
    const idleMb = await settledRss(bot.pid);
    const npmMb = await status(bot.npm.pid!, 'VmRSS');
    const mention = appMention({ text: 'hello' });
    await sendEvent(`http://127.0.0.1:${bot.port}/slack/events`, SECRET, eventCallback(mention));
    await waitFor(
      () =>
        slack
          .thread(SLACK_IDS.channelId, mention.ts)
          .some((m) => m.user === SLACK_IDS.botUserId && m.text.includes('hello')),
      30_000,
    ).catch((e) => {
      console.log(bot.stdout(), JSON.stringify(slack.calls.map((c) => [c.method, c.args])));
      throw e;
    });
    return { idleMb, npmMb, startMs: bot.startMs, firstAnswerMb: await settledRss(bot.pid) };
  });
}

interface Burst {
  peakMb: number;
  /** From the first mention sent to the last answer seen. */
  ms: number;
  /** The bot's CPU time over its whole life (start-up included). */
  cpuMs: number;
}

/** 1,000 people mention a fresh bot at once; resolves with its peak resident memory, how long all answers took, and its CPU time. */
function concurrentTurns(): Promise<Burst> {
  // Fair use per person is not what is measured: each mention is a different person's anyway.
  return withBot(
    async (bot, { slack, llm }) => {
      llm.answerWith(toolThenAnswer);
      const mentions = Array.from({ length: CONCURRENT_TURNS }, (_, i) =>
        appMention({ text: `list the files, please (${i})`, user: `U0PERSON${String(i).padStart(4, '0')}` }),
      );
      const started = performance.now();
      await Promise.all(
        mentions.map((mention) =>
          sendEvent(`http://127.0.0.1:${bot.port}/slack/events`, SECRET, eventCallback(mention), {
            timeoutMs: SEND_TIMEOUT_MS,
          }),
        ),
      );
      const roots = new Set(mentions.map((mention) => mention.ts));
      const answered = (): number =>
        new Set(
          slack
            .channelMessages(SLACK_IDS.channelId)
            .filter(
              (m) =>
                m.user === SLACK_IDS.botUserId &&
                m.threadTs !== undefined &&
                roots.has(m.threadTs) &&
                m.text.includes('Done: the workspace is empty.'),
            )
            .map((m) => m.threadTs),
        ).size;
      await waitFor(() => answered() === CONCURRENT_TURNS, 600_000);
      const ms = performance.now() - started;
      return { peakMb: await status(bot.pid, 'VmHWM'), ms, cpuMs: await cpuMs(bot.pid) };
    },
    { THREADS_PER_USER: '1000', TURNS_PER_USER_PER_MINUTE: '1000' },
  );
}

export const processSuite: BenchSuite = {
  name: 'process',
  async run(): Promise<BenchRow[]> {
    await build();
    const starts: Idle[] = [];
    for (let i = 0; i < STARTS; i++) starts.push(await idleAndFirstAnswer());
    const bursts: Burst[] = [];
    for (let i = 0; i < BURSTS; i++) bursts.push(await concurrentTurns());
    const list = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');
    return [
      {
        key: 'process.idle_rss_mb',
        value: median(starts.map((s) => s.idleMb)),
        unit: 'MB',
        note: `the bot's resident memory before its first message: npm start, Slack HTTP mode, fake model; largest of ${SAMPLES} samples after ${SETTLE_MS / 1000} s settled; median of ${STARTS} starts (${list(starts.map((s) => s.idleMb))})`,
        goal: GOALS.idleMb,
      },
      {
        key: 'process.rss_after_first_answer_mb',
        value: median(starts.map((s) => s.firstAnswerMb)),
        unit: 'MB',
        note: `the same bots once one mention is answered (the model's SDK and Slack's formatting are loaded by then) (${list(starts.map((s) => s.firstAnswerMb))})`,
      },
      {
        key: 'process.npm_rss_mb',
        value: median(starts.map((s) => s.npmMb)),
        unit: 'MB',
        note: 'npm itself, which stays as the parent of the bot it execs (not counted above)',
      },
      {
        key: 'process.start_ms',
        value: median(starts.map((s) => s.startMs)),
        unit: 'ms',
        note: `npm start → 'Slack connector started', the build already made; median of ${STARTS} (${list(starts.map((s) => s.startMs))})`,
        goal: GOALS.startMs,
      },
      {
        key: 'process.concurrent_1000_peak_rss_mb',
        value: median(bursts.map((b) => b.peakMb)),
        unit: 'MB',
        note: `peak resident memory (VmHWM) of the bot while ${CONCURRENT_TURNS.toLocaleString('en-US')} people mention it at once, each turn a list_dir call then an answer, through Slack and the OpenAI SDK; median of ${BURSTS} bursts on fresh bots (${list(bursts.map((b) => b.peakMb))})`,
        goal: GOALS.burstPeakMb,
      },
      {
        key: 'process.concurrent_1000_ms',
        value: median(bursts.map((b) => b.ms)),
        unit: 'ms',
        note: `the same bursts: first mention sent → all ${CONCURRENT_TURNS.toLocaleString('en-US')} answers at the fake Slack (${list(bursts.map((b) => b.ms))}); the bots' CPU time ${list(bursts.map((b) => b.cpuMs))} ms`,
      },
    ];
  },
};
