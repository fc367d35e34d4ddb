// What /usage reads: a scope's spend today and this month (src/ops/spend/ keeps it).
import type { TokenCounts } from './ops-events.js';

export interface SpendTotals {
  /** USD of the calls whose model has a price. */
  usd: number;
  /** Every call's tokens, priced or not. */
  tokens: TokenCounts;
  calls: number;
  /** Of those calls, how many were counted by estimate (their server reported no usage). */
  estimatedCalls: number;
  /** Models used in the period that have no price (their calls count in tokens only). */
  unpricedModels: string[];
}

/** A person, a channel or a workspace, on one platform (`id`: the user, channel or workspace id). */
export interface UsageScope {
  kind: 'user' | 'channel' | 'workspace';
  platform: string;
  workspace: string;
  id: string;
}

interface UsageLimitView {
  /** The setting's name, e.g. BUDGET_USER_DAILY. */
  setting: string;
  usd?: number;
  tokens?: number;
  /** When the current period ends (ms since the epoch). */
  resetsAt: number;
}

export interface UsageReport {
  scope: UsageScope;
  today: SpendTotals;
  month: SpendTotals;
  /** The daily limit on this scope, when one is set. */
  limit?: UsageLimitView;
}

export interface SpendReader {
  usage(scope: UsageScope): Promise<UsageReport>;
}
