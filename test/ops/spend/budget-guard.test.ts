// The limits, on SQLite and on a real Redis: checked before each call against spent +
// reserved + the call's estimate, reset at the budget day's midnight (an injected clock),
// the 80 % note told once (once across two instances on one Redis), an admin's allowance
// lasting exactly the turn, a new request past a limit refused, a turn's spend kept across
// a restart, and a reservation that lapses when its caller died.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../../support/redis-server.js';
import { Backends, Clock, estimate, guardOn, place, spend, tokens, type Backend } from './spend-kit.js';
import type { Place } from '../../../src/ops/ops-events.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelPrices } from '../../../src/ops/pricing.js';
import { BudgetGuard } from '../../../src/ops/spend/budget-guard.js';
import { KeyvSpendCounters } from '../../../src/ops/spend/spend-counters.js';
import { SpendLedger } from '../../../src/ops/spend/spend-ledger.js';
import { openKeyvStore } from '../../../src/store/keyv-factory.js';
import { fenceWrites } from '../../../src/store/write-fence.js';
import { memoryLogger } from '../../support/engine-kit.js';

let redis: RedisServer;
const backends = new Backends(() => redis.url);
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await backends.close();
  await redis?.dispose();
});

const EVENING = Date.UTC(2026, 11, 3, 20, 48);

function turnStarted(where: Place, kind: 'run' | 'retry' | 'resume', at = 0) {
  return { type: 'turn_started' as const, at, place: where, kind, model: 'openai:gpt-4.1' };
}

function turnEnded(where: Place, errorKind?: string) {
  return {
    type: 'turn_ended' as const,
    at: 0,
    place: where,
    status: errorKind ? ('error' as const) : ('completed' as const),
    iterations: 1,
    ...(errorKind ? { errorKind } : {}),
  };
}

