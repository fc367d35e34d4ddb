// Where the ledger keeps its counters, behind one small interface with two backends: any
// Keyv store for a single process (SQLite by default; this file), and the cluster's Redis,
// where several instances spend against the same limits (redis-spend-counters.ts).
//
// The ideas to hold:
// - Money is counted in nano-dollars (integers): $0.005 per million tokens is 5 per token,
//   and sums of integers are exact, in JavaScript and in Redis's HINCRBY alike.
// - `reserve` is the only step that decides: it checks every limit a call spends against
//   (spent + reserved + this call's estimate) and reserves the estimate on all of them, or on
//   none. `settle` drops the reservation and adds what was used, in one step, so spend is
//   never in neither place. Here one process holds one mutex around both; in Redis it is one
//   Lua script and one MULTI.
// - A reservation lapses after `holdMs`: a process that dies mid-call leaks nothing for long.
import type Keyv from 'keyv';
import { KeyedMutex } from '../../store/keyed-mutex.js';

/** What one settled call adds to a counter. */
export interface CounterAdd {
  nusd: number;
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
  calls: number;
  /** Calls whose server reported no usage, counted by the bot's estimate (metered-provider.ts). */
  estimated: number;
  /** The model, when it has no price (the counter lists it). */
  unpriced?: string;
}

export interface CounterTotals extends Omit<CounterAdd, 'unpriced'> {
  unpriced: string[];
}

/** One limit a call spends against: the counter, its caps (absent: not limited in that unit), and the call's estimate. */
export interface LimitCheck {
  counter: string;
  capNusd?: number;
  capTokens?: number;
  addNusd: number;
  addTokens: number;
}

export type ReserveResult =
  { ok: true } | { ok: false; index: number; unit: 'usd' | 'tokens'; spentNusd: number; spentTokens: number };

/** A counter a settle adds to, kept `ttlMs` after its last change. */
export interface CounterTarget {
  counter: string;
  ttlMs: number;
}

export interface SpendCounters {
  /** All checks pass and the estimate is reserved on each, or none is and the first failing check is named. */
  reserve(id: string, checks: LimitCheck[], holdMs: number): Promise<ReserveResult>;
  /** Drop reservation `id` from `reserved` and add `add` to each target, in one step; the targets' spent {nusd, tokens} after. */
  settle(
    id: string,
    reserved: string[],
    targets: CounterTarget[],
    add: CounterAdd,
  ): Promise<{ nusd: number; tokens: number }[]>;
  read(counter: string): Promise<CounterTotals>;
  /** True for the first caller only, for `ttlMs` (the 80 % note's once-only claim). */
  claim(key: string, ttlMs: number): Promise<boolean>;
  getValue(key: string): Promise<string | undefined>;
  setValue(key: string, value: string, ttlMs: number): Promise<void>;
  deleteValue(key: string): Promise<void>;
}

/** Every token a call used, priced or not (reasoning is part of output already). */
export function tokensOf(counts: Pick<CounterAdd, 'input' | 'cachedInput' | 'cacheWrite' | 'output'>): number {
  return counts.input + counts.cachedInput + counts.cacheWrite + counts.output;
}

export function emptyTotals(): CounterTotals {
  return {
    nusd: 0,
    input: 0,
    cachedInput: 0,
    cacheWrite: 0,
    output: 0,
    reasoning: 0,
    calls: 0,
    estimated: 0,
    unpriced: [],
  };
}

interface Hold {
  nusd: number;
  tokens: number;
  expires: number;
}

/** A single process's counters in a Keyv store; reservations live in memory (they die with the process). */
export class KeyvSpendCounters implements SpendCounters {
  private readonly mutex = new KeyedMutex();
  private readonly holds = new Map<string, Map<string, Hold>>();

  constructor(
    private readonly keyv: Keyv,
    private readonly now: () => number = Date.now,
    private readonly prefix = 'spend:',
  ) {}

