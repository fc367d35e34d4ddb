// The spend ledger and its limits, assembled from the settings (core.ts calls this once):
// counters on the cluster's Redis when instances share one, else in the store's Keyv.
//
// The guard is made whether or not a limit is set: it is also what records every settled
// call in the ledger (with no limit its admission is a no-op without a store trip).
import type { Redis } from 'ioredis';
import type Keyv from 'keyv';
import type { EngineLogger } from '../../engine/index.js';
import type { OpsBus, Place } from '../ops-events.js';
import type { ModelPrices } from '../pricing.js';
import { limitsFrom, limitsWith, unpricedWarnings, type BudgetSettings, type PlaceBudgets } from './budget-limits.js';
import { BudgetGuard } from './budget-guard.js';
import { Periods } from './periods.js';
import { KeyvSpendCounters } from './spend-counters.js';
import { RedisSpendCounters } from './redis-spend-counters.js';
import { SpendLedger } from './spend-ledger.js';

export interface SpendSettings extends BudgetSettings {
  BUDGET_TIMEZONE?: string;
  MODEL?: string;
  MODELS?: string;
  COMPACTION_MODEL?: string;
}

export interface SpendSetupOptions {
  keyv: Keyv;
  /** Cluster mode: the Redis the instances share (limits hold across them). */
  redis?: Redis;
  prices: ModelPrices;
  ops: OpsBus;
  notify?: (place: Place, text: string) => Promise<void>;
  /** A place's own limits (its profile's `budgets`), each replacing the environment's; read at each decision (no I/O). */
  budgetsAt?: (place: Place) => PlaceBudgets | undefined;
  logger?: EngineLogger;
  now?: () => number;
}

export interface SpendSetup {
  ledger: SpendLedger;
  guard: BudgetGuard;
  /** For the start-up warnings: a USD-only limit and a model with no price. */
  warnings: string[];
}

export function spendFrom(settings: SpendSettings, options: SpendSetupOptions): SpendSetup {
  const limits = limitsFrom(settings);
  const now = options.now ?? Date.now;
  const counters = options.redis ? new RedisSpendCounters(options.redis) : new KeyvSpendCounters(options.keyv, now);
  const budgetsAt = options.budgetsAt;
  const limitsAt = budgetsAt ? (place: Place) => limitsWith(limits, budgetsAt(place)) : undefined;
  const ledger = new SpendLedger({
    counters,
    prices: options.prices,
    periods: new Periods(settings.BUDGET_TIMEZONE ?? 'UTC'),
    now,
    limits,
    ...(limitsAt ? { limitsAt } : {}),
  });
  const guard = new BudgetGuard({
    ledger,
    limits,
    ...(limitsAt ? { limitsAt } : {}),
    ops: options.ops,
    ...(options.notify ? { notify: options.notify } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const models = [settings.MODEL, settings.COMPACTION_MODEL, ...(settings.MODELS ?? '').split(',')].filter(
    (model): model is string => !!model && model.trim() !== '' && model.trim() !== 'demo',
  );
  return { ledger, guard, warnings: unpricedWarnings(limits, models, options.prices) };
}
