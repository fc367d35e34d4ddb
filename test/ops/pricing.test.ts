// What model calls cost: the built-in table by vendor id, MODEL_PRICES by `provider:model`
// over it, and a model priced nowhere counted in tokens only (named, never guessed).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { BUILT_IN, ModelPrices } from '../../src/ops/pricing.js';

const usage = (model: string, input: number, output: number, cacheRead = 0) => ({ model, input, output, cacheRead });

describe('model prices', () => {
  it('MODEL_PRICES overrides the built-in price of that provider:model, and prices a model the table lacks', () => {
    const prices = new ModelPrices({
      'openai:gpt-4.1': { input: 1, cachedInput: 0.1, output: 4 },
      'openai:llama-3.3-70b': { input: 0, output: 0 },
    });
    expect(prices.priceOf('openai:gpt-4.1')).toEqual({ input: 1, output: 4, cacheRead: 0.1, cacheWrite: 1 });
    // Another provider's name for it is not the operator's entry: the table prices it.
    expect(prices.priceOf('gpt-4.1')).toEqual(BUILT_IN.priceOf('gpt-4.1'));
    expect(prices.estimate([usage('openai:gpt-4.1', 1_000_000, 1_000_000, 1_000_000)]).usd).toBeCloseTo(5.1);
    expect(prices.estimate([usage('openai:llama-3.3-70b', 5_000, 5_000)])).toEqual({ usd: 0, unpriced: [] });
  });

  it('a model priced nowhere is named and leaves the total unknown, however the rest adds up', () => {
    const estimate = BUILT_IN.estimate([usage('openai:gpt-4.1', 1_000_000, 0), usage('openai:my-finetune', 10, 10)]);
    expect(estimate).toEqual({ usd: undefined, unpriced: ['openai:my-finetune'] });
  });

  it('MODEL_PRICES is checked as the configuration is read, every problem named', () => {
    expect(
      loadConfig({ MODEL_PRICES: '{"openai:gpt-4.1": {"input": 2, "cachedInput": 0.5, "output": 8}}' }).MODEL_PRICES,
    ).toEqual({ 'openai:gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 } });
    expect(() => loadConfig({ MODEL_PRICES: 'gpt-4.1=2' })).toThrow(/MODEL_PRICES: must be a JSON object/);
    expect(() => loadConfig({ MODEL_PRICES: '{"gpt-4.1": {"input": 2, "output": 8}}' })).toThrow(
      /each key is provider:model/,
    );
    expect(() => loadConfig({ MODEL_PRICES: '{"openai:gpt-4.1": {"input": -1, "output": 8, "extra": 1}}' })).toThrow(
      /MODEL_PRICES/,
    );
  });
});
