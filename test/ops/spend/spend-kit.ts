// Builders for the spend tests: a ledger and its guard on a real backend (SQLite through
// Keyv, or a real redis-server), an injectable clock, and call estimates and usage.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { CallEstimate } from '../../../src/ops/metered-provider.js';
import { OpsBus, type OpsEvent, type Place, type TokenCounts } from '../../../src/ops/ops-events.js';
import { ModelPrices } from '../../../src/ops/pricing.js';
import type { BudgetLimits } from '../../../src/ops/spend/budget-limits.js';
import { BudgetGuard } from '../../../src/ops/spend/budget-guard.js';
import { Periods } from '../../../src/ops/spend/periods.js';
import { KeyvSpendCounters, type SpendCounters } from '../../../src/ops/spend/spend-counters.js';
import { RedisSpendCounters } from '../../../src/ops/spend/redis-spend-counters.js';
import { SpendLedger } from '../../../src/ops/spend/spend-ledger.js';
import { openKeyvStore, type OpenedStore } from '../../../src/store/keyv-factory.js';

export class Clock {
  constructor(public at: number) {}
  readonly now = (): number => this.at;
  advance(ms: number): void {
    this.at += ms;
  }
}

export type Backend = 'sqlite' | 'redis';

/** Opened stores, each closed (and its folder removed) by `close`. */
export class Backends {
  private readonly opened: OpenedStore[] = [];
  private readonly dirs: string[] = [];

  constructor(private readonly redisUrl: () => string) {}

  /** Counters on a fresh SQLite file, or on the shared Redis under a fresh prefix (or `prefix`: another instance of the same bot). */
  async counters(
    backend: Backend,
    clock: Clock,
    prefix = `test-${randomUUID().slice(0, 8)}:{spend}:`,
  ): Promise<{ counters: SpendCounters; prefix: string }> {
    if (backend === 'sqlite') {
      const dir = await mkdtemp(join(tmpdir(), 'spend-'));
      this.dirs.push(dir);
      const opened = await openKeyvStore(`sqlite://${join(dir, 'bot.sqlite')}`);
      this.opened.push(opened);
      return { counters: new KeyvSpendCounters(opened.keyv, clock.now), prefix };
    }
    const opened = await openKeyvStore(this.redisUrl(), 'bot', {});
    this.opened.push(opened);
    return { counters: new RedisSpendCounters(opened.redis!, prefix), prefix };
  }

  async close(): Promise<void> {
    for (const store of this.opened.splice(0)) await store.close();
    for (const dir of this.dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  }
}

export interface GuardKit {
  guard: BudgetGuard;
  ledger: SpendLedger;
  events: OpsEvent[];
  notes: { place: Place; text: string }[];
  bus: OpsBus;
}

export function guardOn(
  counters: SpendCounters,
  clock: Clock,
  limits: BudgetLimits,
  options: {
    prices?: ModelPrices;
    zone?: string;
    holdMs?: number;
    limitsAt?: (place: Place) => BudgetLimits | undefined;
  } = {},
): GuardKit {
  const bus = new OpsBus();
  const events: OpsEvent[] = [];
  bus.add({ handle: (event) => events.push(event) });
  const notes: { place: Place; text: string }[] = [];
  const ledger = new SpendLedger({
    counters,
    prices: options.prices ?? new ModelPrices(),
    periods: new Periods(options.zone ?? 'UTC'),
    now: clock.now,
    limits,
    ...(options.limitsAt ? { limitsAt: options.limitsAt } : {}),
  });
  const guard = new BudgetGuard({
    ledger,
    limits,
    ops: bus,
    notify: (place, text) => void notes.push({ place, text }),
    ...(options.holdMs ? { holdMs: options.holdMs } : {}),
    ...(options.limitsAt ? { limitsAt: options.limitsAt } : {}),
  });
  bus.add(guard);
  return { guard, ledger, events, notes, bus };
}

export function place(sessionId = 's1', channel = 'C1', workspace = 'T1', platform = 'slack'): Place {
  return { sessionId, platform, workspace, channel };
}

export function estimate(
  where: Place,
  requester: string,
  inputTokens: number,
  maxOutputTokens: number,
  model = 'openai:gpt-4.1',
): CallEstimate {
  return { place: where, requester, model, purpose: 'turn', inputTokens, maxOutputTokens };
}

export function tokens(input: number, output: number, extra: Partial<TokenCounts> = {}): TokenCounts {
  return { input, cachedInput: 0, cacheWrite: 0, output, reasoning: 0, ...extra };
}

/** Admit and settle one call with this usage; throws if it was refused. */
export async function spend(
  kit: GuardKit,
  where: Place,
  requester: string,
  used: TokenCounts,
  model = 'openai:gpt-4.1',
): Promise<void> {
  const admission = await kit.guard.admit(estimate(where, requester, 0, 0, model));
  if (!admission.ok) throw new Error(`refused: ${admission.message}`);
  await kit.guard.settle(admission.ticket, used);
}
