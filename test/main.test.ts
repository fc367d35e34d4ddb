// `npm start` as a user runs it: a child process with an environment, its exit code, and
// what it prints. Slack and the model are local fakes.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback } from './fakes/slack-payloads.js';
import { sendEvent } from './fakes/slack-signer.js';
import { waitFor } from './support/engine-kit.js';
import { startBotFakes } from './support/bot-fakes.js';
import { tempDir } from './support/test-connector.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
// Absolute, so the child finds tsx whatever its working directory.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Only the variables a test gives, plus what node needs: the developer's own env must not leak in. */
function run(env: Record<string, string>, cwd: string) {
  const child = spawn(process.execPath, ['--import', TSX, MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, output, exited };
}

describe('npm start', () => {
  it('with nothing configured, says exactly what to set and exits non-zero', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const { output, exited } = run({}, dir.path);
    expect(await exited).toBe(1);
    expect(output.stderr).toMatch(/SLACK_BOT_TOKEN and SLACK_APP_TOKEN[\s\S]*SLACK_SIGNING_SECRET[\s\S]*MODEL/);
  });

  it('reports every malformed variable at once and exits 2', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const { output, exited } = run({ SLACK_BOT_TOKEN: 'xapp-wrong-kind', PORT: 'eighty', OPENAI_BASE_URL: 'nope' }, dir.path);
    expect(await exited).toBe(2);
    expect(output.stderr).toMatch(/OPENAI_BASE_URL[\s\S]*SLACK_BOT_TOKEN: must be a bot token[\s\S]*PORT/);
    expect(output.stderr).not.toContain('xapp-wrong-kind');
  });

  it('runs the bot in HTTP mode, and on SIGTERM stops the running turn, persists and exits 0', async () => {
    const { dir: home, slack, llm } = await startBotFakes(cleanups);
    const dir = { path: home };
    llm.replyStall();
    const { child, output, exited } = run(
      {
        MODEL: 'openai:gpt-4.1',
        OPENAI_API_KEY: 'sk-test-secret-value',
        OPENAI_BASE_URL: llm.baseURL,
        SLACK_BOT_TOKEN: 'xoxb-test-secret-value',
        SLACK_SIGNING_SECRET: 'secret',
        SLACK_API_URL: slack.apiUrl,
        PORT: '0',
        STORE_URL: `sqlite://${join(dir.path, 'data', 'bot.sqlite')}`,
        WORKSPACE_DIR: join(dir.path, 'workspace'),
        LOG_LEVEL: 'info',
      },
      dir.path,
    );
    await waitFor(() => output.stdout.includes('Slack connector started'), 20_000);
    const port = (JSON.parse(output.stdout.split('\n').find((line) => line.includes('Slack connector started'))!) as { port: number }).port;
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    const mention = appMention({ text: 'work on something long' });
    await sendEvent(`http://127.0.0.1:${port}/slack/events`, 'secret', eventCallback(mention));
    await waitFor(() => llm.requests.length === 1, 10_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The stalled call was cut off and the turn was closed as stopped, then persisted.
    await llm.waitForClientClose(0);
    expect(output.stdout + output.stderr).not.toMatch(/xoxb-test-secret-value|sk-test-secret-value/);
  });
});
