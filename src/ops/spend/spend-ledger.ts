// The spend ledger: which counters a model call adds to (the person, the channel, the
// workspace, the conversation and the model, each per day and per calendar month), what the
// call cost, and what /usage reads back (SpendReader).
//
// The idea to hold: a counter's name holds its period (`d:2026-12-03`, `m:2026-12`), so a new
// day simply starts new counters and the old ones expire by TTL (days after ~40 days, months
// after ~400); nothing is reset at midnight, on any instance.
import type { Place, TokenCounts } from '../ops-events.js';
import type { ModelPrices } from '../pricing.js';
import type { SpendReader, SpendTotals, UsageReport, UsageScope } from '../spend-report.js';
import { LIMIT_SETTINGS, type BudgetLimits } from './budget-limits.js';
import { Periods, type PeriodKeys } from './periods.js';
import {
  tokensOf,
  type CounterAdd,
  type CounterTarget,
  type CounterTotals,
  type SpendCounters,
} from './spend-counters.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const DAY_COUNTER_TTL_MS = 40 * DAY_MS;
const MONTH_COUNTER_TTL_MS = 400 * DAY_MS;
/** A nano-dollar: what the counters count money in. */
export const NANO = 1e9;

export type ScopeKind = 'user' | 'channel' | 'workspace' | 'conversation' | 'model';

/** A scope's id within its kind (a person is one person on one platform's workspace). */
export function scopeId(
  kind: ScopeKind,
  place: Pick<Place, 'platform' | 'workspace' | 'channel' | 'sessionId'>,
  other?: string,
): string {
  switch (kind) {
    case 'user':
      return `${place.platform}:${place.workspace}:${other ?? ''}`;
    case 'channel':
      return `${place.platform}:${place.workspace}:${place.channel}`;
    case 'workspace':
      return `${place.platform}:${place.workspace}`;
    case 'conversation':
      return place.sessionId;
    case 'model':
      return other ?? '';
  }
}

export function dayCounter(kind: ScopeKind, id: string, periods: PeriodKeys): string {
  return `d:${periods.day}|${kind}|${id}`;
}

function monthCounter(kind: ScopeKind, id: string, periods: PeriodKeys): string {
  return `m:${periods.month}|${kind}|${id}`;
}

/** What one call cost, in nano-dollars (undefined: the model has no price). */
function costOf(prices: ModelPrices, model: string, tokens: TokenCounts): number | undefined {
  const price = prices.priceOf(model);
  if (!price) return undefined;
  // USD per million tokens = 1,000 nano-dollars per token per USD.
  return Math.round(
    (tokens.input * price.input +
      tokens.cachedInput * price.cacheRead +
      tokens.cacheWrite * price.cacheWrite +
      tokens.output * price.output) *
      1_000,
  );
}

export interface SpendLedgerOptions {
  counters: SpendCounters;
  prices: ModelPrices;
  periods?: Periods;
  now?: () => number;
  /** For /usage's limit view. */
  limits?: BudgetLimits;
  /** A place's own limits (a profile's budgets, budget-guard.ts `limitsAt`): /usage shows a channel's own. */
  limitsAt?: (place: Place) => BudgetLimits | undefined;
}

export class SpendLedger implements SpendReader {
  readonly counters: SpendCounters;
  readonly prices: ModelPrices;
  readonly periods: Periods;
  readonly now: () => number;
  private readonly limits: BudgetLimits;
  private readonly limitsAt: SpendLedgerOptions['limitsAt'];

  constructor(options: SpendLedgerOptions) {
    this.limitsAt = options.limitsAt;
    this.counters = options.counters;
    this.prices = options.prices;
    this.periods = options.periods ?? new Periods();
    this.now = options.now ?? Date.now;
    this.limits = options.limits ?? {};
  }

  /** The counters a settled call adds to (day and month of each scope). */
  targetsOf(place: Place, requester: string | undefined, model: string, at: PeriodKeys): CounterTarget[] {
    const scopes: [ScopeKind, string][] = [
      ...(requester ? [['user', scopeId('user', place, requester)] as [ScopeKind, string]] : []),
      ['channel', scopeId('channel', place)],
      ['workspace', scopeId('workspace', place)],
      ['conversation', scopeId('conversation', place)],
      ['model', scopeId('model', place, model)],
    ];
    return scopes.flatMap(([kind, id]) => [
      { counter: dayCounter(kind, id, at), ttlMs: DAY_COUNTER_TTL_MS },
      { counter: monthCounter(kind, id, at), ttlMs: MONTH_COUNTER_TTL_MS },
    ]);
  }

  /** What one call adds to its counters. */
  addOf(model: string, tokens: TokenCounts): CounterAdd {
    const nusd = costOf(this.prices, model, tokens);
    return {
      nusd: nusd ?? 0,
      input: tokens.input,
      cachedInput: tokens.cachedInput,
      cacheWrite: tokens.cacheWrite,
      output: tokens.output,
      reasoning: tokens.reasoning,
      calls: 1,
      estimated: tokens.estimated ? 1 : 0,
      ...(nusd === undefined ? { unpriced: model } : {}),
    };
  }

  async usage(scope: UsageScope): Promise<UsageReport> {
    const now = this.now();
    const at = this.periods.at(now);
    const place = { platform: scope.platform, workspace: scope.workspace, channel: scope.id, sessionId: '' };
    const id = scopeId(scope.kind, place, scope.id);
    const [today, month] = await Promise.all([
      this.counters.read(dayCounter(scope.kind, id, at)),
      this.counters.read(monthCounter(scope.kind, id, at)),
    ]);
    const limitName =
      scope.kind === 'user' ? 'user_daily' : scope.kind === 'channel' ? 'channel_daily' : 'workspace_daily';
    // A channel's own limit where its profile sets one; a person's and the workspace's are the environment's (a person's differs by channel).
    const limits = (scope.kind === 'channel' ? this.limitsAt?.(place) : undefined) ?? this.limits;
    const amount = limits[limitName];
    return {
      scope,
      today: totalsOf(today),
      month: totalsOf(month),
      ...(amount ? { limit: { setting: LIMIT_SETTINGS[limitName], ...amount, resetsAt: at.dayEndsAt } } : {}),
    };
  }
}

function totalsOf(counter: CounterTotals): SpendTotals {
  return {
    usd: counter.nusd / NANO,
    tokens: {
      input: counter.input,
      cachedInput: counter.cachedInput,
      cacheWrite: counter.cacheWrite,
      output: counter.output,
      reasoning: counter.reasoning,
    },
    calls: counter.calls,
    estimatedCalls: counter.estimated,
    unpricedModels: [...counter.unpriced].sort(),
  };
}

export { tokensOf };
