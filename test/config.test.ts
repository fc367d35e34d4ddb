import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

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
      WORKSPACE_DIR: './workspace',
      ALLOWED_USERS: '*',
      PERMISSION_MODE: 'interactive',
      GRANT_SCOPE: 'thread',
      SHELL_TIMEOUT_MS: 120_000,
      SHELL_SANDBOX: 'auto',
      SHELL_NETWORK: false,
      FETCH_ALLOW_PRIVATE: false,
      MCP_CONFIG: './mcp.json',
      PORT: 3000,
      PLAYGROUND_PORT: 0,
      CLUSTER_LEASE_MS: 15_000,
      CLUSTER_SWEEP_MS: 2_000,
      LOG_LEVEL: 'info',
      PROVIDER_STALL_TIMEOUT_MS: 60_000,
      COMPACTION_THRESHOLD: 0.8,
      COMPACTION_CAP_TOKENS: 250_000,
    });
  });

  it('SHELL_SANDBOX and SHELL_NETWORK take only their words', () => {
    expect(loadConfig({ SHELL_SANDBOX: 'off', SHELL_NETWORK: 'on' })).toMatchObject({ SHELL_SANDBOX: 'off', SHELL_NETWORK: true });
    expect(() => loadConfig({ SHELL_SANDBOX: 'docker' })).toThrow(/SHELL_SANDBOX/);
    expect(() => loadConfig({ SHELL_NETWORK: 'yes please' })).toThrow(/SHELL_NETWORK/);
  });

  it('reports every malformed variable in one error', () => {
    try {
      loadConfig({ MAX_ITERATIONS: 'lots', LOG_LEVEL: 'chatty', ANTHROPIC_THINKING_BUDGET: '100', OPENAI_BASE_URL: 'localhost' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(4);
      expect(problems.join('\n')).toMatch(/OPENAI_BASE_URL: must be a URL[\s\S]*ANTHROPIC_THINKING_BUDGET[\s\S]*MAX_ITERATIONS[\s\S]*LOG_LEVEL/);
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
  it('lists exactly the variables the configuration reads, and parses as a valid configuration', async () => {
    const { readFile } = await import('node:fs/promises');
    const { parseEnv } = await import('node:util');
    const { ConfigSchema } = await import('../src/config.js');
    const example = parseEnv(await readFile(new URL('../.env.example', import.meta.url), 'utf8'));
    expect(Object.keys(example).sort()).toEqual(Object.keys(ConfigSchema.shape).sort());
    expect(() => loadConfig(example)).not.toThrow();
  });
});
