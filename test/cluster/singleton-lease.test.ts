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

/** Resolves once Redis has run a renewal of `key` (its time to live went up), counted by work, not by a clock. */
async function nextRenewal(key: string): Promise<void> {
  let last = await redis.pttl(key);
  for (;;) {
    const now = await redis.pttl(key);
    if (now > last) return;
    last = now;
  }
}

/** The process does nothing else for `ms` (a blocked event loop: a long synchronous task, a busy machine). */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer, no I/O runs meanwhile
  }
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
    // A lease a busy machine cannot miss; "well past its time": four renewals, more than a lease.
    const a = instance('node-a', key, 1_500, 50);
    const b = instance('node-b', key, 1_500, 50);
    await a.start();
    await b.start();
    for (let renewal = 0; renewal < 4; renewal++) await nextRenewal(key);
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
    a.lease.halt();
    // Taken once the key runs out (how soon after is the bench's to measure, not a busy machine's to hold).
    await waitFor(() => b.seen.includes('acquired'), 15_000);
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
      // A lease long enough that a busy machine's late timer still lands inside it.
      const a = instance('node-a', key, 5_000, 100, stalled);
      await a.start();
      const paused = Date.now();
      server.pause();
      try {
        await waitFor(() => a.seen.includes('lost'), 15_000);
        // Fenced before the key can expire in Redis (its fence is due a fifth of the lease earlier).
        expect(Date.now() - paused).toBeLessThan(5_000);
        expect(a.lease.held).toBe(false);
      } finally {
        server.resume();
      }
      a.lease.halt();
    } finally {
      stalled.disconnect();
    }
  });

  it('keeps the lease through a stall of its own process shorter than the lease, when the key stayed its own', async () => {
    const key = freshKey();
    // Renewed every 2 s, fenced 4.8 s after a renewal was sent; the key lasts 6 s.
    const a = instance('node-a', key, 6_000, 100);
    await a.start();
    await nextRenewal(key);
    // Blocked past the fence's time but not the key's: on waking, its renewal is answered in time.
    stall(5_100);
    await nextRenewal(key);
    await nextRenewal(key);
    expect(a.seen).toEqual([]);
    expect(a.lease.held).toBe(true);
    expect(await redis.get(key)).toBe('node-a');
  }, 30_000);

  it('release drops only its own key', async () => {
    const key = freshKey();
    const a = instance('node-a', key);
    await redis.set(key, 'node-b', 'PX', 5_000);
    expect(await a.start()).toBe(false);
    await a.lease.release();
    expect(await redis.get(key)).toBe('node-b');
  });
});