describe.each<Backend>(['sqlite', 'redis'])('spend limits on %s', (backend) => {
  it('refuse a call whose estimate would pass the limit, naming it and its reset, and start again after midnight', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, { channel_daily: { usd: 5 } });
    const here = place();
    // $4.90 spent ($2 per million input tokens on gpt-4.1).
    await spend(kit, here, 'U1', tokens(2_450_000, 0));
    // The next call may cost $0.002 + $0.08: $4.98, within $5.
    const small = await kit.guard.admit(estimate(here, 'U1', 1_000, 10_000));
    expect(small.ok).toBe(true);
    // Reserved until it settles: a second one of the same size would make $5.06.
    const second = await kit.guard.admit(estimate(here, 'U2', 1_000, 10_000));
    expect(second).toMatchObject({ ok: false, limit: 'channel_daily' });
    expect(second.ok ? '' : second.message).toBe(
      "Paused: this channel's daily budget of $5.00 would be passed by the next model call ($4.90 spent so far, and the call may use up to $0.08; it resets at 00:00 UTC, in 3 h 12 min). An admin can press Continue to let this turn finish.",
    );
    if (small.ok) await kit.guard.settle(small.ticket, tokens(50_000, 5_000)); // $0.14: $5.04 spent
    const after = await kit.guard.admit(estimate(here, 'U1', 10, 10));
    expect(after.ok ? '' : after.message).toContain(
      "this channel's daily budget of $5.00 is spent ($5.04 so far; it resets at 00:00 UTC, in 3 h 12 min)",
    );
    // Another channel of the workspace is not held by this one's limit.
    expect((await kit.guard.admit(estimate(place('s2', 'C2'), 'U1', 10, 10))).ok).toBe(true);
    clock.at = Date.UTC(2026, 11, 4, 0, 0, 1);
    expect((await kit.guard.admit(estimate(here, 'U1', 1_000, 10_000))).ok).toBe(true);
  });

  it('hold a model with no price by a token amount only, and every call by tokens', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {
      user_daily: { usd: 1 },
      workspace_daily: { tokens: 100_000 },
    });
    const here = place();
    // $1 spent by the person: a priced call is refused by the USD amount...
    await spend(kit, here, 'U1', tokens(500_000, 0));
    expect(await kit.guard.admit(estimate(here, 'U1', 10, 10))).toMatchObject({ ok: false, limit: 'user_daily' });
    // ...an unpriced one is not (it costs nothing in USD) but is held by the workspace's tokens.
    expect((await kit.guard.admit(estimate(place('s9'), 'U1', 10, 10, 'openai:llama-local'))).ok).toBe(false);
    const other = guardOn((await backends.counters(backend, clock)).counters, clock, {
      user_daily: { usd: 1 },
      workspace_daily: { tokens: 100_000 },
    });
    await spend(other, here, 'U1', tokens(90_000, 0), 'openai:llama-local');
    const unpriced = await other.guard.admit(estimate(here, 'U1', 5_000, 6_000, 'openai:llama-local'));
    expect(unpriced).toMatchObject({ ok: false, limit: 'workspace_daily' });
    expect(unpriced.ok ? '' : unpriced.message).toContain(
      "this workspace's daily budget of 100,000 tokens would be passed by the next model call (90,000 tokens spent so far",
    );
    expect((await other.guard.admit(estimate(here, 'U1', 4_000, 6_000, 'openai:llama-local'))).ok).toBe(true);
  });

  it('refuse a new request once a limit it spends against is reached, privately, in plain words', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {
      user_daily: { usd: 2 },
      turn: { usd: 0.01 },
    });
    const here = place();
    expect(await kit.guard.mayStart(here, 'U1')).toEqual({ ok: true });
    kit.guard.handle(turnStarted(here, 'run', 1));
    await spend(kit, here, 'U1', tokens(999_999, 0));
    // Just under: a request may still start (the call's own check decides what it may use),
    // and a turn's limit, spent by the last turn, does not hold a new one.
    expect(await kit.guard.mayStart(here, 'U1')).toEqual({ ok: true });
    kit.guard.handle(turnStarted(here, 'run', 2));
    await spend(kit, here, 'U1', tokens(1, 0));
    expect(await kit.guard.mayStart(here, 'U1')).toEqual({
      ok: false,
      reason: 'Not started: your daily budget of $2.00 is spent ($2.00 so far; it resets at 00:00 UTC, in 3 h 12 min).',
    });
    expect(kit.events).toContainEqual(
      expect.objectContaining({ type: 'budget_refused', limit: 'user_daily', what: 'new_request' }),
    );
    // Someone else in the same channel is not held by this person's limit.
    expect(await kit.guard.mayStart(here, 'U2')).toEqual({ ok: true });
  });

  it('tell the thread once per limit and day when 80 % is passed', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {
      channel_daily: { usd: 1 },
      user_daily: { tokens: 10_000_000 },
    });
    const here = place();
    await spend(kit, here, 'U1', tokens(350_000, 0)); // $0.70
    expect(kit.notes).toEqual([]);
    await spend(kit, here, 'U1', tokens(50_000, 0)); // $0.80
    await spend(kit, here, 'U1', tokens(25_000, 0)); // $0.85
    await spend(kit, here, 'U2', tokens(25_000, 0)); // $0.90
    expect(kit.notes).toEqual([
      {
        place: here,
        text: "This channel's daily budget is 80 % spent ($0.80 of $1.00; it resets at 00:00 UTC, in 3 h 12 min).",
      },
    ]);
    clock.at = Date.UTC(2026, 11, 4, 9, 0);
    await spend(kit, here, 'U1', tokens(400_000, 0));
    expect(kit.notes.map((note) => note.text)).toEqual([
      expect.stringContaining('80 %'),
      "This channel's daily budget is 80 % spent ($0.80 of $1.00; it resets at 00:00 UTC, in 15 h).",
    ]);
  });

  it("let an admin's Continue carry the turn past every limit until it ends, recording what it spends", async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, { channel_daily: { usd: 1 } });
    const here = place();
    kit.guard.handle(turnStarted(here, 'run'));
    await spend(kit, here, 'U1', tokens(500_000, 0)); // $1: spent
    expect((await kit.guard.admit(estimate(here, 'U1', 10, 10))).ok).toBe(false);
    kit.guard.handle(turnEnded(here, 'budget'));
    await kit.guard.allowTurn(here, 'ADMIN');
    kit.guard.handle(turnStarted(here, 'retry'));
    await spend(kit, here, 'U1', tokens(100_000, 0));
    await spend(kit, here, 'U1', tokens(100_000, 0));
    // Another thread of the channel is still held.
    expect((await kit.guard.admit(estimate(place('s2'), 'U1', 10, 10))).ok).toBe(false);
    kit.guard.handle(turnEnded(here));
    await kit.guard.flush();
    expect((await kit.guard.admit(estimate(here, 'U1', 10, 10))).ok).toBe(false);
    expect(
      (await kit.ledger.usage({ kind: 'channel', platform: 'slack', workspace: 'T1', id: 'C1' })).today.usd,
    ).toBeCloseTo(1.4, 9);
  });

  it('an allowance ends with a new turn, and outlives a turn end that paused again', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, { channel_daily: { usd: 1 } });
    const here = place();
    await spend(kit, here, 'U1', tokens(500_000, 0));
    await kit.guard.allowTurn(here, 'ADMIN');
    kit.guard.handle(turnEnded(here, 'budget'));
    await kit.guard.flush();
    expect((await kit.guard.admit(estimate(here, 'U1', 10, 10))).ok).toBe(true);
    kit.guard.handle(turnStarted(here, 'run'));
    expect((await kit.guard.admit(estimate(here, 'U1', 10, 10))).ok).toBe(false);
  });

  it("count a turn's spend from its start through retries and across a restart, and a new turn afresh", async () => {
    const clock = new Clock(EVENING);
    const { counters } = await backends.counters(backend, clock);
    const limits = { turn: { tokens: 10_000 } };
    const first = guardOn(counters, clock, limits);
    const here = place();
    first.guard.handle(turnStarted(here, 'run'));
    await spend(first, here, 'U1', tokens(6_000, 0));
    first.guard.handle(turnEnded(here, 'provider'));
    first.guard.handle(turnStarted(here, 'retry'));
    await spend(first, here, 'U1', tokens(3_000, 0));
    await first.guard.flush();
    // A restart: a new guard on the same store resumes the turn, with its 9,000 tokens.
    const second = guardOn(counters, clock, limits);
    second.guard.handle(turnStarted(here, 'resume'));
    const over = await second.guard.admit(estimate(here, 'U1', 500, 1_000));
    expect(over).toMatchObject({ ok: false, limit: 'turn' });
    expect(over.ok ? '' : over.message).toBe(
      "Paused: this turn's budget of 10,000 tokens would be passed by the next model call (9,000 tokens spent so far, and the call may use up to 1,500 tokens). An admin can press Continue to let this turn finish.",
    );
    second.guard.handle(turnStarted(here, 'run', 1));
    expect((await second.guard.admit(estimate(here, 'U1', 500, 1_000))).ok).toBe(true);
    // Another session's turn is its own.
    expect((await first.guard.admit(estimate(place('s2'), 'U1', 4_000, 5_000))).ok).toBe(true);
  });

  it('let a reservation lapse when its call never settles (the process died)', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn(
      (await backends.counters(backend, clock)).counters,
      clock,
      { workspace_daily: { tokens: 1_000 } },
      { holdMs: 40 },
    );
    const here = place();
    expect((await kit.guard.admit(estimate(here, 'U1', 400, 400))).ok).toBe(true);
    expect((await kit.guard.admit(estimate(here, 'U1', 400, 400))).ok).toBe(false);
    // SQLite's reservations follow the injected clock; Redis's follow Redis's own clock.
    clock.advance(41);
    if (backend === 'redis') await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await kit.guard.admit(estimate(here, 'U1', 400, 400))).ok).toBe(true);
  });

  it('record spend with no limit set, and admit every call', async () => {
    const clock = new Clock(EVENING);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {});
    await spend(kit, place(), 'U1', tokens(123, 45));
    expect(await kit.guard.mayStart(place(), 'U1')).toEqual({ ok: true });
    expect(
      (await kit.ledger.usage({ kind: 'user', platform: 'slack', workspace: 'T1', id: 'U1' })).today.tokens.output,
    ).toBe(45);
  });
});

