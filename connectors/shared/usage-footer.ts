// The one-line footer under an answer: what the turn cost in tokens and, for models with a
// known price (src/ops/pricing.ts: the built-in table and MODEL_PRICES), roughly in dollars.
// A cost is shown only when every model in the turn has a price: a partial sum would read as
// the whole bill.
import type { Usage } from '../../src/engine/index.js';
import { BUILT_IN, sumPerModel, type ModelPrices } from '../../src/ops/pricing.js';
import { thousands } from '../../src/text/thousands.js';

/**
 * The turn's estimated cost in USD, or undefined when any model in it has no known price.
 * @internal
 */
export function estimateCostUsd(usages: readonly Usage[], prices: ModelPrices = BUILT_IN): number | undefined {
  return prices.estimate(usages).usd;
}

/**
 * "1,234 in · 567 out · 800 cached · ≈ $0.0123" for all the turn's model calls. Cache counts
 * appear only when non-zero; the cost only when every model's price is known; counts the bot
 * estimated (a server that reported none) are said to be. "" for no usage.
 */
export function formatUsage(usages: readonly Usage[], prices: ModelPrices = BUILT_IN): string {
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
  const cost = estimateCostUsd(usages, prices);
  if (cost !== undefined) parts.push(`≈ ${formatUsd(cost)}`);
  // A server that reported no usage: the metered provider counted the call itself (never as 0).
  const estimated = usages.filter((usage) => usage.estimated).length;
  if (estimated > 0)
    parts.push(
      `${estimated === usages.length ? 'estimated' : 'partly estimated'} (the model server reported no usage)`,
    );
  return parts.join(' · ');
}

/**
 * Dollars at a precision that still says something: "$0.0123", "$1.23", "< $0.0001".
 * @internal
 */
export function formatUsd(amount: number): string {
  if (amount === 0) return '$0';
  if (amount < 0.0001) return '< $0.0001';
  if (amount < 1) return `$${amount.toFixed(4)}`;
  const [whole, cents] = amount.toFixed(2).split('.') as [string, string];
  return `$${thousands(Number(whole))}.${cents}`;
}

function count(tokens: number): string {
  return thousands(Math.round(tokens));
}
