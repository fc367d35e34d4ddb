// The spend ledger and limits as the assembled core wires them (SQLite store, the real OpenAI
// provider against the fake server): every call recorded for /usage (`core.spend`), the 80 %
// note reaching the thread's observers once, a turn past the limit paused before its model
// call, and the start-up warning for a USD-only limit with a model that has no price.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { startCore } from '../../../src/core.js';
import type { EngineEvent } from '../../../src/engine/index.js';
import type { ThreadNotice } from '../../../src/sessions/session-observer.js';
import { FakeOpenAI } from '../../fakes/openai-server.js';
import { coreTestEnv } from '../../support/core-env.js';
import { memoryLogger, waitFor } from '../../support/engine-kit.js';
import { tempDir } from '../../support/test-connector.js';
import { RedisServer } from '../../support/redis-server.js';
import { Redis } from 'ioredis';

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };

describe.each(['sqlite', 'cluster mode on Redis'])('spend in the assembled core (%s)', (mode) => {
  it('records each call, tells the thread at 80 %, and pauses the next turn before its call', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const fake = await new FakeOpenAI().start();
    cleanups.push(() => fake.stop());
    const config = loadConfig({
      ...coreTestEnv(dir.path, fake),
      BUDGET_CHANNEL_DAILY: '$1',
      MODELS: 'openai:gpt-4.1,openai:llama-local',
      ...(mode === 'sqlite' ? {} : { STORE_URL: redis.url, COORDINATION_URL: redis.url }),
    });
    let now = Date.UTC(2026, 11, 3, 20, 48);
    const core = await startCore(config, { logger: memoryLogger(), spendClock: () => now });
    cleanups.push(() => core.close());
    const shown: EngineEvent[] = [];
    const notices: ThreadNotice[] = [];
    core.observers.add('test', {
      onEvent: (_s, event) => void shown.push(event),
      onNotice: (_s, notice) => void notices.push(notice),
    });
    await core.recover();
    const spend = core.spend;
    if (!spend) throw new Error('the core has no spend reader');
    expect(
      core.warnings.some(
        (warning) => warning.includes('BUDGET_CHANNEL_DAILY') && warning.includes('openai:llama-local'),
      ),
    ).toBe(true);

    // $0.80 of $1 ($2 per million input tokens on gpt-4.1).
    fake.replyText('First answer.', { usage: { prompt_tokens: 400_000, completion_tokens: 0 } });
    await core.manager.deliver(key, { text: 'first', userId: 'U1', eventId: 'e1' });
    await core.manager.idle();
    await waitFor(() => notices.length > 0);
    expect(notices).toEqual([
      {
        kind: 'budget_warning',
        text: expect.stringMatching(
          /^This channel's daily budget is 80 % spent \(\$0\.80 of \$1\.00; it resets at 00:00 UTC, in 3 h 12 min\)\.$/,
        ),
      },
    ]);
    const usage = await spend.usage({ kind: 'channel', platform: 'test', workspace: 'W1', id: 'C1' });
    expect(usage.today.usd).toBeCloseTo(0.8, 9);
    expect(usage.limit).toMatchObject({ setting: 'BUDGET_CHANNEL_DAILY', usd: 1 });
    expect((await spend.usage({ kind: 'user', platform: 'test', workspace: 'W1', id: 'U1' })).today.calls).toBe(1);
    if (mode !== 'sqlite') {
      // Cluster mode: the counters are the shared Redis's, where every instance reads them.
      const client = new Redis(redis.url);
      const keys = await client.keys('chat-agent:spend:{spend}:c:d:*|channel|test:W1:C1');
      client.disconnect();
      expect(keys).toHaveLength(1);
    }

    // The next call may produce gpt-4.1's 32,768 output tokens ($0.26): past the limit.
    await core.manager.deliver(key, { text: 'second', userId: 'U1', eventId: 'e2' });
    await core.manager.idle();
    expect(fake.requests).toHaveLength(1);
    const error = shown.find((event): event is Extract<EngineEvent, { type: 'error' }> => event.type === 'error');
    expect(error).toMatchObject({
      errorKind: 'budget',
      message: expect.stringContaining(
        "Paused: this channel's daily budget of $1.00 would be passed by the next model call",
      ),
    });
    expect(notices).toHaveLength(1);

    // Past midnight the channel's day starts afresh: the same request goes through.
    now = Date.UTC(2026, 11, 4, 0, 0, 5);
    fake.replyText('A new day.', { usage: { prompt_tokens: 1_000, completion_tokens: 10 } });
    await core.manager.deliver(key, { text: 'third', userId: 'U1', eventId: 'e3' });
    await core.manager.idle();
    expect(fake.requests).toHaveLength(2);
    expect((await spend.usage({ kind: 'channel', platform: 'test', workspace: 'W1', id: 'C1' })).today.calls).toBe(1);
    expect((await spend.usage({ kind: 'channel', platform: 'test', workspace: 'W1', id: 'C1' })).month.calls).toBe(2);
  });
});
