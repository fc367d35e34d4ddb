// The BUDGET_* settings as an operator writes them, the budget day in a time zone (crossing
// midnight and a DST change with an injected instant), and the words a limit is told in.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { limitsFrom, parseLimit, unpricedWarnings } from '../../../src/ops/spend/budget-limits.js';
import {
  durationWords,
  formatUsd,
  pausedWords,
  refusedWords,
  warningWords,
} from '../../../src/ops/spend/budget-words.js';
import { Periods } from '../../../src/ops/spend/periods.js';
import { ModelPrices } from '../../../src/ops/pricing.js';

describe('a limit as the operator writes it', () => {
  it.each([
    ['5', { usd: 5 }],
    ['5.50', { usd: 5.5 }],
    ['$5', { usd: 5 }],
    ['$ 0.25', { usd: 0.25 }],
    ['500000 tokens', { tokens: 500_000 }],
    ['2M tokens', { tokens: 2_000_000 }],
    ['1.5k tokens', { tokens: 1_500 }],
    ['$5, 2M tokens', { usd: 5, tokens: 2_000_000 }],
    ['2m tokens,5', { usd: 5, tokens: 2_000_000 }],
  ])('%s', (text, limit) => {
    expect(parseLimit(text)).toEqual({ ok: true, limit });
  });

  it.each(['five dollars', '$-5', '0', '0 tokens', '$5, $6', '5 tokens, 6 tokens', '5 EUR', ''])(
    'refuses %j',
    (text) => {
      expect(parseLimit(text).ok).toBe(false);
    },
  );

  it('is read by the configuration, and a bad one is reported with the form it wants', () => {
    const config = loadConfig({
      BUDGET_USER_DAILY: '$5',
      BUDGET_CHANNEL_DAILY: '$20, 5M tokens',
      BUDGET_TURN: '200000 tokens',
      BUDGET_TIMEZONE: 'Europe/Paris',
    });
    expect(limitsFrom(config)).toEqual({
      user_daily: { usd: 5 },
      channel_daily: { usd: 20, tokens: 5_000_000 },
      turn: { tokens: 200_000 },
    });
    expect(config.BUDGET_TIMEZONE).toBe('Europe/Paris');
    let problems: string[] = [];
    try {
      loadConfig({ BUDGET_WORKSPACE_DAILY: 'lots', BUDGET_TIMEZONE: 'Mars/Olympus' });
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    expect(problems.find((p) => p.startsWith('BUDGET_WORKSPACE_DAILY'))).toMatch(/USD .*tokens/);
    expect(problems.find((p) => p.startsWith('BUDGET_TIMEZONE'))).toMatch(/time zone/);
  });

  it('warns at start when a USD-only limit meets a model with no price, naming both', () => {
    const prices = new ModelPrices({ 'openai:house-model': { input: 1, output: 2 } });
    const warnings = unpricedWarnings(
      { user_daily: { usd: 5 }, channel_daily: { usd: 5, tokens: 1_000 } },
      ['openai:gpt-4.1', 'openai:llama-local', 'openai:house-model'],
      prices,
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('BUDGET_USER_DAILY');
    expect(warnings[0]).not.toContain('BUDGET_CHANNEL_DAILY');
    expect(warnings[0]).toContain('openai:llama-local');
    expect(warnings[0]).not.toContain('gpt-4.1');
    expect(unpricedWarnings({ user_daily: { usd: 5, tokens: 9 } }, ['openai:llama-local'], prices)).toEqual([]);
    expect(unpricedWarnings({ user_daily: { usd: 5 } }, ['openai:gpt-4.1'], prices)).toEqual([]);
  });
});

describe('the budget day', () => {
  it('in UTC: a day and a month end at midnight UTC', () => {
    const periods = new Periods();
    const late = Date.UTC(2026, 11, 31, 23, 59, 30);
    expect(periods.at(late)).toEqual({
      day: '2026-12-31',
      month: '2026-12',
      dayEndsAt: Date.UTC(2027, 0, 1),
      monthEndsAt: Date.UTC(2027, 0, 1),
    });
    expect(periods.at(late + 60_000).day).toBe('2027-01-01');
  });

  it('in a named zone: local midnight, across a DST change', () => {
    const paris = new Periods('Europe/Paris');
    // 23:30 UTC on 28 March 2026 is 00:30 on the 29th in Paris (UTC+1), the night clocks go forward.
    const at = paris.at(Date.UTC(2026, 2, 28, 23, 30));
    expect(at.day).toBe('2026-03-29');
    // The next local midnight is in summer time (UTC+2): 22:00 UTC on the 29th.
    expect(at.dayEndsAt).toBe(Date.UTC(2026, 2, 29, 22, 0));
    expect(at.monthEndsAt).toBe(Date.UTC(2026, 2, 31, 22, 0));
    const newYork = new Periods('America/New_York');
    expect(newYork.at(Date.UTC(2026, 6, 1, 3, 0)).day).toBe('2026-06-30');
  });

  it('refuses a zone Intl does not know', () => {
    expect(() => new Periods('Nowhere/Atlantis')).toThrow(/BUDGET_TIMEZONE/);
  });

  it('UTC, however written, is the default zone, with days from UTC midnight', () => {
    for (const zone of ['UTC', 'utc']) {
      const at = new Periods(zone).at(Date.UTC(2026, 11, 31, 23, 59));
      expect(at).toEqual({
        day: '2026-12-31',
        month: '2026-12',
        dayEndsAt: Date.UTC(2027, 0, 1),
        monthEndsAt: Date.UTC(2027, 0, 1),
      });
    }
  });
});

describe('the words', () => {
  const now = Date.UTC(2026, 11, 3, 20, 48);
  const resetsAt = Date.UTC(2026, 11, 4);
  it('name the limit, the amounts and the reset time', () => {
    expect(
      pausedWords({ limit: 'channel_daily', unit: 'usd', cap: 5, spent: 5.02, estimate: 0.3, resetsAt }, now),
    ).toBe(
      "Paused: this channel's daily budget of $5.00 is spent ($5.02 so far; it resets at 00:00 UTC, in 3 h 12 min). An admin can press Continue to let this turn finish.",
    );
    expect(pausedWords({ limit: 'turn', unit: 'tokens', cap: 200_000, spent: 150_000, estimate: 60_000 }, now)).toBe(
      "Paused: this turn's budget of 200,000 tokens would be passed by the next model call (150,000 tokens spent so far, and the call may use up to 60,000 tokens). An admin can press Continue to let this turn finish.",
    );
    expect(refusedWords({ limit: 'user_daily', unit: 'usd', cap: 5, spent: 5, resetsAt }, now)).toBe(
      'Not started: your daily budget of $5.00 is spent ($5.00 so far; it resets at 00:00 UTC, in 3 h 12 min).',
    );
    expect(warningWords({ limit: 'workspace_daily', unit: 'usd', cap: 5, spent: 4.01, resetsAt }, now)).toBe(
      "This workspace's daily budget is 80 % spent ($4.01 of $5.00; it resets at 00:00 UTC, in 3 h 12 min).",
    );
    expect(
      pausedWords(
        { limit: 'channel_daily', unit: 'usd', cap: 5, spent: 5.02, resetsAt: Date.UTC(2026, 11, 3, 22, 0) },
        now,
        'Europe/Paris',
      ),
    ).toContain('it resets at 23:00 Europe/Paris, in 1 h 12 min');
  });

  it('small amounts and short waits stay readable', () => {
    expect(formatUsd(0.0042)).toBe('$0.0042');
    expect(formatUsd(0)).toBe('$0.00');
    expect(durationWords(30_000)).toBe('under a minute');
    expect(durationWords(45 * 60_000)).toBe('45 min');
    expect(durationWords(2 * 3_600_000)).toBe('2 h');
  });
});
