// `npm run doctor` as a user reads it: one line per check, against the fake Slack, Discord
// and model servers, and nothing created on disk.
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/app/doctor.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { startBotFakes } from '../support/bot-fakes.js';
import { freePort } from '../support/loopback-port.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});


async function setting() {
  const { dir, slack, llm } = await startBotFakes(cleanups);
  const env = {
    MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-test-secret-value',
    OPENAI_BASE_URL: llm.baseURL,
    SLACK_BOT_TOKEN: 'xoxb-test-secret-value',
    SLACK_APP_TOKEN: 'xapp-test-secret-value',
    SLACK_API_URL: slack.apiUrl,
    STORE_URL: `sqlite://${join(dir, 'data', 'bot.sqlite')}`,
    WORKSPACE_DIR: join(dir, 'workspace'),
    MCP_CONFIG: join(dir, 'mcp.json'),
  };
  return { dir, slack, llm, env };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function doctor(env: Record<string, string>): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runDoctor(env, (line) => lines.push(line));
  return { code, lines };
}

describe('npm run doctor', () => {
  it('everything reachable: one ✓ line per check, exit 0, and nothing created on disk', async () => {
    const { dir, llm, env } = await setting();
    const { code, lines } = await doctor(env);
    expect(lines).toEqual([
      '✓ configuration: every variable is valid',
      expect.stringMatching(new RegExp(`^✓ Slack: SLACK_BOT_TOKEN accepted at ${escape(env.SLACK_API_URL)}auth\\.test \\(bot \\S+ in .+\\)$`)),
      `✓ model openai:gpt-4.1: ${llm.baseURL}/models lists it`,
      `✓ MCP: no servers (${env.MCP_CONFIG})`,
      `Ready: model openai:gpt-4.1, store ${env.STORE_URL}, workspace ${env.WORKSPACE_DIR}, shell sandbox auto, permission mode interactive`,
    ]);
    expect(code).toBe(0);
    // It asked for the model list, with the key, and sent no chat request.
    expect(llm.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models']);
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer sk-test-secret-value');
    expect(await readdir(dir)).toEqual([]);
  });

  it('a model the server does not list is a warning, not a failure', async () => {
    const { env } = await setting();
    const { code, lines } = await doctor({ ...env, MODEL: 'openai:gpt-nope' });
    expect(lines).toContainEqual(expect.stringMatching(/^! model openai:gpt-nope: reachable at .*\/models, but its 3 listed models do not include "gpt-nope": check the name$/));
    expect(code).toBe(0);
  });

  it('Slack unreachable and a refused Anthropic key: ✗ lines with the URL tried, exit 1', async () => {
    const { env } = await setting();
    const anthropic = await new FakeAnthropic().start();
    cleanups.push(() => anthropic.stop());
    const port = await freePort();
    const { code, lines } = await doctor({
      ...env,
      SLACK_API_URL: `http://127.0.0.1:${port}/api/`,
      COMPACTION_MODEL: 'anthropic:claude-haiku-4-5',
      // A proxy URL makes the key optional; this one wants it.
      ANTHROPIC_BASE_URL: anthropic.baseURL,
    });
    expect(lines).toContain(`✗ Slack: Could not reach Slack at http://127.0.0.1:${port}/api/auth.test: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(lines).toContain(`✗ model anthropic: Anthropic at ${anthropic.baseURL}/v1/models did not accept ANTHROPIC_API_KEY (401: x-api-key header is required)`);
    expect(lines.at(-1)).toMatch(/^Not ready: /);
    expect(code).toBe(1);
  });

  it('Discord refused and the model server down: both named, exit 1', async () => {
    const { env, llm } = await setting();
    const discord = await new FakeDiscord().start();
    cleanups.push(() => discord.stop());
    const modelUrl = llm.baseURL;
    await llm.stop();
    const { code, lines } = await doctor({ ...env, SLACK_BOT_TOKEN: '', SLACK_APP_TOKEN: '', DISCORD_TOKEN: 'a-wrong-token', DISCORD_API_URL: discord.apiUrl });
    expect(lines).toContain(`✗ Discord: Discord did not accept DISCORD_TOKEN (401: 401: Unauthorized) at ${discord.apiUrl}/v10/users/@me`);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^✗ model openai: Could not reach the model server at ${escape(modelUrl)}/models: connect ECONNREFUSED`)));
    expect(code).toBe(1);
  });

  it('a broken configuration is listed in full and nothing is tried', async () => {
    const { llm, env } = await setting();
    const { code, lines } = await doctor({ ...env, PORT: 'eighty', ADMINS: 'alice' });
    expect(lines.filter((line) => line.startsWith('✗ configuration: '))).toHaveLength(2);
    expect(llm.requests).toEqual([]);
    expect(code).toBe(1);
  });

  it('an MCP server whose ${VAR} is unset is a warning; a malformed file fails', async () => {
    const { env } = await setting();
    await writeFile(env.MCP_CONFIG, JSON.stringify({ mcpServers: { docs: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${DOCS_MCP_TOKEN}' } } } }));
    const warned = await doctor(env);
    expect(warned.lines).toContain('! MCP: server "docs" not started: headers.Authorization: ${DOCS_MCP_TOKEN} is not set in the environment');
    expect(warned.code).toBe(0);
    await writeFile(env.MCP_CONFIG, '{ "mcpServers": { "docs": { "url": ');
    const failed = await doctor(env);
    expect(failed.lines).toContainEqual(expect.stringMatching(/^✗ MCP: .*mcp\.json is invalid: - not valid JSON/));
    expect(failed.code).toBe(1);
  });
});
