// `npm start` as a user runs it: a child process with an environment, its exit code, and
// what it prints. Slack and the model are local fakes.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readdir } from 'node:fs/promises';
import { appMention, eventCallback } from './fakes/slack-payloads.js';
import { sendEvent } from './fakes/slack-signer.js';
import { waitFor } from './support/engine-kit.js';
import { startBotFakes } from './support/bot-fakes.js';
import { tempDir } from './support/test-connector.js';
import { freePort } from './support/loopback-port.js';
import { startCommand } from './support/start-command.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Only the variables a test gives, plus what node needs: the developer's own env must not leak in. */
function run(env: Record<string, string>, cwd: string, args: string[] = []) {
  const { command, args: startArgs } = startCommand(args);
  const child = spawn(command, startArgs, {
    cwd,
    // METRICS_PORT: any free port, so bots of tests running side by side never compete for 9464.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', METRICS_PORT: '0', ...env },
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
    const { output, exited } = run(
      { SLACK_BOT_TOKEN: 'xapp-wrong-kind', PORT: 'eighty', OPENAI_BASE_URL: 'nope' },
      dir.path,
    );
    expect(await exited).toBe(2);
    expect(output.stderr).toMatch(/OPENAI_BASE_URL[\s\S]*SLACK_BOT_TOKEN: must be a bot token[\s\S]*PORT/);
    expect(output.stderr).not.toContain('xapp-wrong-kind');
  });

  it('runs the bot in HTTP mode, and on SIGTERM leaves the running turn for the next start, logs the shutdown and exits 0', async () => {
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
    const port = (
      JSON.parse(output.stdout.split('\n').find((line) => line.includes('Slack connector started'))!) as {
        port: number;
      }
    ).port;
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    const mention = appMention({ text: 'work on something long' });
    await sendEvent(`http://127.0.0.1:${port}/slack/events`, 'secret', eventCallback(mention));
    await waitFor(() => llm.requests.length === 1, 10_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The stalled call was cut off with the process; nothing was recorded as stopped (test/app/deploy-restart.test.ts
    // checks that the turn carries on after the restart).
    await llm.waitForClientClose(0);
    expect(output.stdout).toContain('"msg":"stopping…"');
    expect(output.stdout).toContain('"msg":"stopped"');
    expect(output.stdout + output.stderr).not.toMatch(/xoxb-test-secret-value|sk-test-secret-value/);
    // Node 22.1 and later keep the modules' compiled code for the next start (bin/start.mjs);
    // Node 20 has no such cache. Written at the latest when a bot exits, as this one just did.
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    if (major > 22 || (major === 22 && minor >= 1))
      expect(await readdir(join(process.cwd(), 'dist', '.compile-cache'), { recursive: true })).not.toHaveLength(0);
  });

  it('reports every configuration problem in one run, in words, before creating anything', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const { output, exited } = run(
      {
        MODEL: 'bogus:thing',
        COMPACTION_MODEL: 'anthropic:claude-haiku-4-5',
        OPENAI_BASE_URL: 'localhost:11434',
        SLACK_BOT_TOKEN: 'xoxb-test-secret-value',
        PORT: 'eighty',
        ADMINS: 'alice',
        DISABLED_TOOLS: 'nuke',
      },
      dir.path,
    );
    expect(await exited).toBe(2);
    const lines = output.stderr.trim().split('\n');
    expect(lines[0]).toBe('Invalid configuration:');
    expect(lines.slice(1).map((line) => line.replace(/^ {2}- ([A-Z_]+( or [A-Z_]+)?):.*$/, '$1'))).toEqual([
      'MODEL',
      'OPENAI_BASE_URL',
      'ANTHROPIC_API_KEY',
      'ADMINS',
      'SLACK_APP_TOKEN or SLACK_SIGNING_SECRET',
      'PORT',
      'DISABLED_TOOLS',
    ]);
    expect(output.stderr).toContain('PORT: must be a whole number from 0 to 65535 (got "eighty")');
    expect(output.stderr).not.toMatch(/Invalid input|xoxb-test-secret-value/);
    expect(await readdir(dir.path)).toEqual([]);
  });

  it('a Slack that refuses the token stops the start before the store or the workspace exist', async () => {
    const { dir, slack, llm } = await startBotFakes(cleanups);
    slack.failNext('auth.test', 'invalid_auth');
    const env = {
      MODEL: 'openai:gpt-4.1',
      OPENAI_API_KEY: 'sk-test-secret-value',
      OPENAI_BASE_URL: llm.baseURL,
      SLACK_BOT_TOKEN: 'xoxb-test-secret-value',
      SLACK_APP_TOKEN: 'xapp-test-secret-value',
      SLACK_API_URL: slack.apiUrl,
    };
    const { output, exited } = run(env, dir);
    expect(await exited).toBe(1);
    expect(output.stderr).toContain(`Slack did not accept SLACK_BOT_TOKEN (invalid_auth) at ${slack.apiUrl}auth.test`);
    // The defaults (data/bot.sqlite, ./workspace) are relative to the bot's folder: neither was made.
    expect(await readdir(dir)).toEqual([]);
    expect(output.stdout + output.stderr).not.toMatch(/xoxb-test-secret-value|sk-test-secret-value/);
  });

  it('--check: reachable fakes give one ✓ line per check and exit 0; a closed port exits 1', async () => {
    const { dir, slack, llm } = await startBotFakes(cleanups);
    const env = {
      MODEL: 'openai:gpt-4.1',
      OPENAI_API_KEY: 'sk-test-secret-value',
      OPENAI_BASE_URL: llm.baseURL,
      SLACK_BOT_TOKEN: 'xoxb-test-secret-value',
      SLACK_APP_TOKEN: 'xapp-test-secret-value',
      SLACK_API_URL: slack.apiUrl,
    };
    const reachable = run(env, dir, ['--check']);
    expect(await reachable.exited).toBe(0);
    const lines = reachable.output.stdout.trim().split('\n');
    expect(lines.map((line) => line.split(':')[0])).toEqual([
      '✓ .env',
      '✓ configuration',
      '✓ Slack',
      '✓ model openai',
      '✓ shell sandbox',
      '✓ MCP',
      '✓ metrics',
      'Setup',
      'Ready',
    ]);

    const port = await freePort();
    const unreachable = run({ ...env, SLACK_API_URL: `http://127.0.0.1:${port}/api/` }, dir, ['--check']);
    expect(await unreachable.exited).toBe(1);
    expect(unreachable.output.stdout).toContain(
      `✗ Slack: Could not reach Slack at http://127.0.0.1:${port}/api/auth.test: connect ECONNREFUSED`,
    );
    expect(await readdir(dir)).toEqual([]);
  });
});
