import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('applies defaults and treats blank values as unset', () => {
    expect(loadConfig({ MODEL: '  ', LOG_LEVEL: '' })).toEqual({ MAX_ITERATIONS: 12, LOG_LEVEL: 'info' });
  });

  it('reports every malformed variable in one error', () => {
    try {
      loadConfig({ MAX_ITERATIONS: 'lots', LOG_LEVEL: 'chatty', SLACK_BOT_TOKEN: 'xapp-wrong' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(3);
      expect(problems.join('\n')).toMatch(/MAX_ITERATIONS[\s\S]*LOG_LEVEL[\s\S]*SLACK_BOT_TOKEN: must be a bot token/);
    }
  });
});
