// Cluster mode's store indexes: two instances creating sessions and marking them open or
// settled at the same moment lose none of each other's changes (each change is one atomic
// Redis command), which read-modify-write documents would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../src/cluster/cluster-keys.js';
import { redisIdSet } from '../../src/cluster/redis-id-set.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { SessionStore } from '../../src/store/session-store.js';
import { RedisServer } from '../support/redis-server.js';
import { TestBot } from '../support/test-connector.js';

let redis: RedisServer;
const opened: OpenedStore[] = [];
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  for (const store of opened) await store.close();
  await redis?.dispose();
});

async function instanceStore(): Promise<SessionStore> {
  const keys = clusterKeys('shared-index:');
  const store = await openKeyvStore(redis.url, 'bot', { keys });
  opened.push(store);
  return new SessionStore(
    store.keyv,
    redisIdSet(store.redis!, keys.openSessions),
    redisIdSet(store.redis!, keys.allSessions),
  );
}

describe('the session indexes shared by instances', () => {
  it('keep every session two instances create at once, and every open mark, and lose none to the other', async () => {
    const [a, b] = [await instanceStore(), await instanceStore()];
    const ids = Array.from({ length: 200 }, (_, i) => `s${i}`);
    await Promise.all(
      ids.map(async (id, i) => {
        const store = i % 2 === 0 ? a : b;
        await store.saveSession(TestBot.record(id, { id }));
        await store.markOpen(id);
      }),
    );
    expect((await a.listSessionIds()).sort()).toEqual([...ids].sort());
    expect((await b.openSessionIds()).length).toBe(200);
    // Settled by the other instance than the one that opened them.
    await Promise.all(ids.filter((_, i) => i % 4 === 0).map((id, i) => (i % 2 === 0 ? b : a).markSettled(id)));
    expect((await a.openSessionIds()).length).toBe(150);
    // A session deleted on one instance leaves the index the other reads.
    await b.deleteSession('s1');
    expect(await a.listSessionIds()).not.toContain('s1');
  });
});
