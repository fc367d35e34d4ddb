// A spend limit reached mid-turn, through the real parts: a TurnEngine whose model calls go
// through the metered provider to the real OpenAI SDK and a fake OpenAI server, the engine's
// events reaching the guard through the operations observer and bus as in the bot. The turn
// pauses before the next model call (the server receives nothing more) with a `budget`
// notice naming the limit; an admin's allowance lets the same turn finish; then the limit
// holds again.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TurnEngine, type EngineEvent } from '../../../src/engine/index.js';
import { meteredResolver } from '../../../src/ops/metered-provider.js';
import { placeOf } from '../../../src/ops/ops-events.js';
import { OpsObserver } from '../../../src/ops/ops-observer.js';
import { OpenAIProvider } from '../../../src/providers/openai.js';
import { FakeOpenAI } from '../../fakes/openai-server.js';
import { collect, lowRisk, only, recordingTool } from '../../support/engine-kit.js';
import { RedisServer } from '../../support/redis-server.js';
import { TestBot } from '../../support/test-connector.js';
import { Backends, Clock, guardOn } from './spend-kit.js';

let fake: FakeOpenAI;
let redis: RedisServer;
const backends = new Backends(() => redis.url);
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
});
beforeEach(async () => {
  fake = await new FakeOpenAI().start();
});
afterEach(async () => {
  await fake.stop();
  await backends.close();
});

describe.each(['sqlite', 'redis'] as const)('a limit reached mid-turn (%s)', (backend) => {
  it('pauses before the next model call, and an admin lets the turn finish', async () => {
    const clock = new Clock(Date.UTC(2026, 11, 3, 20, 48));
    const kit = guardOn((await backends.counters(backend, clock)).counters, clock, { channel_daily: { usd: 0.01 } });
    const record = TestBot.record('budget-thread', { model: 'openai:gpt-4.1', startedBy: 'U1' });
    const observer = new OpsObserver(kit.bus, { mask: (text) => text, now: clock.now });
    const provider = new OpenAIProvider({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0 });
    const resolver = meteredResolver(() => provider, {
      place: placeOf(record),
      ops: kit.bus,
      guard: kit.guard,
      fallbackRequester: () => record.startedBy,
      now: clock.now,
    });
    const engine = new TurnEngine({
      provider: resolver,
      model: 'openai:gpt-4.1',
      sessionId: record.id,
      tools: [recordingTool('lookup', lowRisk)],
      modelSettings: { max_tokens: 1_000 },
    });
    const drive = (events: AsyncIterable<EngineEvent>) => collect(events, (event) => observer.onEvent(record, event));

    // The first call asks for a tool and reports $0.0098 of usage ($2 in, $8 out per million);
    // the second may cost up to 1,000 output tokens ($0.008): past the channel's $0.01.
    fake.replyToolCalls([{ name: 'lookup', arguments: { q: 'prices' } }], {
      usage: { prompt_tokens: 4_500, completion_tokens: 100 },
    });
    fake.replyText('The answer.', { usage: { prompt_tokens: 4_700, completion_tokens: 20 } });
    const events = await drive(
      engine.run('What does it cost?', {
        source: { platform: 'test', channel: 'C1', thread: 'budget-thread', userId: 'U1', messageId: 'm1' },
      }),
    );

    expect(fake.requests).toHaveLength(1);
    const error = only(events, 'error')[0];
    expect(error?.errorKind).toBe('budget');
    expect(error?.message).toMatch(
      /^Paused: this channel's daily budget of \$0\.01 would be passed by the next model call \(\$0\.0098 spent so far.*it resets at 00:00 UTC, in 3 h 12 min\)\. An admin can press Continue/,
    );
    const last = engine.messages.at(-1);
    expect(last).toMatchObject({ role: 'notice', kind: 'budget', text: error?.message });
    expect(engine.pausedBySpendLimit()).toBe(true);
    expect(kit.events).toContainEqual(
      expect.objectContaining({ type: 'budget_refused', limit: 'channel_daily', what: 'model_call' }),
    );
    // The tool ran (its result is in the history), and the call that ran was recorded.
    expect(only(events, 'tool_finished')).toHaveLength(1);
    const spent = await kit.ledger.usage({
      kind: 'channel',
      platform: record.key.platform,
      workspace: record.key.workspace,
      id: record.key.channel,
    });
    expect(spent.today.usd).toBeCloseTo(0.0098, 9);
    // A new request in the channel would be refused only once the limit is reached; it is not yet.
    expect((await kit.guard.mayStart(placeOf(record), 'U2')).ok).toBe(true);

    // An admin's Continue: the same turn goes on and finishes, its call recorded.
    await kit.guard.allowTurn(placeOf(record), 'ADMIN');
    const retried = await drive(engine.retry());
    expect(fake.requests).toHaveLength(2);
    expect(only(retried, 'turn_end')[0]?.status).toBe('completed');
    expect(
      (
        await kit.ledger.usage({
          kind: 'channel',
          platform: record.key.platform,
          workspace: record.key.workspace,
          id: record.key.channel,
        })
      ).today.usd,
    ).toBeCloseTo(0.0098 + 0.00956, 9);
    await kit.guard.flush();

    // The allowance ended with the turn: the limit holds the next one before its first call.
    expect(await kit.guard.mayStart(placeOf(record), 'U2')).toMatchObject({
      ok: false,
      reason: expect.stringContaining("Not started: this channel's daily budget of $0.01 is spent"),
    });
    const next = await drive(
      engine.run('And now?', {
        source: { platform: 'test', channel: 'C1', thread: 'budget-thread', userId: 'U1', messageId: 'm2' },
      }),
    );
    expect(fake.requests).toHaveLength(2);
    expect(only(next, 'error')[0]?.errorKind).toBe('budget');
  });
});
