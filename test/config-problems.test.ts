// Configuration mistakes as a person makes them, each answered in words that name the
// variable and say what to write instead; all of them at once, never one per attempt.
import { describe, expect, it } from 'vitest';
import { ConfigError, discordGuildIds, loadConfig } from '../src/config.js';
import { BUILTIN_TOOL_NAMES, createBuiltinTools } from '../src/tools/index.js';
import { FILE_TOOL_NAMES, SCHEDULE_TOOL_NAME } from '../src/config-checks.js';
import { tempDir } from './support/test-connector.js';

/** A Slack setup that is complete but for what a test leaves out or breaks. */
const SLACK = { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_APP_TOKEN: 'xapp-test-token' };
const OPENAI = { MODEL: 'openai:gpt-4.1', OPENAI_API_KEY: 'sk-test-key-value' };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration problems, in words', () => {
  it('a complete setup has none', () => {
    expect(problemsOf({ ...SLACK, ...OPENAI })).toEqual([]);
  });

  it('with a platform set, MODEL is required', () => {
    expect(problemsOf({ ...SLACK, OPENAI_API_KEY: 'sk-test-key-value' })).toEqual([
      'MODEL: missing (e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-6)',
    ]);
  });

  it('the key of the provider MODEL uses is required', () => {
    expect(problemsOf({ ...SLACK, MODEL: 'openai:gpt-4.1' })).toEqual([
      'OPENAI_API_KEY: missing, and MODEL=openai:gpt-4.1 uses OpenAI (set the key; or OPENAI_BASE_URL for a server that needs none)',
    ]);
  });

  it("so is the key of COMPACTION_MODEL's and each of MODELS' provider, named once per provider", () => {
    const problems = problemsOf({
      ...SLACK,
      ...OPENAI,
      COMPACTION_MODEL: 'claude-haiku-4-5',
      MODELS: 'openai:gpt-4.1, anthropic:claude-sonnet-4-6',
    });
    expect(problems).toEqual([
      'ANTHROPIC_API_KEY: missing, and COMPACTION_MODEL=claude-haiku-4-5, MODELS=anthropic:claude-sonnet-4-6 uses Anthropic (set the key; or ANTHROPIC_BASE_URL for a server that needs none)',
    ]);
  });

  it('a local OpenAI-compatible server (OPENAI_BASE_URL) needs no key', () => {
    expect(problemsOf({ ...SLACK, MODEL: 'llama3.1:8b', OPENAI_BASE_URL: 'http://localhost:11434/v1' })).toEqual([]);
  });

  it('an unknown provider names the known ones', () => {
    expect(problemsOf({ ...SLACK, ...OPENAI, MODEL: 'bogus:thing' })).toEqual([
      'MODEL: unknown provider "bogus" in "bogus:thing" (known providers: openai, anthropic; write provider:model, e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-6; for a local OpenAI-compatible server set OPENAI_BASE_URL)',
    ]);
    expect(problemsOf({ MODELS: 'openai:gpt-4.1, anthropic:' })).toEqual([
      'MODELS: "anthropic:" names a provider but no model (e.g. anthropic:<model id>)',
    ]);
  });

  it('a URL without a scheme says what to write', () => {
    expect(problemsOf({ OPENAI_BASE_URL: 'localhost:11434' })).toEqual([
      'OPENAI_BASE_URL: must be a URL starting with http:// or https://, e.g. http://localhost:11434/v1',
    ]);
    expect(problemsOf({ SLACK_API_URL: 'slack.com/api', DISCORD_API_URL: 'ftp://discord.com/api' })).toEqual([
      'SLACK_API_URL: must be a URL starting with http:// or https://, e.g. https://slack.com/api/',
      'DISCORD_API_URL: must be a URL starting with http:// or https://, e.g. https://discord.com/api',
    ]);
  });

  it('a name in ADMINS is not a Slack member id, and the line says where to copy one', () => {
    const [problem] = problemsOf({ ...SLACK, ...OPENAI, ADMINS: 'alice' });
    expect(problem).toBe(
      "ADMINS: not user ids: alice. Slack member ids look like U012AB3CDE (in Slack: open the person's profile → ⋮ → Copy member ID)",
    );
  });

  it('a Slack id where only Discord runs is not a Discord user id', () => {
    const problems = problemsOf({
      DISCORD_TOKEN: 'discord-token',
      ...OPENAI,
      ALLOWED_USERS: 'U0ADA,123456789012345678',
    });
    expect(problems).toEqual([
      'ALLOWED_USERS: not user ids: U0ADA. Discord user ids are 17–20 digits (in Discord: Settings → Advanced → Developer Mode on, then right-click the person → Copy User ID)',
    ]);
  });

  it('with both platforms, either kind of id is accepted', () => {
    expect(
      problemsOf({ ...SLACK, DISCORD_TOKEN: 'discord-token', ...OPENAI, ADMINS: 'U0ADA 123456789012345678' }),
    ).toEqual([]);
  });

  it('DISCORD_GUILD_ID takes one server id or several, comma-separated; every other entry is named, with where to copy an id', () => {
    const discord = { DISCORD_TOKEN: 'discord-token', ...OPENAI };
    expect(problemsOf({ ...discord, DISCORD_GUILD_ID: '123456789012345678' })).toEqual([]);
    expect(problemsOf({ ...discord, DISCORD_GUILD_ID: '123456789012345678, 223456789012345678,' })).toEqual([]);
    expect(
      discordGuildIds(
        loadConfig({ ...discord, DISCORD_GUILD_ID: '123456789012345678, 223456789012345678,123456789012345678' })
          .DISCORD_GUILD_ID,
      ),
    ).toEqual(['123456789012345678', '223456789012345678']);
    expect(problemsOf({ ...discord, DISCORD_GUILD_ID: '123456789012345678,my-server,12345' })).toEqual([
      'DISCORD_GUILD_ID: not server ids: my-server, 12345. Discord server ids are 17–20 digits, comma-separated for several (in Discord: Settings → Advanced → Developer Mode on, then right-click the server → Copy Server ID)',
    ]);
  });

  it("PORT and the other numbers say what they take, not zod's words", () => {
    const problems = problemsOf({
      PORT: 'eighty',
      COMPACTION_THRESHOLD: '3',
      MAX_ITERATIONS: '1.5',
      ANTHROPIC_THINKING_BUDGET: '100',
    });
    expect(problems).toEqual([
      'ANTHROPIC_THINKING_BUDGET: must be a whole number at least 1024 (got "100")',
      'COMPACTION_THRESHOLD: must be a number above 0 and at most 1 (got "3")',
      'MAX_ITERATIONS: must be a whole number above 0 (got "1.5")',
      'PORT: must be a whole number from 0 to 65535 (got "eighty")',
    ]);
    expect(problems.join('\n')).not.toMatch(/Invalid input|expected number|received NaN/);
  });

  it('the media bounds say what they take: a PDF reader needs at least 128 MB, an image limit is a pixel count', () => {
    expect(problemsOf({ ...OPENAI, PDF_MAX_MEMORY_MB: '32', MAX_IMAGE_PIXELS: '40 MP' })).toEqual([
      'MAX_IMAGE_PIXELS: must be a whole number above 0 (got "40 MP")',
      'PDF_MAX_MEMORY_MB: must be a whole number at least 128 (got "32")',
    ]);
    expect(loadConfig({ ...OPENAI, PDF_MAX_MEMORY_MB: '1024', MAX_IMAGE_PIXELS: '100000000' })).toMatchObject({
      PDF_MAX_MEMORY_MB: 1024,
      MAX_IMAGE_PIXELS: 100_000_000,
    });
  });

  it('a choice lists the words it takes', () => {
    expect(problemsOf({ LOG_FORMAT: 'fancy', PERMISSION_MODE: 'yolo' })).toEqual([
      'PERMISSION_MODE: must be one of interactive, auto, read-only (got "yolo")',
      'LOG_FORMAT: must be one of json, pretty (got "fancy")',
    ]);
  });

  it('Slack needs its second token (the existing check)', () => {
    expect(problemsOf({ SLACK_BOT_TOKEN: 'xoxb-test-token', ...OPENAI })).toEqual([
      'SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: set one (Socket Mode, or HTTP mode with a public URL)',
    ]);
  });

  it('a STORE_URL scheme no backend opens is caught before the start', () => {
    expect(problemsOf({ STORE_URL: 'sqlit://data/bot.sqlite' })).toEqual([
      'STORE_URL: unsupported scheme "sqlit://" (use sqlite://, memory://, redis://, postgresql://, mysql:// or mongodb://)',
    ]);
  });

  it("DISABLED_TOOLS takes built-in tool names only (and the files room's attach_file, the schedules room's schedule_task), and lists them", () => {
    expect(problemsOf({ DISABLED_TOOLS: 'run_shell, fetch_url, attach_file, schedule_task' })).toEqual([]);
    // The names are the registry's (src/tools/builtin-tools.ts), never typed here: adding a
    // tool as CONTRIBUTING.md says must not break this test.
    expect(problemsOf({ DISABLED_TOOLS: 'run_shell,shell' })).toEqual([
      `DISABLED_TOOLS: unknown tool shell (the built-in tools are ${[...BUILTIN_TOOL_NAMES, ...FILE_TOOL_NAMES, SCHEDULE_TOOL_NAME].join(', ')})`,
    ]);
    expect(BUILTIN_TOOL_NAMES).toContain('run_shell');
  });

  it('the tool names DISABLED_TOOLS accepts are the tools a session gets', async () => {
    const dir = await tempDir();
    try {
      const builtin = createBuiltinTools({ workspaceDir: dir.path });
      // Each registry key is its tool's own name, in the order the model is offered them.
      expect(builtin.tools.map((tool) => tool.name)).toEqual([...BUILTIN_TOOL_NAMES]);
      await builtin.dispose();
    } finally {
      await dir.remove();
    }
  });

  it('every problem at once, in the order the variables are declared', () => {
    const problems = problemsOf({
      MODEL: 'bogus:thing',
      COMPACTION_MODEL: 'anthropic:claude-haiku-4-5',
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_API_URL: 'localhost:3000',
      PORT: 'eighty',
      ADMINS: 'alice',
      DISABLED_TOOLS: 'nuke',
      STORE_URL: 'foo://x',
    });
    expect(problems.map((problem) => problem.split(':')[0])).toEqual([
      'MODEL',
      'ANTHROPIC_API_KEY',
      'STORE_URL',
      'ADMINS',
      'SLACK_APP_TOKEN or SLACK_SIGNING_SECRET',
      'SLACK_API_URL',
      'PORT',
      'DISABLED_TOOLS',
    ]);
  });
});
