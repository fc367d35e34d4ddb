import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { ConfigError, ConfigSchema, configStartProblems, loadConfig } from '../src/config.js';
import { STORE_PACKAGES } from '../src/store/keyv-factory.js';

describe('configuration', () => {
  it('applies defaults and treats blank values as unset', () => {
    expect(loadConfig({ MODEL: '  ', LOG_LEVEL: '' })).toEqual({
      MAX_ITERATIONS: 12,
      MAX_TOOL_CALLS_PER_RESPONSE: 20,
      MAX_QUEUED_INPUTS: 20,
      MAX_QUEUED_BYTES: 262_144,
      TURNS_PER_USER_PER_MINUTE: 10,
      THREADS_PER_USER: 3,
      MAX_CONCURRENT_MODEL_CALLS: 8,
      MAX_LIVE_SESSIONS: 500,
      SLACK_CALLS_PER_THREAD: 3,
      STORE_URL: 'sqlite://data/bot.sqlite',
      RETENTION_DAYS: 30,
      AUDIT_RETENTION_DAYS: 90,
      WORKSPACE_DIR: './workspace',
      WORKSPACE_MAX_MB: 2048,
      WORKSPACE_DISKS: 'off',
      MAX_FILE_BYTES: 20 * 1024 * 1024,
      MAX_FILES_PER_MESSAGE: 10,
      MAX_CONVERSATION_FILE_BYTES: 200 * 1024 * 1024,
      ATTACH_COMPRESSED: 'refuse',
      MAX_IMAGE_PIXELS: 40_000_000,
      PDF_MAX_MEMORY_MB: 512,
      WORKSPACE_SCOPE: 'thread',
      ALLOWED_USERS: '*',
      PERMISSION_MODE: 'interactive',
      GRANT_SCOPE: 'thread',
      SHELL_TIMEOUT_MS: 120_000,
      SHELL_SANDBOX: 'auto',
      SHELL_NETWORK: false,
      SHELL_MAX_MEMORY_MB: 4096,
      SHELL_TMP_MB: 512,
      FETCH_ALLOW_PRIVATE: false,
      MCP_CONFIG: './mcp.json',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: false,
      PORT: 3000,
      METRICS: true,
      PLAYGROUND_PORT: 0,
      CLUSTER_LEASE_MS: 15_000,
      CLUSTER_SWEEP_MS: 2_000,
      LOG_LEVEL: 'info',
      TOOL_DISPLAY: 'cards',
      SCHEDULE_TZ: 'UTC',
      SCHEDULE_GRACE: 15 * 60_000,
      SCHEDULE_MIN_INTERVAL: 5 * 60_000,
      SCHEDULE_WAIT_LIMIT: 60 * 60_000,
      SCHEDULES_PER_USER: 10,
      SCHEDULES_PER_CHANNEL: 25,
      PROVIDER_STALL_TIMEOUT_MS: 60_000,
      COMPACTION_THRESHOLD: 0.8,
      COMPACTION_CAP_TOKENS: 250_000,
    });
  });

  it('SHELL_SANDBOX and SHELL_NETWORK take only their words', () => {
    expect(loadConfig({ SHELL_SANDBOX: 'off', SHELL_NETWORK: 'on' })).toMatchObject({
      SHELL_SANDBOX: 'off',
      SHELL_NETWORK: true,
    });
    expect(() => loadConfig({ SHELL_SANDBOX: 'docker' })).toThrow(/SHELL_SANDBOX/);
    expect(() => loadConfig({ SHELL_NETWORK: 'yes please' })).toThrow(/SHELL_NETWORK/);
  });

  it('reports every malformed variable in one error', () => {
    try {
      loadConfig({
        MAX_ITERATIONS: 'lots',
        LOG_LEVEL: 'chatty',
        ANTHROPIC_THINKING_BUDGET: '100',
        OPENAI_BASE_URL: 'localhost',
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(4);
      expect(problems.join('\n')).toMatch(
        /OPENAI_BASE_URL: must be a URL[\s\S]*ANTHROPIC_THINKING_BUDGET[\s\S]*MAX_ITERATIONS[\s\S]*LOG_LEVEL/,
      );
    }
  });

  it('never echoes a secret value in its errors', () => {
    try {
      loadConfig({ ANTHROPIC_BASE_URL: 'sk-ant-secret-value', COMPACTION_THRESHOLD: '3' });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).message).not.toContain('sk-ant-secret-value');
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });
});

describe('.env.example', () => {
  const text = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
  const example = parseEnv(text);
  /** The settings above the "Optional" line: what the file says a start needs. */
  const needed = Object.keys(parseEnv(text.slice(0, text.search(/^# =+ Optional/m))));
  const filled = (values: Record<string, string>) => ({ ...example, ...values });

  it('lists exactly the variables the configuration reads, and parses as a valid configuration', () => {
    expect(Object.keys(example).sort()).toEqual(Object.keys(ConfigSchema.shape).sort());
    expect(() => loadConfig(example)).not.toThrow();
  });

  it('opens with the few settings a start needs, said to be those, before an "Optional" line', () => {
    expect(text).toMatch(/^# =+ Needed to start\b/m);
    expect(text.search(/^# =+ Optional/m)).toBeGreaterThan(0);
    expect(needed.length).toBeGreaterThan(0);
    expect(needed.length).toBeLessThanOrEqual(8);
  });

  it('filling in only that block, for one model and one platform, makes a configuration that starts', () => {
    const setups: Record<string, string>[] = [
      {
        MODEL: 'openai:gpt-4.1',
        OPENAI_API_KEY: 'sk-test-value',
        SLACK_BOT_TOKEN: 'xoxb-test-value',
        SLACK_APP_TOKEN: 'xapp-test-value',
      },
      {
        MODEL: 'anthropic:claude-sonnet-4-6',
        ANTHROPIC_API_KEY: 'sk-ant-test-value',
        DISCORD_TOKEN: 'discord-test-value',
      },
      {
        MODEL: 'openai:llama3.1:8b',
        OPENAI_BASE_URL: 'http://localhost:11434/v1',
        DISCORD_TOKEN: 'discord-test-value',
      },
    ];
    for (const setup of setups) {
      expect(Object.keys(setup).filter((name) => !needed.includes(name))).toEqual([]);
      expect(configStartProblems(loadConfig(filled(setup)))).toEqual([]);
    }
  });

  it('whatever a start says is missing, the block names it', () => {
    const starts: Record<string, string>[] = [
      { SLACK_BOT_TOKEN: 'xoxb-test-value' },
      { DISCORD_TOKEN: 'discord-test-value', MODEL: 'openai:gpt-4.1' },
      { DISCORD_TOKEN: 'discord-test-value', MODEL: 'claude-sonnet-4-6' },
    ];
    for (const start of starts) {
      let problems: string[] = [];
      try {
        loadConfig(filled(start));
      } catch (error) {
        problems = (error as ConfigError).problems;
      }
      expect(problems.length).toBeGreaterThan(0);
      for (const problem of problems) {
        // "SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: …": one of the variables named is in the block.
        const named = problem.split(':')[0]!.split(' or ');
        expect(
          named.some((name) => needed.includes(name)),
          problem,
        ).toBe(true);
      }
    }
  });

  it('names only store packages the store really loads by URL (Redis is built in)', () => {
    const pages = [
      '../README.md',
      ...readdirSync(new URL('../docs/', import.meta.url))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `../docs/${name}`),
    ];
    const docs = [text, ...pages.map((page) => readFileSync(new URL(page, import.meta.url), 'utf8'))].join('\n');
    const named = new Set([...docs.matchAll(/@keyv\/[a-z0-9-]+/g)].map((match) => match[0]));
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const loadable = new Set([...Object.values(STORE_PACKAGES), ...Object.keys(pkg.dependencies)]);
    expect(named.size).toBeGreaterThan(0);
    expect([...named].filter((name) => !loadable.has(name))).toEqual([]);
  });
});

describe('the agent-surface settings (issue 22)', () => {
  it('reads SUGGESTED_PROMPTS and LOADING_MESSAGES as JSON lists and TOOL_DISPLAY as one of two words', () => {
    const config = loadConfig({
      SUGGESTED_PROMPTS: '[{"title": "Summarise", "message": "Summarise this, with commas, please"}]',
      LOADING_MESSAGES: '["Reading…", "Still on it"]',
      TOOL_DISPLAY: 'compact',
    });
    expect(config.SUGGESTED_PROMPTS).toEqual([{ title: 'Summarise', message: 'Summarise this, with commas, please' }]);
    expect(config.LOADING_MESSAGES).toEqual(['Reading…', 'Still on it']);
    expect(config.TOOL_DISPLAY).toBe('compact');
  });

  it('says what is wrong with each, all at once', () => {
    expect(() =>
      loadConfig({
        SUGGESTED_PROMPTS: 'Summarise, Explain',
        LOADING_MESSAGES: JSON.stringify(Array.from({ length: 11 }, (_, i) => `line ${i}`)),
        TOOL_DISPLAY: 'tiny',
      }),
    ).toThrow(
      /TOOL_DISPLAY: must be one of cards, compact[\s\S]*SUGGESTED_PROMPTS: must be a JSON array[\s\S]*LOADING_MESSAGES: must list at most 10/,
    );
    expect(() => loadConfig({ SUGGESTED_PROMPTS: '[{"title": "Only a title"}]' })).toThrow(
      /SUGGESTED_PROMPTS\.0\.message/,
    );
  });
});
