// Two assembled bots in cluster mode on one real redis-server: a turn that runs on one
// instance, approved by a click that lands on the other, and an event both instances report,
// make one trail in which each fact is written once, whichever instance saw it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { startCore, type Core } from '../../../src/core.js';
import type { InboxItem } from '../../../src/engine/index.js';
import { runAuditExport } from '../../../src/ops/audit/audit-export.js';
import { FakeOpenAI } from '../../fakes/openai-server.js';
import { coreTestEnv } from '../../support/core-env.js';
import { memoryLogger, waitFor } from '../../support/engine-kit.js';
import { RedisServer } from '../../support/redis-server.js';
import { tempDir } from '../../support/test-connector.js';
import { place } from './audit-events.js';

let redis: RedisServer;
let fake: FakeOpenAI;
let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  redis = await RedisServer.start();
  fake = await new FakeOpenAI().start();
  dir = await tempDir();
});
afterAll(async () => {
  await fake?.stop();
  await redis?.dispose();
  await dir?.remove();
});

function clusterEnv(name: string): Record<string, string> {
  const { STORE_URL: _sqlite, ...base } = coreTestEnv(join(dir.path, name), fake);
  return { ...base, COORDINATION_URL: redis.url };
}

describe('the audit trail of two instances sharing one Redis', () => {
  it('holds each fact once, whichever instance saw it', async () => {
    const cores: Core[] = [];
    try {
      for (const name of ['a', 'b']) {
        const core = await startCore(loadConfig(clusterEnv(name)), { logger: memoryLogger() });
        cores.push(core);
        await core.recover();
      }
      const [a, b] = cores as [Core, Core];
      const prompts: InboxItem[] = [];
      for (const core of cores)
        core.observers.add('test', {
          onEvent: (_session, _event, prompt) => void (prompt ? prompts.push(prompt) : undefined),
        });

      fake.replyToolCalls([{ name: 'write_file', arguments: { path: 'x.md', content: 'x' } }]);
      fake.replyText('Written.');
      const thread = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };
      const message = { text: 'write x', userId: 'U1', eventId: 'Ev1', source: { platform: 'test', userId: 'U1' } };
      // The turn runs on A; the platform's retry of the same event lands on B: one turn.
      expect(await a.manager.deliver(thread, message)).toMatchObject({ status: 'started' });
      expect(await b.manager.deliver(thread, message)).toMatchObject({ status: 'duplicate' });
      await waitFor(() => prompts.length >= 1, 10_000);
      // The click lands on B, which records who decided; A runs the call and records it.
      expect(await b.manager.resolve(prompts[0]!.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
      await waitFor(() => fake.requests.length === 2, 10_000);
      for (const core of cores) await core.manager.idle();

      // The same fact reported by both instances' buses (a replayed event, a resumed turn's repeat).
      const stop = { type: 'stop_requested' as const, at: Date.now(), place: place('C9'), by: 'U7' };
      a.ops.emit(stop);
      b.ops.emit(stop);
    } finally {
      for (const core of cores) await core.close();
    }

    let text = '';
    expect(
      await runAuditExport(
        [],
        { COORDINATION_URL: redis.url },
        { out: async (chunk) => void (text += chunk), err: () => undefined },
      ),
    ).toBe(0);
    const records = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((record) => [record.type, record.by ?? null, record.channel])).toEqual([
      ['turn_started', 'U1', 'C1'],
      ['wait_ended', 'U1', 'C1'],
      ['tool_ended', null, 'C1'],
      ['stop_requested', 'U7', 'C9'],
    ]);
  }, 60_000);
});
