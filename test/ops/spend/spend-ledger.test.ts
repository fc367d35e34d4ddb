// The ledger records every settled call with its conversation, person, channel, workspace and
// model, per day and per month, on SQLite (Keyv) and on a real Redis alike: priced from the
// built-in table or MODEL_PRICES, cached and reasoning tokens as they are billed, and a model
// with no price counted in tokens only and named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelPrices } from '../../../src/ops/pricing.js';
import { RedisServer } from '../../support/redis-server.js';
import { Backends, Clock, guardOn, place, spend, tokens, type Backend } from './spend-kit.js';

let redis: RedisServer;
const backends = new Backends(() => redis.url);
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await backends.close();
  await redis?.dispose();
});

const NOON = Date.UTC(2026, 11, 3, 12, 0);

describe.each<Backend>(['sqlite', 'redis'])('the spend ledger on %s', (backend) => {
  it('records a call under the person, the channel, the workspace, the conversation and the model, today and this month', async () => {
    const clock = new Clock(NOON);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {});
    const here = place('s1', 'C1', 'T1');
    // gpt-4.1: $2 input, $0.50 cached input, $8 output per million tokens.
    await spend(kit, here, 'U1', tokens(1_000_000, 100_000, { cachedInput: 400_000, reasoning: 60_000 }));
    await spend(kit, place('s2', 'C2', 'T1'), 'U2', tokens(500_000, 0));
    const expected = 2 + 0.2 + 0.8;

    const user = await kit.ledger.usage({ kind: 'user', platform: 'slack', workspace: 'T1', id: 'U1' });
    expect(user.today.usd).toBeCloseTo(expected, 9);
    expect(user.today.tokens).toEqual({
      input: 1_000_000,
      cachedInput: 400_000,
      cacheWrite: 0,
      output: 100_000,
      reasoning: 60_000,
    });
    expect(user.today.calls).toBe(1);
    expect(user.month).toEqual(user.today);
    expect(user.limit).toBeUndefined();

    const channel = await kit.ledger.usage({ kind: 'channel', platform: 'slack', workspace: 'T1', id: 'C1' });
    expect(channel.today.usd).toBeCloseTo(expected, 9);
    const workspace = await kit.ledger.usage({ kind: 'workspace', platform: 'slack', workspace: 'T1', id: 'T1' });
    expect(workspace.today.usd).toBeCloseTo(expected + 1, 9);
    expect(workspace.today.calls).toBe(2);
    // Another platform's workspace of the same id is another scope.
    expect(
      (await kit.ledger.usage({ kind: 'workspace', platform: 'discord', workspace: 'T1', id: 'T1' })).today.calls,
    ).toBe(0);

    const conversation = await kit.ledger.counters.read(`d:2026-12-03|conversation|s1`);
    expect(conversation.calls).toBe(1);
    const model = await kit.ledger.counters.read(`m:2026-12|model|openai:gpt-4.1`);
    expect(model.calls).toBe(2);
    expect(model.nusd).toBe(4_000_000_000);

    const spends = kit.events.filter((event) => event.type === 'spend');
    expect(spends).toHaveLength(2);
    expect(spends[0]).toMatchObject({
      type: 'spend',
      place: here,
      requester: 'U1',
      model: 'openai:gpt-4.1',
      tokens: { input: 1_000_000, reasoning: 60_000 },
    });
    expect((spends[0] as { usd: number }).usd).toBeCloseTo(expected, 9);
  });

  it('prices cache writes at their own rate and reasoning as the output it is part of', async () => {
    const clock = new Clock(NOON);
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {});
    // claude-sonnet-4: $3 input, $0.30 cache read, $3.75 cache write, $15 output.
    await spend(
      kit,
      place(),
      'U1',
      tokens(100_000, 200_000, { cachedInput: 1_000_000, cacheWrite: 400_000, reasoning: 150_000 }),
      'anthropic:claude-sonnet-4-5',
    );
    const usage = await kit.ledger.usage({ kind: 'user', platform: 'slack', workspace: 'T1', id: 'U1' });
    expect(usage.today.usd).toBeCloseTo(0.3 + 0.3 + 1.5 + 3, 9);
  });

  it('counts a model with no price in tokens only, names it, and lets MODEL_PRICES price one', async () => {
    const clock = new Clock(NOON);
    const prices = new ModelPrices({ 'openai:house-model': { input: 1, output: 4 } });
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {}, { prices });
    await spend(kit, place(), 'U1', tokens(1_000, 500), 'openai:llama-local');
    await spend(kit, place(), 'U1', tokens(1_000_000, 0), 'openai:house-model');
    const usage = await kit.ledger.usage({ kind: 'channel', platform: 'slack', workspace: 'T1', id: 'C1' });
    expect(usage.today.usd).toBeCloseTo(1, 9);
    expect(usage.today.tokens.input).toBe(1_001_000);
    expect(usage.today.unpricedModels).toEqual(['openai:llama-local']);
    const unpriced = kit.events.find((event) => event.type === 'spend' && event.model === 'openai:llama-local');
    expect(unpriced).toBeDefined();
    // No price, no USD: the event carries tokens only.
    expect(unpriced && 'usd' in unpriced).toBe(false);
  });

  it('starts a new day at midnight and keeps the month, across a month end too', async () => {
    const clock = new Clock(Date.UTC(2026, 11, 30, 23, 59));
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {});
    const scope = { kind: 'user' as const, platform: 'slack', workspace: 'T1', id: 'U1' };
    await spend(kit, place(), 'U1', tokens(1_000_000, 0));
    clock.advance(2 * 60_000); // 00:01 on the 31st
    await spend(kit, place(), 'U1', tokens(500_000, 0));
    let usage = await kit.ledger.usage(scope);
    expect(usage.today.usd).toBeCloseTo(1, 9);
    expect(usage.month.usd).toBeCloseTo(3, 9);
    clock.advance(24 * 3_600_000); // 1 January
    usage = await kit.ledger.usage(scope);
    expect(usage.today.calls).toBe(0);
    expect(usage.month.calls).toBe(0);
  });

  it('shows the daily limit on a scope with its reset time', async () => {
    const clock = new Clock(Date.UTC(2026, 11, 3, 20, 48));
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, {
      channel_daily: { usd: 5, tokens: 2_000_000 },
    });
    const report = await kit.ledger.usage({ kind: 'channel', platform: 'slack', workspace: 'T1', id: 'C1' });
    expect(report.limit).toEqual({
      setting: 'BUDGET_CHANNEL_DAILY',
      usd: 5,
      tokens: 2_000_000,
      resetsAt: Date.UTC(2026, 11, 4),
    });
    expect(
      (await kit.ledger.usage({ kind: 'user', platform: 'slack', workspace: 'T1', id: 'U1' })).limit,
    ).toBeUndefined();
  });
});
