// Cluster mode's document store on a real redis-server: inside a session's fence scope a
// write goes through only while the lease holds the writer's token, so an instance that lost
// its session cannot overwrite the new owner's state; outside a scope writes are plain; and a
// Redis that is down or stalled makes every call fail within a bounded time, loudly, then
// work again once Redis is back.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys, type ClusterKeys } from '../../src/cluster/cluster-keys.js';
import { fenceScope, type FenceScope } from '../../src/cluster/fence-scope.js';
import { connectedDuplicate } from '../../src/cluster/redis-keyv-store.js';
import { isWritesFenced, WritesFencedError } from '../../src/engine/fenced.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { SessionStore } from '../../src/store/session-store.js';
import { RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server.dispose();
});

const opened: OpenedStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

let instances = 0;
/** One bot instance's store on `redis`, with its own connection; `prefix` isolates a test's keys. */
async function instance(
  redis: RedisServer,
  keys: ClusterKeys,
  options: { commandTimeoutMs?: number } = {},
): Promise<OpenedStore> {
  const store = await openKeyvStore(redis.url, 'bot', { keys, ...options });
  opened.push(store);
  return store;
}

function testKeys(): ClusterKeys {
  return clusterKeys(`fence${++instances}:`);
}

function scopeOf(keys: ClusterKeys, token: string, sessionId = 's1'): FenceScope {
  return { sessionId, leaseKey: keys.lease(sessionId), token };
}

async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  return work().then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** The four kinds of write a Keyv caller can make. */
const WRITES = {
  set: (store: OpenedStore) => store.keyv.set('doc:a', 'late'),
  setMany: (store: OpenedStore) =>
    store.keyv.setMany([
      { key: 'doc:a', value: 'late' },
      { key: 'doc:b', value: 'late' },
    ]),
  delete: (store: OpenedStore) => store.keyv.delete('doc:a'),
  deleteMany: (store: OpenedStore) => store.keyv.deleteMany(['doc:a', 'doc:b']),
} as const;