  reserve(id: string, checks: LimitCheck[], holdMs: number): Promise<ReserveResult> {
    return this.mutex.run('spend', async () => {
      const now = this.now();
      for (const [index, check] of checks.entries()) {
        const spent = await this.read(check.counter);
        const held = this.heldOn(check.counter, now);
        const spentTokens = tokensOf(spent);
        if (check.capNusd !== undefined && spent.nusd + held.nusd + check.addNusd > check.capNusd)
          return { ok: false, index, unit: 'usd', spentNusd: spent.nusd, spentTokens };
        if (check.capTokens !== undefined && spentTokens + held.tokens + check.addTokens > check.capTokens)
          return { ok: false, index, unit: 'tokens', spentNusd: spent.nusd, spentTokens };
      }
      for (const check of checks) {
        const holds = this.holds.get(check.counter) ?? new Map<string, Hold>();
        holds.set(id, { nusd: check.addNusd, tokens: check.addTokens, expires: now + holdMs });
        this.holds.set(check.counter, holds);
      }
      return { ok: true };
    });
  }

  settle(
    id: string,
    reserved: string[],
    targets: CounterTarget[],
    add: CounterAdd,
  ): Promise<{ nusd: number; tokens: number }[]> {
    return this.mutex.run('spend', async () => {
      for (const counter of reserved) this.drop(counter, id);
      const after: { nusd: number; tokens: number }[] = [];
      for (const target of targets) {
        const totals = await this.read(target.counter);
        const next: CounterTotals = {
          nusd: totals.nusd + add.nusd,
          input: totals.input + add.input,
          cachedInput: totals.cachedInput + add.cachedInput,
          cacheWrite: totals.cacheWrite + add.cacheWrite,
          output: totals.output + add.output,
          reasoning: totals.reasoning + add.reasoning,
          calls: totals.calls + add.calls,
          estimated: totals.estimated + add.estimated,
          unpriced:
            add.unpriced && !totals.unpriced.includes(add.unpriced)
              ? [...totals.unpriced, add.unpriced]
              : totals.unpriced,
        };
        await this.keyv.set(this.key(target.counter), next, target.ttlMs);
        after.push({ nusd: next.nusd, tokens: tokensOf(next) });
      }
      return after;
    });
  }

  async read(counter: string): Promise<CounterTotals> {
    const stored = (await this.keyv.get<CounterTotals>(this.key(counter))) as CounterTotals | undefined;
    return stored ? { ...emptyTotals(), ...stored } : emptyTotals();
  }

  claim(key: string, ttlMs: number): Promise<boolean> {
    return this.mutex.run('spend', async () => {
      const stored = this.value(`claim:${key}`);
      if ((await this.keyv.get(stored)) !== undefined) return false;
      await this.keyv.set(stored, 1, ttlMs);
      return true;
    });
  }

  async getValue(key: string): Promise<string | undefined> {
    const value = (await this.keyv.get<string>(this.value(key))) as string | undefined;
    return typeof value === 'string' ? value : undefined;
  }

  async setValue(key: string, value: string, ttlMs: number): Promise<void> {
    await this.keyv.set(this.value(key), value, ttlMs);
  }

  async deleteValue(key: string): Promise<void> {
    await this.keyv.delete(this.value(key));
  }

  private heldOn(counter: string, now: number): { nusd: number; tokens: number } {
    const holds = this.holds.get(counter);
    const sum = { nusd: 0, tokens: 0 };
    if (!holds) return sum;
    for (const [id, hold] of holds) {
      if (hold.expires <= now) {
        holds.delete(id);
        continue;
      }
      sum.nusd += hold.nusd;
      sum.tokens += hold.tokens;
    }
    if (holds.size === 0) this.holds.delete(counter);
    return sum;
  }

  private drop(counter: string, id: string): void {
    const holds = this.holds.get(counter);
    holds?.delete(id);
    if (holds?.size === 0) this.holds.delete(counter);
  }

  private key(counter: string): string {
    return `${this.prefix}c:${counter}`;
  }

  private value(key: string): string {
    return `${this.prefix}v:${key}`;
  }
}
