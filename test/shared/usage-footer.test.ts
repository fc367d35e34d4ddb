import { describe, expect, it } from 'vitest';
import type { Usage } from '../../src/engine/index.js';
import { BUILT_IN } from '../../src/ops/pricing.js';
import { estimateCostUsd, formatUsage, formatUsd } from '../../connectors/shared/usage-footer.js';

const priceOf = (model: string) => BUILT_IN.priceOf(model);

describe('formatUsage', () => {
  it('a turn of three gpt-4.1 calls shows the summed tokens and the estimated cost', () => {
    const usages: Usage[] = [
      { model: 'openai:gpt-4.1', input: 1000, output: 200, cacheRead: 800 },
      { model: 'openai:gpt-4.1', input: 200, output: 300 },
      { model: 'openai:gpt-4.1', input: 34, output: 67 },
    ];
    // 1,234 × $2 + 567 × $8 + 800 × $0.50, per million tokens.
    expect(formatUsage(usages)).toBe('1,234 in · 567 out · 800 cached · ≈ $0.0074');
  });

  it('prices each model of a turn at its own rate, then sums', () => {
    const usages: Usage[] = [
      { model: 'anthropic:claude-sonnet-4-6', input: 10_000, output: 1000, cacheRead: 50_000, cacheWrite: 2000 },
      { model: 'anthropic:claude-haiku-4-5-20251001', input: 20_000, output: 500 },
    ];
    const sonnet = (10_000 * 3 + 1000 * 15 + 50_000 * 0.3 + 2000 * 3.75) / 1e6;
    const haiku = (20_000 * 1 + 500 * 5) / 1e6;
    expect(estimateCostUsd(usages)).toBeCloseTo(sonnet + haiku, 10);
    expect(formatUsage(usages)).toBe('30,000 in · 1,500 out · 50,000 cached · 2,000 cache write · ≈ $0.0900');
  });

  it('leaves the cost out when a model of the turn has no known price, rather than showing part of the bill', () => {
    const usages: Usage[] = [
      { model: 'openai:gpt-4.1-mini', input: 100, output: 10 },
      { model: 'openai:llama3.1:8b', input: 5000, output: 400 },
    ];
    expect(formatUsage(usages)).toBe('5,100 in · 410 out');
    expect(estimateCostUsd(usages)).toBeUndefined();
  });

  it('says so when a call of the turn was counted by estimate (its server reported no usage)', () => {
    const usages: Usage[] = [
      { model: 'openai:gpt-4.1', input: 1000, output: 100 },
      { model: 'openai:gpt-4.1', input: 1200, output: 40, estimated: true },
    ];
    expect(formatUsage(usages)).toBe(
      '2,200 in · 140 out · ≈ $0.0055 · partly estimated (the model server reported no usage)',
    );
    expect(formatUsage([usages[1]!])).toBe(
      '1,200 in · 40 out · ≈ $0.0027 · estimated (the model server reported no usage)',
    );
  });

  it('shows nothing for a turn without usage', () => {
    expect(formatUsage([])).toBe('');
  });
});

describe('priceOf', () => {
  it('matches by prefix after the provider, at a dash, longest first', () => {
    expect(priceOf('gpt-4.1')).toEqual(priceOf('openai:gpt-4.1-2025-04-14'));
    expect(priceOf('gpt-4.1-mini')!.input).toBe(0.4);
    expect(priceOf('openai:gpt-4o-mini')!.input).toBe(0.15);
    expect(priceOf('gpt-4o')!.input).toBe(2.5);
    expect(priceOf('o3-mini')!.input).toBe(1.1);
    expect(priceOf('o4-mini-2025-04-16')!.output).toBe(4.4);
    expect(priceOf('GPT-5')!.output).toBe(10);
    expect(priceOf('anthropic:claude-opus-4-5')!.input).toBe(5);
    expect(priceOf('anthropic:claude-opus-4-1-20250805')!.input).toBe(15);
    expect(priceOf('claude-opus-4-20250514')!.input).toBe(15);
    expect(priceOf('claude-sonnet-4-20250514')!.input).toBe(3);
    expect(priceOf('claude-3-5-haiku-latest')!.input).toBe(0.8);
    expect(priceOf('openai/gpt-4o')!.input).toBe(2.5);
  });

  it('does not guess: an unknown id, or a known prefix without a dash boundary, has no price', () => {
    expect(priceOf('o3x')).toBeUndefined();
    expect(priceOf('gpt-4.10')).toBeUndefined();
    expect(priceOf('mistral-large')).toBeUndefined();
    expect(priceOf('')).toBeUndefined();
  });
});

describe('formatUsd', () => {
  it('keeps enough digits to say something', () => {
    expect(formatUsd(0.012345)).toBe('$0.0123');
    expect(formatUsd(1.234)).toBe('$1.23');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(0.00001)).toBe('< $0.0001');
    expect(formatUsd(0)).toBe('$0');
  });
});