describe('fenced writes', () => {
  for (const [kind, write] of Object.entries(WRITES)) {
    it(`${kind} is refused, writing nothing, when the lease is another instance's or no one's`, async () => {
      const keys = testKeys();
      const store = await instance(server, keys);
      await store.keyv.set('doc:a', 'kept');
      await store.keyv.set('doc:b', 'kept');

      await store.redis!.set(keys.lease('s1'), 'n2:2');
      const foreign = await failureOf(() => fenceScope.run(scopeOf(keys, 'n1:1'), () => write(store)));
      expect(foreign).toBeInstanceOf(WritesFencedError);
      expect(isWritesFenced(foreign)).toBe(true);
      expect((foreign as Error).message).toMatch(/session s1 is owned by n2:2 now, not n1:1/);

      await store.redis!.del(keys.lease('s1'));
      const expired = await failureOf(() => fenceScope.run(scopeOf(keys, 'n1:1'), () => write(store)));
      expect(expired).toBeInstanceOf(WritesFencedError);
      expect((expired as Error).message).toMatch(/owned by no one/);

      expect(await store.keyv.getMany(['doc:a', 'doc:b'])).toEqual(['kept', 'kept']);
    });
  }

  it('every kind of write goes through while the lease holds the scope token', async () => {
    const keys = testKeys();
    const store = await instance(server, keys);
    await store.redis!.set(keys.lease('s1'), 'n1:1');
    await fenceScope.run(scopeOf(keys, 'n1:1'), async () => {
      await WRITES.setMany(store);
      expect(await store.keyv.getMany(['doc:a', 'doc:b'])).toEqual(['late', 'late']);
      expect(await WRITES.delete(store)).toBe(true);
      expect(await store.keyv.get('doc:a')).toBeUndefined();
      await WRITES.set(store);
      expect(await store.keyv.get('doc:a')).toBe('late');
      expect(await WRITES.deleteMany(store)).toBe(true);
      expect(await store.keyv.getMany(['doc:a', 'doc:b'])).toEqual([undefined, undefined]);
    });
  });

  it('outside a scope writes are plain, whoever holds a lease', async () => {
    const keys = testKeys();
    const store = await instance(server, keys);
    await store.redis!.set(keys.lease('s1'), 'n2:2');
    await WRITES.setMany(store);
    expect(await store.keyv.getMany(['doc:a', 'doc:b'])).toEqual(['late', 'late']);
    expect(await WRITES.deleteMany(store)).toBe(true);
  });

  it('an owner paused past its lease (SIGSTOP) cannot overwrite the instance that took over when it wakes', async () => {
    const keys = testKeys();
    const n1 = await instance(server, keys);
    const n2 = await instance(server, keys);
    const admin = n2.redis!;
    await admin.set(keys.lease('s1'), 'n1:1', 'PX', 15_000);
    let wake: () => void = () => undefined;
    const paused = new Promise<void>((resolve) => (wake = resolve));
    let stopped: () => void = () => undefined;
    const reachedPause = new Promise<void>((resolve) => (stopped = resolve));

    // n1 runs its turn in its scope, records a message, then "stops" before the next write.
    // The scope travels across the await, as it does across a real SIGSTOP.
    const n1Turn = failureOf(() =>
      fenceScope.run(scopeOf(keys, 'n1:1'), async () => {
        await new SessionStore(n1.keyv).appendMessage('s1', { role: 'assistant', content: 'n1 before the pause' });
        stopped();
        await paused;
        await new SessionStore(n1.keyv).appendMessage('s1', { role: 'assistant', content: 'n1 after the pause' });
      }),
    );
    await reachedPause;

    // Meanwhile the lease expires and n2 takes the session over with the next epoch.
    await admin.del(keys.lease('s1'));
    await admin.set(keys.lease('s1'), 'n2:2', 'PX', 15_000);
    await fenceScope.run(scopeOf(keys, 'n2:2'), () =>
      new SessionStore(n2.keyv).appendMessage('s1', { role: 'assistant', content: 'n2 took over' }),
    );

    wake();
    const late = await n1Turn;
    expect(isWritesFenced(late)).toBe(true);
    expect(await new SessionStore(n2.keyv).loadTranscript('s1')).toEqual([
      { role: 'assistant', content: 'n1 before the pause' },
      { role: 'assistant', content: 'n2 took over' },
    ]);
  });

  it('a fenced write still works after Redis forgot its scripts (SCRIPT FLUSH, or a restart)', async () => {
    const keys = testKeys();
    const store = await instance(server, keys);
    await store.redis!.set(keys.lease('s1'), 'n1:1');
    await fenceScope.run(scopeOf(keys, 'n1:1'), () => store.keyv.set('doc:a', 1));
    await store.redis!.script('FLUSH');
    await fenceScope.run(scopeOf(keys, 'n1:1'), () => store.keyv.set('doc:a', 2));
    expect(await store.keyv.get('doc:a')).toBe(2);
  });
});

describe('documents in Redis', () => {
  it("live under the cluster's document key with Keyv's namespace once, and a TTL becomes Redis's own expiry (fenced or not)", async () => {
    const keys = testKeys();
    const store = await instance(server, keys);
    await store.keyv.set('session:x', { model: 'm' });
    expect(store.documentKey!('session:x')).toBe(keys.doc('bot:session:x'));
    expect(await store.redis!.keys(`${keys.doc('')}*`)).toEqual([keys.doc('bot:session:x')]);

    await store.keyv.set('event:E1', 1, 60_000);
    const pttl = await store.redis!.pttl(store.documentKey!('event:E1'));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);

    await store.redis!.set(keys.lease('s1'), 'n1:1');
    await fenceScope.run(scopeOf(keys, 'n1:1'), () => store.keyv.set('event:E2', 1, 30));
    expect(await store.redis!.pttl(store.documentKey!('event:E2'))).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await store.redis!.exists(store.documentKey!('event:E2'))).toBe(0);
  });

  it("clear() removes this namespace's documents only: leases, other namespaces and other bots stay", async () => {
    const keys = testKeys();
    const store = await instance(server, keys);
    const other = await openKeyvStore(server.url, 'other', { keys });
    opened.push(other);
    await store.keyv.set('a', 1);
    await other.keyv.set('a', 2);
    await store.redis!.set(keys.lease('s1'), 'n1:1');
    await store.keyv.clear();
    expect(await store.keyv.get('a')).toBeUndefined();
    expect(await other.keyv.get('a')).toBe(2);
    expect(await store.redis!.get(keys.lease('s1'))).toBe('n1:1');
  });
});