describe('a store that refuses writes', () => {
  it("never throws into the model call's end (settle runs in its finally), and a shutdown's fence is quiet", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spend-fence-'));
    const opened = await openKeyvStore(`sqlite://${join(dir, 'bot.sqlite')}`);
    try {
      const fence = fenceWrites(opened.keyv);
      const clock = new Clock(EVENING);
      const logger = memoryLogger();
      const ledger = new SpendLedger({
        counters: new KeyvSpendCounters(opened.keyv, clock.now),
        prices: new ModelPrices(),
        now: clock.now,
      });
      const guard = new BudgetGuard({ ledger, limits: { channel_daily: { usd: 1 } }, logger });
      const admission = await guard.admit(estimate(place(), 'U1', 10, 10));
      expect(admission.ok).toBe(true);
      fence.close('the bot is shutting down');
      if (admission.ok) await expect(guard.settle(admission.ticket, tokens(10, 10))).resolves.toBeUndefined();
      expect(logger.lines).toEqual([]);
    } finally {
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('two instances on one Redis', () => {
  it('tell the thread of the 80 % once between them', async () => {
    const clock = new Clock(EVENING);
    const { counters: a, prefix } = await backends.counters('redis', clock);
    const { counters: b } = await backends.counters('redis', clock, prefix);
    const limits = { workspace_daily: { usd: 1 } };
    const one = guardOn(a, clock, limits);
    const two = guardOn(b, clock, limits);
    await spend(one, place('s1'), 'U1', tokens(390_000, 0));
    await Promise.all([
      spend(one, place('s1'), 'U1', tokens(10_000, 0)),
      spend(two, place('s2'), 'U2', tokens(10_000, 0)),
      spend(two, place('s3'), 'U3', tokens(10_000, 0)),
    ]);
    await spend(one, place('s1'), 'U1', tokens(10_000, 0));
    expect([...one.notes, ...two.notes]).toHaveLength(1);
  });
});
