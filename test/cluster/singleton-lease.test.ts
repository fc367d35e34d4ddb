// SingletonLease against a real redis-server: one holder at a time, renewal keeps it, a
// standby takes it when the holder dies or releases, and a holder whose key was taken by
// another value (or that cannot renew in time) is told before it can act alongside the new one.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SingletonLease } from '../../src/cluster/singleton-lease.js';
import { waitFor } from '../support/engine-kit.js';
import { RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await RedisServer.start();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.dispose();
});

const leases: SingletonLease[] = [];
afterEach(async () => {
  for (const lease of leases.splice(0)) await lease.release().catch(() => undefined);
});

let keyCount = 0;
function instance(node: string, key: string, leaseMs = 600, retryMs = 100, client = redis) {
  const lease = new SingletonLease({ redis: client, key, nodeId: node, leaseMs, retryMs });
  leases.push(lease);
  const seen: string[] = [];
  const handlers = { onAcquired: () => void seen.push('acquired'), onLost: () => void seen.push('lost') };
  return { lease, seen, start: () => lease.start(handlers) };
}

function freshKey(): string {
  return `test:singleton:${++keyCount}`;
}

describe('a singleton lease', () => {
  it('is held by one instance; the other stands by', async () => {
    const key = freshKey();
    const a = instance('node-a', key);
    const b = instance('node-b', key);
    expect(await a.start()).toBe(true);
    expect(await b.start()).toBe(false);
    expect(await redis.get(key)).toBe('node-a');
    expect(a.lease.held).toBe(true);
    expect(b.lease.held).toBe(false);
  });

  it('is renewed by its holder well past its time, and the standby never gets it', async () => {
    const key = freshKey();
    const a = instance('node-a', key, 300, 50);
    const b = instance('node-b', key, 300, 50);
    await a.start();
    await b.start();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(a.lease.held).toBe(true);
    expect(a.seen).toEqual([]);
    expect(b.seen).toEqual([]);
    expect(await redis.get(key)).toBe('node-a');
    expect(await redis.pttl(key)).toBeGreaterThan(0);
  });

  it('passes to the standby within lease + retry when its holder dies without releasing', async () => {
    const key = freshKey();
    const a = instance('node-a', key, 400, 50);
    const b = instance('node-b', key, 400, 50);
    await a.start();
    await b.start();
    const died = Date.now();
    a.lease.halt();
    await waitFor(() => b.seen.includes('acquired'), 2_000);
    expect(Date.now() - died).toBeLessThan(400 + 50 + 300);
    expect(b.lease.held).toBe(true);
    expect(await redis.get(key)).toBe('node-b');
  });

  it('passes at the standby’s next retry when its holder releases', async () => {
    const key = freshKey();
    const a = instance('node-a', key, 5_000, 50);
    const b = instance('node-b', key, 5_000, 50);
    await a.start();
    await b.start();
    await a.lease.release();
    expect(await redis.get(key)).not.toBe('node-a');
    await waitFor(() => b.seen.includes('acquired'), 1_000);
    expect(await redis.get(key)).toBe('node-b');
  });

  it('tells its holder it is lost when the key was taken by another value, and stands by for it again', async () => {
    const key = freshKey();
    const a = instance('node-a', key, 300, 50);
    await a.start();
    await redis.set(key, 'node-x', 'PX', 400);
    await waitFor(() => a.seen.includes('lost'), 1_000);
    expect(a.lease.held).toBe(false);
    // node-x never renews: once its key runs out, the standby takes it back.
    await waitFor(() => a.seen.includes('acquired'), 2_000);
    expect(a.seen).toEqual(['lost', 'acquired']);
    expect(await redis.get(key)).toBe('node-a');
  });

  it('fences itself before its lease can run out when Redis stops answering', async () => {
    const key = freshKey();
    const stalled = new Redis(server.url, { maxRetriesPerRequest: null });
    try {
      const a = instance('node-a', key, 1_000, 100, stalled);
      await a.start();
      const paused = Date.now();
      server.pause();
      try {
        await waitFor(() => a.seen.includes('lost'), 2_000);
        // Fenced a fifth of the lease before the key can expire in Redis.
        expect(Date.now() - paused).toBeLessThan(1_000);
        expect(a.lease.held).toBe(false);
      } finally {
        server.resume();
      }
      a.lease.halt();
    } finally {
      stalled.disconnect();
    }
  });

  it('release drops only its own key', async () => {
    const key = freshKey();
    const a = instance('node-a', key);
    await redis.set(key, 'node-b', 'PX', 5_000);
    expect(await a.start()).toBe(false);
    await a.lease.release();
    expect(await redis.get(key)).toBe('node-b');
  });
});
