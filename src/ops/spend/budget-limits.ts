// The BUDGET_* settings: what each limit is, as the operator wrote it ("$5", "5.50",
// "2M tokens", or both: "$5, 2M tokens"), and what the limits of one call are.
//
// The idea to hold: a USD amount holds priced calls only (a call whose model has no price
// costs nothing in USD), a token amount holds every call; so a model with no price is held
// only by a token amount, and a USD-only limit with such a model configured is worth a
// warning at start (`unpricedWarnings`).
import { z } from 'zod';
import type { BudgetLimitName } from '../ops-events.js';
import type { ModelPrices } from '../pricing.js';

/** One limit: USD (whole dollars and cents), tokens, or both; whichever is reached first holds. */
export interface LimitAmount {
  usd?: number;
  tokens?: number;
}

export type BudgetLimits = Partial<Record<BudgetLimitName, LimitAmount>>;

/** The setting behind each limit (named in /usage and in the words). */
export const LIMIT_SETTINGS: Readonly<Record<BudgetLimitName, string>> = {
  user_daily: 'BUDGET_USER_DAILY',
  channel_daily: 'BUDGET_CHANNEL_DAILY',
  workspace_daily: 'BUDGET_WORKSPACE_DAILY',
  turn: 'BUDGET_TURN',
};

const LIMIT_FORMAT =
  'must be an amount in USD ("5", "5.50", "$5") or in tokens ("500000 tokens", "2M tokens"), or one of each comma-separated ("$5, 2M tokens")';

const USD = /^\$?\s*(\d+(?:\.\d+)?)\s*(?:usd)?$/i;
const TOKENS = /^(\d+(?:\.\d+)?)\s*([kmb])?\s*tokens?$/i;
const SCALE: Record<string, number> = { k: 1_000, m: 1_000_000, b: 1_000_000_000 };

/**
 * Parses a BUDGET_* value; undefined with the reason for one that is not an amount.
 * @internal
 */
export function parseLimit(text: string): { ok: true; limit: LimitAmount } | { ok: false; reason: string } {
  const limit: LimitAmount = {};
  const parts = text.split(',').map((part) => part.trim());
  for (const part of parts) {
    const usd = USD.exec(part);
    const tokens = TOKENS.exec(part);
    if (usd) {
      if (limit.usd !== undefined) return { ok: false, reason: 'gives two USD amounts' };
      limit.usd = Number(usd[1]);
      if (!(limit.usd > 0)) return { ok: false, reason: 'must be more than $0' };
    } else if (tokens) {
      if (limit.tokens !== undefined) return { ok: false, reason: 'gives two token amounts' };
      limit.tokens = Math.round(Number(tokens[1]) * (SCALE[(tokens[2] ?? '').toLowerCase()] ?? 1));
      if (!(limit.tokens > 0)) return { ok: false, reason: 'must be more than 0 tokens' };
    } else {
      return { ok: false, reason: LIMIT_FORMAT };
    }
  }
  return { ok: true, limit };
}

/** The zod schema of one BUDGET_* setting (config.ts). */
export const limitSetting = z.string().transform((text, context): LimitAmount => {
  const parsed = parseLimit(text);
  if (!parsed.ok) {
    context.addIssue({
      code: 'custom',
      message: parsed.reason === LIMIT_FORMAT ? LIMIT_FORMAT : `${parsed.reason} (${LIMIT_FORMAT})`,
    });
    return z.NEVER;
  }
  return parsed.limit;
});

export interface BudgetSettings {
  BUDGET_USER_DAILY?: LimitAmount;
  BUDGET_CHANNEL_DAILY?: LimitAmount;
  BUDGET_WORKSPACE_DAILY?: LimitAmount;
  BUDGET_TURN?: LimitAmount;
}

export function limitsFrom(settings: BudgetSettings): BudgetLimits {
  const limits: BudgetLimits = {};
  for (const [name, setting] of Object.entries(LIMIT_SETTINGS) as [BudgetLimitName, keyof BudgetSettings][]) {
    const amount = settings[setting];
    if (amount && (amount.usd !== undefined || amount.tokens !== undefined)) limits[name] = amount;
  }
  return limits;
}

/** A place's own limits, in a profile's words (its `budgets`): each one given replaces the environment's. */
export interface PlaceBudgets {
  userDaily?: LimitAmount;
  channelDaily?: LimitAmount;
  turn?: LimitAmount;
}

/**
 * The limits that hold where a profile sets `budgets`: each of its limits replaces the
 * environment's one of the same name (a profile may raise a limit as well as lower it), the
 * others (and BUDGET_WORKSPACE_DAILY, which is the workspace's, not a place's) stay.
 * Undefined without budgets: the environment's limits hold.
 */
export function limitsWith(env: BudgetLimits, budgets: PlaceBudgets | undefined): BudgetLimits | undefined {
  if (!budgets) return undefined;
  const limits: BudgetLimits = { ...env };
  for (const [name, amount] of [
    ['user_daily', budgets.userDaily],
    ['channel_daily', budgets.channelDaily],
    ['turn', budgets.turn],
  ] as const) {
    if (amount && (amount.usd !== undefined || amount.tokens !== undefined)) limits[name] = amount;
  }
  return limits;
}

export function hasLimits(limits: BudgetLimits): boolean {
  return Object.keys(limits).length > 0;
}

/**
 * A limit in USD only does not hold a model with no price: say so at start, naming the
 * models (MODEL, MODELS, COMPACTION_MODEL) and the settings.
 */
export function unpricedWarnings(limits: BudgetLimits, models: string[], prices: ModelPrices): string[] {
  const usdOnly = (Object.entries(limits) as [BudgetLimitName, LimitAmount][])
    .filter(([, amount]) => amount.tokens === undefined)
    .map(([name]) => LIMIT_SETTINGS[name]);
  if (usdOnly.length === 0) return [];
  const unpriced = [
    ...new Set(models.map((model) => model.trim()).filter((model) => model && prices.priceOf(model) === undefined)),
  ];
  if (unpriced.length === 0) return [];
  return [
    `${usdOnly.join(', ')} ${usdOnly.length === 1 ? 'is' : 'are'} in USD only, and ${unpriced.join(', ')} ${unpriced.length === 1 ? 'has' : 'have'} no price: calls to ${unpriced.length === 1 ? 'it' : 'them'} are not held by ${usdOnly.length === 1 ? 'that limit' : 'those limits'}. Give ${unpriced.length === 1 ? 'it' : 'them'} a price in MODEL_PRICES, or add a token amount (e.g. "$5, 2M tokens").`,
  ];
}
