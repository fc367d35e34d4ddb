// The one-line footer under an answer: what the turn cost in tokens and, for models we know
// the price of, roughly in dollars.
//
// The idea to hold: usage records are summed per model first and priced per model second,
// because a turn can switch models (or compact with a cheaper one) and prices differ by 100×.
// A cost is shown only when every model in the turn has a known price: a partial sum would
// read as the whole bill. The engine keeps cached tokens apart from `input` (OpenAI's
// `prompt_tokens` include them; the provider subtracts them), so the four counts add up.
import type { Usage } from '../../src/engine/index.js';
import { parseModelRef } from '../../src/providers/model-ref.js';

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
export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
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

const PRICE_KEYS = Object.keys(MODEL_PRICES).sort((a, b) => b.length - a.length);

/**
 * The price of a model as usage records name it (`openai:gpt-4.1`, `anthropic:claude-haiku-4-5`,
 * a bare id, or a router's `openai/gpt-4o`), or undefined for a model we do not know.
 */
export function priceOf(model: string): ModelPrice | undefined {
  const id = modelId(model);
  const key = PRICE_KEYS.find((candidate) => id === candidate || id.startsWith(`${candidate}-`));
  return key === undefined ? undefined : MODEL_PRICES[key];
}

/** The turn's estimated cost in USD, or undefined when any model in it has no known price. */
export function estimateCostUsd(usages: readonly Usage[]): number | undefined {
  let total = 0;
  for (const [model, sum] of sumPerModel(usages)) {
    const price = priceOf(model);
    if (!price) return undefined;
    total +=
      (sum.input * price.input + sum.output * price.output + sum.cacheRead * price.cacheRead + sum.cacheWrite * price.cacheWrite) /
      1_000_000;
  }
  return total;
}

/**
 * "1,234 in · 567 out · 800 cached · ≈ $0.0123" for all the turn's model calls. Cache counts
 * appear only when non-zero; the cost only when every model's price is known. "" for no usage.
 */
export function formatUsage(usages: readonly Usage[]): string {
  if (usages.length === 0) return '';
  const totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  for (const sum of sumPerModel(usages).values()) {
    totals.input += sum.input;
    totals.output += sum.output;
    totals.cacheRead += sum.cacheRead;
    totals.cacheWrite += sum.cacheWrite;
  }
  const parts = [`${count(totals.input)} in`, `${count(totals.output)} out`];
  if (totals.cacheRead > 0) parts.push(`${count(totals.cacheRead)} cached`);
  if (totals.cacheWrite > 0) parts.push(`${count(totals.cacheWrite)} cache write`);
  const cost = estimateCostUsd(usages);
  if (cost !== undefined) parts.push(`≈ ${formatUsd(cost)}`);
  return parts.join(' · ');
}

/** Dollars at a precision that still says something: "$0.0123", "$1.23", "< $0.0001". */
export function formatUsd(amount: number): string {
  if (amount === 0) return '$0';
  if (amount < 0.0001) return '< $0.0001';
  if (amount < 1) return `$${amount.toFixed(4)}`;
  return `$${amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

type Sum = { input: number; output: number; cacheRead: number; cacheWrite: number };

function sumPerModel(usages: readonly Usage[]): Map<string, Sum> {
  const sums = new Map<string, Sum>();
  for (const usage of usages) {
    const key = modelId(usage.model);
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

function count(tokens: number): string {
  return Math.round(tokens).toLocaleString('en-US');
}
