// Spend limits per place (a profile's `budgets`): the guard reads a place's own
// limits at each decision (core.ts passes them from the profiles in force), each replacing
// the environment's one of the same name there and nowhere else. With no limit anywhere the
// guard still never goes to the store to admit a call.
import { afterAll, describe, expect, it } from 'vitest';
import type { Place } from '../../../src/ops/ops-events.js';
import { limitsWith, type BudgetLimits, type PlaceBudgets } from '../../../src/ops/spend/budget-limits.js';
import { Backends, Clock, estimate, guardOn, place, spend, tokens } from './spend-kit.js';

const backends = new Backends(() => {
  throw new Error('these tests run on SQLite');
});
afterAll(() => backends.close());

const EVENING = Date.UTC(2026, 11, 3, 20, 48);
const OPS = 'C0OPS';

/** Budgets as core.ts finds them: the ops channel's profile sets some, every other place none. */
const budgetsIn = (budgets: PlaceBudgets) => (env: BudgetLimits) => (where: Place) =>
  limitsWith(env, where.channel === OPS ? budgets : undefined);

describe("a profile's budgets", () => {
  it("a lower channel limit holds in the profile's channel and not in another, where the environment's holds", async () => {
    const clock = new Clock(EVENING);
    const env: BudgetLimits = { channel_daily: { usd: 5 } };
    const kit = guardOn((await backends.counters('sqlite', clock)).counters, clock, env, {
      limitsAt: budgetsIn({ channelDaily: { usd: 1 } })(env),
    });
    const ops = place('s-ops', OPS);
    const general = place('s-general', 'C0GENERAL');
    // $1.20 spent in each ($2 per million input tokens on gpt-4.1).
    await spend(kit, ops, 'U1', tokens(600_000, 0));
    await spend(kit, general, 'U1', tokens(600_000, 0));

    const held = await kit.guard.admit(estimate(ops, 'U1', 10, 10));
    expect(held).toMatchObject({ ok: false, limit: 'channel_daily' });
    expect(held.ok ? '' : held.message).toContain("this channel's daily budget of $1.00 is spent");
    expect(await kit.guard.mayStart(ops, 'U2')).toMatchObject({ ok: false });
    // The other channel is held by BUDGET_CHANNEL_DAILY ($5) only.
    expect((await kit.guard.admit(estimate(general, 'U1', 10, 10))).ok).toBe(true);
    expect(await kit.guard.mayStart(general, 'U2')).toEqual({ ok: true });
    await spend(kit, general, 'U1', tokens(2_000_000, 0)); // $5.20 in all
    expect(await kit.guard.mayStart(general, 'U2')).toMatchObject({ ok: false });
    // /usage shows each channel's own limit.
    const usage = (id: string) => kit.ledger.usage({ kind: 'channel', platform: 'slack', workspace: 'T1', id });
    expect((await usage(OPS)).limit).toMatchObject({ usd: 1 });
    expect((await usage('C0GENERAL')).limit).toMatchObject({ usd: 5, setting: 'BUDGET_CHANNEL_DAILY' });
  });

  it('a profile may set a limit the environment does not (and the 80 % note follows it); a turn limit only its place', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn(
      (await backends.counters('sqlite', clock)).counters,
      clock,
      {},
      { limitsAt: budgetsIn({ userDaily: { tokens: 1_000 }, turn: { tokens: 500 } })({}) },
    );
    const ops = place('s-ops', OPS);
    const general = place('s-general', 'C0GENERAL');
    kit.bus.emit({ type: 'turn_started', at: 0, place: ops, kind: 'run', model: 'openai:gpt-4.1' });
    await spend(kit, ops, 'U1', tokens(400, 10));
    await kit.guard.flush();
    expect(kit.notes.map((note) => [note.place.channel, note.text])).toEqual([
      [OPS, "This turn's budget is 82 % spent (410 tokens of 500 tokens)."],
    ]);
    // The turn's 500 tokens: 410 spent, a call that may use 100 more is held.
    expect(await kit.guard.admit(estimate(ops, 'U1', 50, 50))).toMatchObject({ ok: false, limit: 'turn' });
    // Elsewhere nothing holds: 10,000 tokens pass.
    await spend(kit, general, 'U1', tokens(10_000, 0));
    expect((await kit.guard.admit(estimate(general, 'U1', 5_000, 5_000))).ok).toBe(true);
    expect(kit.notes).toHaveLength(1);
  });

  it('no limit in the environment nor the place: a call is admitted and a turn heard without a store trip', async () => {
    const clock = new Clock(EVENING);
    const { counters } = await backends.counters('sqlite', clock);
    const trips: string[] = [];
    // Our own counters interface, counted (not an SDK): which of its methods the guard calls.
    const counted = new Proxy(counters, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          trips.push(String(name));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const kit = guardOn(counted, clock, {}, { limitsAt: budgetsIn({ channelDaily: { usd: 1 } })({}) });
    const general = place('s-general', 'C0GENERAL');
    kit.bus.emit({ type: 'turn_started', at: 0, place: general, kind: 'run', model: 'openai:gpt-4.1' });
    expect((await kit.guard.admit(estimate(general, 'U1', 10, 10))).ok).toBe(true);
    expect(await kit.guard.mayStart(general, 'U1')).toEqual({ ok: true });
    await kit.guard.flush();
    expect(trips).toEqual([]);
    // In the profile's place the same calls do go to the store.
    expect((await kit.guard.admit(estimate(place('s-ops', OPS), 'U1', 10, 10))).ok).toBe(true);
    expect(trips).toContain('reserve');
  });

  it('limitsWith: each budget given replaces its BUDGET_* setting, the others and the workspace limit stay', () => {
    const env: BudgetLimits = {
      user_daily: { usd: 2 },
      channel_daily: { usd: 5 },
      workspace_daily: { usd: 50 },
      turn: { tokens: 100 },
    };
    expect(limitsWith(env, undefined)).toBeUndefined();
    expect(limitsWith(env, { channelDaily: { usd: 10 } })).toEqual({
      user_daily: { usd: 2 },
      channel_daily: { usd: 10 },
      workspace_daily: { usd: 50 },
      turn: { tokens: 100 },
    });
    expect(limitsWith({}, { turn: { tokens: 7 } })).toEqual({ turn: { tokens: 7 } });
  });
});
