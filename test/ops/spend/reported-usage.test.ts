// What a model call used, wherever its server reports it, as the assembled core counts it
// (SQLite store, the real OpenAI provider against the fake server): a Kimi-compatible server's
// usage inside the choice of its last chunk is counted, so a token limit holds for it; a server
// that reports no usage at all is charged the estimate the guard made, marked as estimated.
import { afterEach, describe, expect, it } from 'vitest';
import { usageScopes, usageText } from '../../../connectors/shared/usage-command.js';
import { loadConfig } from '../../../src/config.js';
import { startCore, type Core } from '../../../src/core.js';
import type { EngineEvent, Usage } from '../../../src/engine/index.js';
import { FakeOpenAI } from '../../fakes/openai-server.js';
import { coreTestEnv } from '../../support/core-env.js';
import { memoryLogger } from '../../support/engine-kit.js';
import { tempDir } from '../../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };
const person = { kind: 'user', platform: 'test', workspace: 'W1', id: 'U1' } as const;

async function boot(env: Record<string, string>): Promise<{ core: Core; fake: FakeOpenAI; shown: EngineEvent[] }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  const core = await startCore(loadConfig({ ...coreTestEnv(dir.path, fake), ...env }), { logger: memoryLogger() });
  cleanups.push(() => core.close());
  const shown: EngineEvent[] = [];
  core.observers.add('test', { onEvent: (_s, event) => void shown.push(event) });
  await core.recover();
  return { core, fake, shown };
}

function usagesOf(shown: EngineEvent[]): Usage[] {
  return shown.flatMap((event) => (event.type === 'assistant_message' && event.usage ? [event.usage] : []));
}

describe('usage where the server puts it', () => {
  it("a Kimi stream's usage, inside the choice of its last chunk, is counted, and a token limit holds for it", async () => {
    const { core, fake, shown } = await boot({ MODEL: 'openai:kimi-k2.5', BUDGET_USER_DAILY: '40000 tokens' });
    fake.replyText('A long answer.', {
      model: 'kimi-k2.5',
      usageAt: 'choice',
      usage: { prompt_tokens: 30_000, completion_tokens: 40, cached_tokens: 20_000 },
    });
    await core.manager.deliver(key, { text: 'first', userId: 'U1', eventId: 'e1' });
    await core.manager.idle();

    expect(usagesOf(shown)).toEqual([{ model: 'openai:kimi-k2.5', input: 10_000, cacheRead: 20_000, output: 40 }]);
    const today = (await core.spend!.usage(person)).today;
    expect(today.tokens).toEqual({ input: 10_000, cachedInput: 20_000, cacheWrite: 0, output: 40, reasoning: 0 });
    expect(today.estimatedCalls).toBe(0);

    // 30,040 of 40,000 spent: the next call, which may write Kimi's 16k of output, would pass the limit.
    await core.manager.deliver(key, { text: 'second', userId: 'U1', eventId: 'e2' });
    await core.manager.idle();
    expect(fake.requests).toHaveLength(1);
    expect(shown.find((event) => event.type === 'error')).toMatchObject({ errorKind: 'budget' });
  });

  it('a stream that reports no usage is charged the estimate the guard made before the call, marked as estimated, never 0', async () => {
    const { core, fake, shown } = await boot({ BUDGET_USER_DAILY: '$5' });
    fake.replyText('An answer of some forty characters here.', { usageAt: 'none' });
    await core.manager.deliver(key, { text: 'a question the server will not count', userId: 'U1', eventId: 'e1' });
    await core.manager.idle();

    const [usage] = usagesOf(shown);
    expect(usage).toMatchObject({ model: 'openai:gpt-4.1', estimated: true, output: 10 });
    // The system prompt alone is hundreds of tokens: an estimate, not a token or two.
    expect(usage!.input).toBeGreaterThan(100);
    const today = (await core.spend!.usage(person)).today;
    expect(today).toMatchObject({ calls: 1, estimatedCalls: 1, tokens: { input: usage!.input, output: 10 } });
    expect(today.usd).toBeGreaterThan(0);
    // /usage says which calls are estimates, and why.
    const text = await usageText(core.spend!, usageScopes(key, 'U1', { kind: 'self' }), {
      bold: (t) => t,
      escape: (t) => t,
    });
    expect(text).toContain('1 call, 1 estimated');
    expect(text).toContain('the model server reported no usage');
  });
});