describe("sharing the store's connection", () => {
  it('the coordinator gets the connection the documents use, and a connected duplicate for Pub/Sub', async () => {
    const keys = testKeys();
    const store = await instance(server, keys);
    await store.redis!.set(store.documentKey!('session:x'), JSON.stringify({ value: 'written by a script' }));
    expect(await store.keyv.get('session:x')).toBe('written by a script');

    const subscriber = await connectedDuplicate(store.redis!);
    try {
      const heard = new Promise<string>((resolve) =>
        subscriber.once('message', (_channel: string, message: string) => resolve(message)),
      );
      await subscriber.subscribe(keys.poke('n1'));
      await store.redis!.publish(keys.poke('n1'), 's1');
      expect(await heard).toBe('s1');
    } finally {
      subscriber.disconnect();
    }
  });
});

describe('when Redis is down', () => {
  it('refuses to open, naming the address', async () => {
    const redis = await RedisServer.start();
    await redis.dispose();
    await expect(openKeyvStore(redis.url)).rejects.toThrow(
      new RegExp(`could not connect to Redis at 127\\.0\\.0\\.1:${redis.port}.*ECONNREFUSED`),
    );
  });

  it('a write and a read fail at once with a clear error (never "not found"), and work again once Redis is back on the same port', async () => {
    const redis = await RedisServer.start({ durable: true });
    try {
      const store = await instance(redis, testKeys());
      await store.keyv.set('session:x', 'before');
      await redis.stop();

      const started = Date.now();
      const write = await failureOf(() => store.keyv.set('session:x', 'during'));
      const read = await failureOf(() => store.keyv.get('session:x'));
      // At once, not queued until Redis is back (which would outlast the test): generous for a busy machine.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((write as Error).message).toMatch(
        new RegExp(`Redis store set failed: not connected to Redis at 127\\.0\\.0\\.1:${redis.port}.*nothing was sent`),
      );
      expect((read as Error).message).toMatch(/Redis store get failed: not connected/);

      await redis.restart();
      await eventually(() => store.keyv.set('session:x', 'after'), 5_000);
      expect(await store.keyv.get('session:x')).toBe('after');
    } finally {
      await redis.dispose();
    }
  });

  it('a stalled Redis (SIGSTOP) fails a call after the command timeout, and answers again after SIGCONT', async () => {
    const redis = await RedisServer.start();
    try {
      const keys = testKeys();
      const store = await instance(redis, keys, { commandTimeoutMs: 300 });
      await store.redis!.set(keys.lease('s1'), 'n1:1');
      redis.pause();
      const failure = await failureOf(() =>
        fenceScope.run(scopeOf(keys, 'n1:1'), () => store.keyv.set('doc:a', 'stalled')),
      );
      expect((failure as Error).message).toMatch(
        /Redis store fenced set failed: Redis at .* did not answer within 300 ms/,
      );
      expect(isWritesFenced(failure)).toBe(false);
      redis.resume();
      await eventually(() => store.keyv.set('doc:a', 'resumed'), 5_000);
      expect(await store.keyv.get('doc:a')).toBe('resumed');
    } finally {
      await redis.dispose();
    }
  });
});

/** Retry `work` until it succeeds (a client reconnecting on its own), at most `withinMs`. */
async function eventually(work: () => Promise<unknown>, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await work();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
