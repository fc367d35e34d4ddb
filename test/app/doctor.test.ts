// `npm run doctor` as a user reads it: one line per check, against the fake Slack, Discord
// and model servers, and nothing created on disk.
import { chmod, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor, type DoctorOptions } from '../../src/app/doctor.js';
import { openCommandCgroups } from '../../src/sandbox/command-cgroup.js';
import { UNCONFINED_WARNING } from '../../src/sandbox/shell-sandbox.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { DISCORD_IDS } from '../fakes/discord-payloads.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { startBotFakes } from '../support/bot-fakes.js';
import { freePort } from '../support/loopback-port.js';
import { brokenBwrap } from '../support/sandbox-kit.js';

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
    // Any free port: a test never depends on what else this machine runs on 9464.
    METRICS_PORT: '0',
  };
  return { dir, slack, llm, env, envFile: join(dir, '.env') };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The doctor as main.ts runs it, reading `.env` from the test's folder (never the developer's). */
async function doctor(
  env: Record<string, string>,
  options: DoctorOptions = {},
): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runDoctor(env, (line) => lines.push(line), {
    envFile: join(dirname(env.MCP_CONFIG!), '.env'),
    ...options,
  });
  return { code, lines };
}

describe('npm run doctor', () => {
  it('everything reachable: one ✓ line per check, exit 0, and nothing created on disk', async () => {
    const { dir, llm, env } = await setting();
    const { code, lines } = await doctor(env);
    expect(lines).toEqual([
      `✓ .env: none at ${join(dir, '.env')}; the settings come from the environment`,
      '✓ configuration: every variable is valid',
      expect.stringMatching(
        new RegExp(
          `^✓ Slack: SLACK_BOT_TOKEN accepted at ${escape(env.SLACK_API_URL)}auth\\.test \\(bot \\S+ in .+\\)$`,
        ),
      ),
      `✓ model openai:gpt-4.1: ${llm.baseURL}/models lists it`,
      expect.stringMatching(
        /^✓ shell sandbox: shell commands run in a bubblewrap sandbox, no network, as uid \d+ .*; bounds per command: .* \(probe \d+ ms\); the workspace cap \(2,048 MB, WORKSPACE_MAX_MB\) is measured while commands run \(best effort; WORKSPACE_DISKS=off\)$/,
      ),
      `✓ MCP: no servers (${env.MCP_CONFIG})`,
      '✓ metrics: GET /metrics on 127.0.0.1 on a free port (METRICS_PORT=0; the start logs which), this machine only; not on PORT or HEALTH_PORT (set METRICS_TOKEN to scrape them from another host, with the token as a bearer token)',
      `Setup: model openai:gpt-4.1, store ${env.STORE_URL}, workspace ${env.WORKSPACE_DIR}, permission mode interactive`,
      // The last line is the verdict, and reads as one.
      'Ready: all 7 checks passed; npm start would start the bot.',
    ]);
    expect(code).toBe(0);
    // It asked for the model list, with the key, and sent no chat request.
    expect(llm.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models']);
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer sk-test-secret-value');
    expect(await readdir(dir)).toEqual([]);
    // Which memory bound a command gets, as a start would get it, without making a cgroup.
    const memory = openCommandCgroups(64 * 1024 * 1024, { dryRun: true });
    const shellLine = lines.find((line) => line.startsWith('✓ shell sandbox: '))!;
    expect(shellLine).toContain(
      {
        'cgroup v1': 'a memory cgroup per command, cgroup v1',
        'cgroup v2': 'a memory cgroup per command, cgroup v2, delegated to the bot',
        'per process': `no memory cgroup per command: ${memory.missing}`,
      }[memory.kind],
    );
  });

  it("shows paths as they are: the shell's PWD (the folder it runs in) is not a secret, while the keys stay masked", async () => {
    const { dir, env } = await setting();
    // As `npm run doctor` runs it: the shell's environment, PWD and OLDPWD included, beside the settings.
    const { lines } = await doctor(
      { ...env, PWD: dir, OLDPWD: dirname(dir), SSH_AUTH_SOCK: join(dir, 'agent.sock'), DB_PWD: 'hunter2-db-password' },
      { envFile: join(dir, '.env') },
    );
    expect(lines[0]).toBe(`✓ .env: none at ${join(dir, '.env')}; the settings come from the environment`);
    expect(lines.join('\n')).not.toContain('[secret]');
    expect(lines.join('\n')).not.toContain('sk-test-secret-value');
  });

  it('says where /metrics is answered and who may read it: 127.0.0.1 alone without a token; with METRICS_TOKEN, PORT and HEALTH_PORT too; off, nowhere', async () => {
    const { env } = await setting();
    const port = await freePort();
    const metricsLine = async (more: Record<string, string>) =>
      (await doctor({ ...env, METRICS_PORT: String(port), ...more })).lines.find((line) => line.includes(' metrics: '));
    expect(await metricsLine({})).toBe(
      `✓ metrics: GET /metrics on 127.0.0.1:${port}, this machine only; not on PORT or HEALTH_PORT (set METRICS_TOKEN to scrape them from another host, with the token as a bearer token)`,
    );
    // Slack's HTTP mode (no app token) on PORT, and a health port.
    const { SLACK_APP_TOKEN: _socketMode, ...http } = env;
    expect(
      (
        await doctor({
          ...http,
          SLACK_SIGNING_SECRET: 'signing-secret',
          PORT: '3000',
          HEALTH_PORT: '8080',
          METRICS_PORT: String(port),
          METRICS_TOKEN: 'metrics-token-0123456789abcdef',
        })
      ).lines.find((line) => line.includes(' metrics: ')),
    ).toBe(
      `✓ metrics: GET /metrics only with METRICS_TOKEN as a bearer token, on 127.0.0.1:${port} and on PORT 3000 (Slack's HTTP mode) and HEALTH_PORT 8080`,
    );
    expect(await metricsLine({ METRICS: 'off' })).toBe('✓ metrics: off (METRICS=off): no /metrics anywhere');
  });

  it('a METRICS_PORT that something holds is ✗: a start would stop there', async () => {
    const { env } = await setting();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const port = (holder.address() as AddressInfo).port;
    const { code, lines } = await doctor({ ...env, METRICS_PORT: String(port) });
    expect(lines.find((line) => line.includes(' metrics: '))).toMatch(
      new RegExp(
        `^✗ metrics: .*; but 127\\.0\\.0\\.1:${port} is taken now .*a start would stop there\\. Set METRICS_PORT to a free port \\(0: any\\)$`,
      ),
    );
    expect(code).toBe(1);
  });

  it('a model the server does not list is a warning, not a failure', async () => {
    const { env } = await setting();
    const { code, lines } = await doctor({ ...env, MODEL: 'openai:gpt-nope' });
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^! model openai:gpt-nope: reachable at .*\/models, but its 3 listed models do not include "gpt-nope": check the name$/,
      ),
    );
    expect(lines.at(-1)).toBe('Ready, with 1 warning (! above): npm start would start the bot.');
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
    expect(lines).toContain(
      `✗ Slack: Could not reach Slack at http://127.0.0.1:${port}/api/auth.test: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(lines).toContain(
      `✗ model anthropic: Anthropic at ${anthropic.baseURL}/v1/models did not accept ANTHROPIC_API_KEY (401: x-api-key header is required)`,
    );
    expect(lines.at(-1)).toBe('Not ready: 2 checks failed (✗ above); fix them and run the check again.');
    expect(code).toBe(1);
  });

  it('Discord refused and the model server down: both named, exit 1', async () => {
    const { env, llm } = await setting();
    const discord = await new FakeDiscord().start();
    cleanups.push(() => discord.stop());
    const modelUrl = llm.baseURL;
    await llm.stop();
    const { code, lines } = await doctor({
      ...env,
      SLACK_BOT_TOKEN: '',
      SLACK_APP_TOKEN: '',
      DISCORD_TOKEN: 'a-wrong-token',
      DISCORD_API_URL: discord.apiUrl,
    });
    expect(lines).toContain(
      `✗ Discord: Discord did not accept DISCORD_TOKEN (401: 401: Unauthorized) at ${discord.apiUrl}/v10/users/@me`,
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^✗ model openai: Could not reach the model server at ${escape(modelUrl)}/models: connect ECONNREFUSED`,
        ),
      ),
    );
    expect(code).toBe(1);
  });

  it('Discord servers: without DISCORD_GUILD_ID a public application is a warning saying what it means and how to close it; "Public Bot" off, or servers listed, is ✓', async () => {
    const { env } = await setting();
    const discord = await new FakeDiscord().start();
    cleanups.push(() => discord.stop());
    const discordOnly = {
      ...env,
      SLACK_BOT_TOKEN: '',
      SLACK_APP_TOKEN: '',
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
    };

    // Discord creates applications public, as the fake's is.
    const open = await doctor(discordOnly);
    expect(open.lines).toContain(
      '! Discord servers: DISCORD_GUILD_ID is not set and the application "Fake Bot" is public: anyone can add this bot to their own server and approve their own commands there (every server it is in counts as home). ' +
        'Set DISCORD_GUILD_ID to your server id (several: comma-separated), and turn off "Public Bot" in the Discord Developer Portal → your application → Bot tab',
    );
    expect(open.code).toBe(0);
    expect(open.lines.at(-1)).toMatch(/^Ready, with \d+ warnings? \(! above\)/);
    expect(discord.rest.callsTo('GET /applications/@me')[0]?.headers.authorization).toBe(`Bot ${discord.token}`);

    discord.rest.botPublic = false;
    const closed = await doctor(discordOnly);
    expect(closed.lines).toContain(
      '✓ Discord servers: DISCORD_GUILD_ID is not set: every server the bot is in counts as home; "Public Bot" is off, so only the application\'s owner can add it to a server',
    );

    discord.rest.botPublic = true;
    const asked = discord.rest.callsTo('GET /applications/@me').length;
    const listed = await doctor({ ...discordOnly, DISCORD_GUILD_ID: `${DISCORD_IDS.guildId},222222222222222222` });
    expect(listed.lines).toContain(
      `✓ Discord servers: home servers ${DISCORD_IDS.guildId}, 222222222222222222 (DISCORD_GUILD_ID): their members are members; in any other server everyone is an outsider`,
    );
    expect(discord.rest.callsTo('GET /applications/@me')).toHaveLength(asked);

    // Discord could not say: a warning that it could not check, never a failure.
    discord.rest.failNext('GET /applications/@me', { status: 500, code: 0, message: 'Internal Server Error' });
    const unknown = await doctor(discordOnly);
    expect(unknown.lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^! Discord servers: DISCORD_GUILD_ID is not set, so every server the bot is in counts as home, and whether the application is public could not be checked \\(GET ${escape(discord.apiUrl)}/v10/applications/@me answered HTTP 500\\)\\. .*"Public Bot"`,
        ),
      ),
    );
    expect(unknown.code).toBe(0);
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
    await writeFile(
      env.MCP_CONFIG,
      JSON.stringify({
        mcpServers: {
          docs: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${DOCS_MCP_TOKEN}' } },
        },
      }),
    );
    const warned = await doctor(env);
    expect(warned.lines).toContain(
      '! MCP: server "docs" not started: headers.Authorization: ${DOCS_MCP_TOKEN} is not set in the environment',
    );
    expect(warned.code).toBe(0);
    await writeFile(env.MCP_CONFIG, '{ "mcpServers": { "docs": { "url": ');
    const failed = await doctor(env);
    expect(failed.lines).toContainEqual(expect.stringMatching(/^✗ MCP: .*mcp\.json is invalid: - not valid JSON/));
    expect(failed.code).toBe(1);
  });

  it('.env readable by others: the warning a start gives, with the fix; once private, a ✓', async () => {
    const { env, envFile } = await setting();
    await writeFile(envFile, 'LOG_LEVEL=info\n', { mode: 0o644 });
    await chmod(envFile, 0o644); // whatever the umask
    const open = await doctor(env);
    expect(open.lines[0]).toBe(
      `! .env: ${envFile} holds the bot's secrets but is readable by every account on this machine (mode 644). Fix: chmod 600 ${envFile}`,
    );
    expect(open.code).toBe(0);
    await chmod(envFile, 0o600);
    const closed = await doctor(env);
    expect(closed.lines[0]).toBe(`✓ .env: ${envFile} is private to its owner (mode 600)`);
    expect(closed.lines.at(-1)).toBe('Ready: all 7 checks passed; npm start would start the bot.');
  });

  it('where bubblewrap cannot run: SHELL_SANDBOX=auto warns that run_shell is not offered, bwrap fails, as a start would; off warns', async () => {
    const { dir, env } = await setting();
    const bwrapPath = await brokenBwrap(cleanups);
    const auto = await doctor(env, { bwrapPath });
    const withheld = auto.lines.find((line) => line.startsWith('! shell sandbox: '));
    expect(withheld).toMatch(
      /^! shell sandbox: run_shell is not offered: the shell sandbox cannot run here: bwrap: setting up uid map: Permission denied\. To fix: install bubblewrap .*SHELL_SANDBOX=off/,
    );
    expect(auto.lines.at(-1)).toBe('Ready, with 1 warning (! above): npm start would start the bot.');
    expect(auto.code).toBe(0);

    const required = await doctor({ ...env, SHELL_SANDBOX: 'bwrap' }, { bwrapPath });
    expect(required.lines).toContainEqual(
      expect.stringMatching(
        /^✗ shell sandbox: SHELL_SANDBOX=bwrap, but the shell sandbox cannot run here: bwrap: setting up uid map: Permission denied/,
      ),
    );
    expect(required.lines.at(-1)).toBe('Not ready: 1 check failed (✗ above); fix it and run the check again.');
    expect(required.code).toBe(1);

    const off = await doctor({ ...env, SHELL_SANDBOX: 'off' }, { bwrapPath });
    expect(off.lines).toContain(`! shell sandbox: ${UNCONFINED_WARNING}`);
    expect(off.code).toBe(0);
    // The probe ran without the workspace: nothing was created for it.
    expect(await readdir(dir)).toEqual([]);
  });

  it("a workspace that holds the bot's own files fails the check, as it stops a start", async () => {
    const { dir, env } = await setting();
    const { code, lines } = await doctor({ ...env, WORKSPACE_DIR: dir });
    expect(lines).toContainEqual(
      expect.stringMatching(/^✗ shell sandbox: WORKSPACE_DIR \(.+\) holds .*the store's folder/),
    );
    expect(code).toBe(1);
  });

  it('a GRANT_ROOTS entry that is not a project folder fails the check, as it stops a start', async () => {
    const { env } = await setting();
    const { code, lines } = await doctor({ ...env, GRANT_ROOTS: '/etc' });
    expect(lines).toContainEqual(
      '✗ shell sandbox: GRANT_ROOTS: /etc: it is in /etc, a system folder, which is never granted',
    );
    expect(code).toBe(1);
  });
});
