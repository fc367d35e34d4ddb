import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('applies defaults and treats blank values as unset', () => {
    expect(loadConfig({ MODEL: '  ', LOG_LEVEL: '' })).toEqual({
      MAX_ITERATIONS: 12,
      LOG_LEVEL: 'info',
      PROVIDER_STALL_TIMEOUT_MS: 60_000,
      COMPACTION_THRESHOLD: 0.8,
      COMPACTION_CAP_TOKENS: 250_000,
    });
  });

  it('reports every malformed variable in one error', () => {
    try {
      loadConfig({ MAX_ITERATIONS: 'lots', LOG_LEVEL: 'chatty', SLACK_BOT_TOKEN: 'xapp-wrong', OPENAI_BASE_URL: 'localhost' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(4);
      expect(problems.join('\n')).toMatch(/OPENAI_BASE_URL: must be a URL[\s\S]*MAX_ITERATIONS[\s\S]*LOG_LEVEL[\s\S]*SLACK_BOT_TOKEN: must be a bot token/);
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
