// What model calls cost: a built-in table of list prices for the models the bot knows, and
// the operator's MODEL_PRICES (USD per million tokens, keyed `provider:model`) for the rest,
// which also overrides the table (a negotiated rate, a newer price, a self-hosted model at 0).
// A model with no price anywhere is counted in tokens only: a cost is never guessed.
//
// The idea to hold: usage is summed per model first and priced per model second, because a
// turn can switch models (or compact with a cheaper one) and prices differ by 100×. The engine
// keeps cached tokens apart from `input` (OpenAI's `prompt_tokens` include them; the provider
// subtracts them), so the four counts add up.
import type { Usage } from '../engine/index.js';
import { isDemoModel, parseModelRef } from '../providers/model-ref.js';

/** List prices in USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/**
 * Vendor list prices, standard tier, checked against the vendors' pricing pages in late 2025;
 * update when they change. Keys match by prefix at a `-` boundary, longest first, so
 * "claude-sonnet-4-5-20250929" is priced as "claude-sonnet-4" and "gpt-4o-mini" is not priced as
 * "gpt-4o". OpenAI charges nothing extra to write its cache, so its `cacheWrite` is the input
 * price; Anthropic's is the 5-minute cache write (1.25× input).
 */
const BUILT_IN_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0.4 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0.1 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 2.5 },
  'gpt-4o-2024-05-13': { input: 5, output: 15, cacheRead: 5, cacheWrite: 5 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0.15 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0.25 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0.05 },
  'gpt-5-pro': { input: 15, output: 120, cacheRead: 15, cacheWrite: 15 },
  o3: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 },
  'o3-mini': { input: 1.1, output: 4.4, cacheRead: 0.55, cacheWrite: 1.1 },
  'o3-pro': { input: 20, output: 80, cacheRead: 20, cacheWrite: 20 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 1.1 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  // Opus 4.5 cut the price to a third of Opus 4 / 4.1: the minor version matters here.
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-haiku-4': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
};

const FREE: ModelPrice = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

const PRICE_KEYS = Object.keys(BUILT_IN_PRICES).sort((a, b) => b.length - a.length);

/** MODEL_PRICES as the setting spells it: USD per million tokens; cached input and cache writes default to the input price. */
export interface PriceSetting {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWrite?: number;
}

/** A turn's (or a ledger's) cost: `usd` when every model in it has a price, and the models that have none. */
export interface CostEstimate {
  usd: number | undefined;
  unpriced: string[];
}

export class ModelPrices {
  private readonly overrides = new Map<string, ModelPrice>();

  /** `settings`: MODEL_PRICES, keyed `provider:model` (checked by the configuration). */
  constructor(settings: Readonly<Record<string, PriceSetting>> = {}) {
    for (const [model, price] of Object.entries(settings)) {
      this.overrides.set(model.trim().toLowerCase(), {
        input: price.input,
        output: price.output,
        cacheRead: price.cachedInput ?? price.input,
        cacheWrite: price.cacheWrite ?? price.input,
      });
    }
  }

  /**
   * The price of a model as usage records name it (`openai:gpt-4.1`, `anthropic:claude-haiku-4-5`,
   * a bare id, or a router's `openai/gpt-4o`): the operator's exact entry first, then the
   * built-in table by id (longest prefix at a `-` boundary). Undefined for a model we do not know.
   */
  priceOf(model: string): ModelPrice | undefined {
    const own = this.overrides.get(model.trim().toLowerCase());
    if (own) return own;
    // The built-in scripted model costs nothing: its estimated tokens count, at $0.
    if (isDemoModel(model)) return FREE;
    const id = modelId(model);
    const key = PRICE_KEYS.find((candidate) => id === candidate || id.startsWith(`${candidate}-`));
    return key === undefined ? undefined : BUILT_IN_PRICES[key];
  }

  /** What these calls cost, summed per model. */
  estimate(usages: readonly Usage[]): CostEstimate {
    let total = 0;
    const unpriced: string[] = [];
    for (const [model, sum] of sumPerModel(usages)) {
      const price = this.priceOf(model);
      if (!price) {
        unpriced.push(model);
        continue;
      }
      total +=
        (sum.input * price.input +
          sum.output * price.output +
          sum.cacheRead * price.cacheRead +
          sum.cacheWrite * price.cacheWrite) /
        1_000_000;
    }
    return { usd: unpriced.length === 0 ? total : undefined, unpriced };
  }
}

/** The built-in table alone (no MODEL_PRICES): for code that has no configuration at hand. */
export const BUILT_IN = new ModelPrices();

/** Token counts of several calls, summed per model as the calls name it. */
export type TokenSum = { input: number; output: number; cacheRead: number; cacheWrite: number };

export function sumPerModel(usages: readonly Usage[]): Map<string, TokenSum> {
  const sums = new Map<string, TokenSum>();
  for (const usage of usages) {
    const key = usage.model.trim();
    const sum = sums.get(key) ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    sum.input += usage.input;
    sum.output += usage.output;
    sum.cacheRead += usage.cacheRead ?? 0;
    sum.cacheWrite += usage.cacheWrite ?? 0;
    sums.set(key, sum);
  }
  return sums;
}

/** The vendor's model id: the `provider:` prefix and any router `vendor/` prefix removed, lower case. */
function modelId(model: string): string {
  let id = model.trim();
  try {
    id = parseModelRef(id).model;
  } catch {
    // An empty name: nothing to strip, and it matches no price.
  }
  return id.slice(id.lastIndexOf('/') + 1).toLowerCase();
}
