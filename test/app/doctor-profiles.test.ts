// `npm run doctor` and the PROFILES file, through the real command (a child process, as
// `npm run doctor` runs it) against the local fakes: every problem of the file (schema and
// checks) on a ✗ line of its own with the file's name, exit 1; a good file is one ✓ line
// with each profile and what it matches; nothing is created on disk.
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBotFakes } from '../support/bot-fakes.js';
import { startCommand } from '../support/start-command.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** `npm run doctor` in `dir`, with only the given environment. */
async function doctor(
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const { command, args } = startCommand(['--check']);
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, lines: stdout.trim().split('\n'), stderr };
}

async function setting(profiles: string | undefined) {
  const { dir, slack, llm } = await startBotFakes(cleanups);
  const home = join(dir, 'bot');
  await mkdir(home);
  const mcpConfig = join(home, 'mcp.json');
  await writeFile(mcpConfig, JSON.stringify({ mcpServers: { github: { url: 'https://mcp.example.com/mcp' } } }));
  const path = join(home, 'profiles.yaml');
  if (profiles !== undefined) await writeFile(path, profiles);
  const env = {
    MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-test-secret-value',
    OPENAI_BASE_URL: llm.baseURL,
    SLACK_BOT_TOKEN: 'xoxb-test-secret-value',
    SLACK_APP_TOKEN: 'xapp-test-secret-value',
    SLACK_API_URL: slack.apiUrl,
    STORE_URL: `sqlite://${join(home, 'data', 'bot.sqlite')}`,
    WORKSPACE_DIR: join(home, 'workspace'),
    MCP_CONFIG: mcpConfig,
    PROFILES: path,
    // The sandbox probe is not this test's subject, and a machine without bubblewrap must pass it.
    SHELL_SANDBOX: 'off',
  };
  return { home, path, env };
}

describe('npm run doctor and PROFILES', () => {
  it('a good file: one ✓ line with each profile and what it matches, exit 0, nothing created', async () => {
    const { home, path, env } = await setting(
      [
        'profiles:',
        '  - name: ops',
        '    match: { slackChannel: C0OPS }',
        '    tools: [read_file, run_shell, github]',
        '    shellAllowlist: [git status, git log *]',
        '  - name: private',
        '    match: { slackTeam: T0TEAM, dm: true }',
        '    model: openai:gpt-4.1-mini',
        '  - name: guild',
        '    match: { discordGuild: [G1, G2] }',
        '',
      ].join('\n'),
    );
    const { code, lines } = await doctor(env, home);
    expect(lines).toContain(
      `✓ PROFILES: 3 profiles in ${path}: ops (Slack channel C0OPS); private (DMs in Slack workspace T0TEAM); guild (Discord servers G1, G2)`,
    );
    expect(lines.at(-1)).toMatch(/^Ready/);
    expect(code).toBe(0);
    expect((await readdir(home)).sort()).toEqual(['mcp.json', 'profiles.yaml']);
  }, 60_000);

  it('a broken file: every problem at once, schema and checks, each naming the file and the profile; exit 1', async () => {
    const { home, path, env } = await setting(
      [
        'profiles:',
        '  - name: ops',
        '    match: { slackChannel: C0OPS }',
        '    tools: [read_file, no_such_tool, gitlab__create_issue]',
        '    model: anthropic:claude-sonnet-4-6',
        '    models: [openai:gpt-4.1, "anthropic:"]',
        '    shellAllowlist: ["git status && rm -rf /"]',
        '  - name: support',
        '    match: { slackChanel: C0SUP }',
        '    workspace: { folder: ../x }',
        '  - name: ops',
        '    match: { dm: true }',
        // A channel's name where its id belongs, and a tool that does not exist: both in this one round.
        '  - name: lobby',
        '    match: { slackChannel: "#lobby" }',
        '    tools: [nope_lobby]',
        '',
      ].join('\n'),
    );
    const { code, lines } = await doctor(env, home);
    const profileLines = lines.filter((line) => line.startsWith('✗ PROFILES: '));
    expect(profileLines).toEqual([
      `✗ PROFILES: ${path}: profile "support": match: unknown key "slackChanel"`,
      // A match left with no known key says which keys there are.
      `✗ PROFILES: ${path}: profile "support": match: names no place: give slackChannel, slackTeam, discordChannel, discordGuild, dm: true or playground: true`,
      `✗ PROFILES: ${path}: profile "support": workspace.folder: must stay inside WORKSPACE_DIR (no . or .. parts)`,
      `✗ PROFILES: ${path}: profile "lobby": match.slackChannel: "#lobby" is a channel's name: slackChannel wants the channel's id, C… (in Slack: the channel's name → About, at the bottom)`,
      `✗ PROFILES: ${path}: profile "ops": name: "ops" is used by two profiles`,
      expect.stringMatching(
        new RegExp(
          `^✗ PROFILES: ${escape(path)}: profile "ops": tools: "no_such_tool" is neither a tool nor an MCP server \\(tools: ask_user, .*run_shell.*; MCP servers: github\\)$`,
        ),
      ),
      `✗ PROFILES: ${path}: profile "ops": tools: "gitlab__create_issue" names the MCP server "gitlab", which the MCP config (MCP_CONFIG) does not have (it has: github)`,
      `✗ PROFILES: ${path}: profile "ops": model: "anthropic:claude-sonnet-4-6": it uses Anthropic, and ANTHROPIC_API_KEY is not set (set it; or ANTHROPIC_BASE_URL for a server that needs none)`,
      `✗ PROFILES: ${path}: profile "ops": models: "anthropic:": "anthropic:" names a provider but no model (e.g. anthropic:<model id>)`,
      `✗ PROFILES: ${path}: profile "ops": shellAllowlist: invalid shell allow-list entry "git status && rm -rf /": it contains "&" (background job or &&)`,
      expect.stringMatching(
        new RegExp(
          `^✗ PROFILES: ${escape(path)}: profile "lobby": tools: "nope_lobby" is neither a tool nor an MCP server`,
        ),
      ),
    ]);
    expect(lines.at(-1)).toMatch(/^Not ready: 11 checks failed/);
    expect(code).toBe(1);
  }, 60_000);

  it('a file that is not there, or not YAML: a ✗ line that says so', async () => {
    const missing = await setting(undefined);
    const gone = await doctor(missing.env, missing.home);
    expect(gone.lines).toContain(`✗ PROFILES: ${missing.path}: the file ${missing.path} does not exist`);
    expect(gone.code).toBe(1);

    const garbled = await setting('profiles:\n  - name: ops\n   match: [\n');
    const bad = await doctor(garbled.env, garbled.home);
    expect(bad.lines.filter((line) => line.startsWith('✗ PROFILES: '))).toEqual([
      expect.stringMatching(new RegExp(`^✗ PROFILES: ${escape(garbled.path)}: not valid YAML or JSON at line \\d+: `)),
    ]);
    expect(bad.code).toBe(1);
  }, 60_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
