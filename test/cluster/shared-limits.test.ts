// The per-person and bot-wide limits in cluster mode, on a real redis-server: two instances
// ("a" and "b", each with its own RedisCoordinator) share TURNS_PER_USER_PER_MINUTE,
// THREADS_PER_USER and MAX_CONCURRENT_MODEL_CALLS, so a person gets their share of the whole
// bot, not a share per instance; and what an instance that died held comes back a lease later.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../src/cluster/cluster-keys.js';
import { RedisCoordinator } from '../../src/cluster/redis-coordinator.js';
import { connectedDuplicate } from '../../src/cluster/redis-keyv-store.js';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { ModelCallGate } from '../../src/providers/model-gate.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { ScriptedProvider, say, type Step } from '../fakes/scripted-provider.js';
import { RedisServer } from '../support/redis-server.js';
import { mulberry32 } from '../support/seeded-random.js';
import { tempDir, TestBot } from '../support/test-connector.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const stalled: Step = { stallBeforeFirstToken: true };
const fairUse = (limits: { turnsPerUserPerMinute?: number; threadsPerUser?: number }) => ({
  maxQueuedInputs: 20,
  maxQueuedBytes: 100_000,
  turnsPerUserPerMinute: 100,
  threadsPerUser: 100,
  ...limits,
});

/** Two instances of one bot (one store, one Redis), each with its own provider. */
async function twoInstances(
  manager: { fairUse: ReturnType<typeof fairUse> },
  steps: { a: Step[]; b: Step[] },
  leaseMs?: number,
): Promise<{ a: TestBot; b: TestBot }> {
  const dir = await tempDir('limits-');
  cleanups.push(dir.remove);
  const storeUrl = `sqlite://${dir.path}/shared.sqlite`;
  const cluster = { url: redis.url, ...(leaseMs ? { timings: { leaseMs } } : {}) };
  const a = await TestBot.start({ provider: new ScriptedProvider(steps.a), storeUrl, cluster, manager });
  cleanups.push(() => a.stop());
  const b = await TestBot.start({ provider: new ScriptedProvider(steps.b), storeUrl, cluster, manager });
  cleanups.push(() => b.stop());
  return { a, b };
}

describe("a person's limits hold across instances", () => {
  it('TURNS_PER_USER_PER_MINUTE=3: three turns across two instances pass, the fourth is refused on either', async () => {
    const answers = Array.from({ length: 4 }, (_unused, i) => say(`answer ${i}`));
    const { a, b } = await twoInstances({ fairUse: fairUse({ turnsPerUserPerMinute: 3 }) }, { a: answers, b: answers });
    expect(await a.say('T1', 'U1', 'one')).toMatchObject({ status: 'started' });
    expect(await b.say('T2', 'U1', 'two')).toMatchObject({ status: 'started' });
    expect(await a.say('T3', 'U1', 'three')).toMatchObject({ status: 'started' });
    const refusal = {
      status: 'refused',
      reason: expect.stringMatching(
        /^You started 3 requests in the last minute \(the limit is 3\); send this again in \d+ s\.$/,
      ),
    };
    expect(await b.say('T4', 'U1', 'four')).toMatchObject(refusal);
    expect(await a.say('T5', 'U1', 'five')).toMatchObject(refusal);
    // Another person has a minute of their own.
    expect(await b.say('T6', 'U2', 'mine')).toMatchObject({ status: 'started' });
  });

  it('THREADS_PER_USER=2: two working threads on two instances, a third is refused on either until one is done', async () => {
    const { a, b } = await twoInstances(
      { fairUse: fairUse({ threadsPerUser: 2 }) },
      { a: [stalled, stalled], b: [stalled, stalled] },
    );
    expect(await a.say('T1', 'U1', 'one')).toMatchObject({ status: 'started' });
    expect(await b.say('T2', 'U1', 'two')).toMatchObject({ status: 'started' });
    const refusal = {
      status: 'refused',
      reason: expect.stringContaining('You have 2 threads working already (the limit is 2)'),
    };
    expect(await a.say('T3', 'U1', 'three')).toMatchObject(refusal);
    expect(await b.say('T3', 'U1', 'three')).toMatchObject(refusal);
    // T1 is stopped on a: its place is free for the person on b at once.
    expect(await a.manager.interrupt(a.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    await a.manager.idle();
    expect(await b.say('T3', 'U1', 'three again')).toMatchObject({ status: 'started' });
  });

  it("a dead instance's working thread stops counting a lease after it died", async () => {
    const { a, b } = await twoInstances(
      { fairUse: fairUse({ threadsPerUser: 1 }) },
      { a: [stalled], b: [stalled, stalled, stalled] },
      1_000,
    );
    expect(await a.say('T1', 'U1', 'one')).toMatchObject({ status: 'started' });
    expect(await b.say('T2', 'U1', 'two')).toMatchObject({
      status: 'refused',
      reason: expect.stringContaining('You have 1 threads working already'),
    });
    // a dies: it renews nothing any more (its turn is left running in this process, as a frozen one would be).
    await a.die();
    // Tried until the lease (1 s) has run out, bounded by tries (generously: a busy machine); a refused try counts nothing.
    let outcome = '';
    for (let tries = 0; tries < 300 && outcome !== 'started'; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      outcome = (await b.say('T2', 'U1', 'two, again')).status;
    }
    expect(outcome).toBe('started');
  });
});

describe('MAX_CONCURRENT_MODEL_CALLS holds across instances', () => {
  const opened: { coordinator: RedisCoordinator; client: Redis }[] = [];
  afterEach(async () => {
    for (const { coordinator, client } of opened.splice(0)) {
      await coordinator.close();
      client.disconnect();
    }
  });
  const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

  async function instance(
    prefix: string,
    nodeId: string,
    max: number,
    leaseMs = 3_000,
  ): Promise<{ coordinator: RedisCoordinator; gate: ModelCallGate }> {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 0, lazyConnect: true });
    client.on('error', () => undefined);
    await client.connect();
    const subscriber = await connectedDuplicate(client);
    const coordinator = new RedisCoordinator({
      redis: client,
      subscriber,
      nodeId,
      keys: clusterKeys(prefix),
      timings: { leaseMs, sweepMs: 60_000, pollMs: 200 },
      logger: silent,
      onClose: () => subscriber.quit().then(() => undefined),
    });
    coordinator.watch({
      commandsWaiting: () => undefined,
      overdue: () => undefined,
      lost: () => undefined,
      acquired: () => undefined,
      busy: () => false,
    });
    const gate = new ModelCallGate(max, coordinator.modelSlots(max));
    await coordinator.start();
    opened.push({ coordinator, client });
    return { coordinator, gate };
  }

  it(
    'two instances with a limit of 2: 40 calls, never more than 2 in flight, every one served',
    { timeout: 60_000 },
    async () => {
      const a = await instance('slots1:', 'node-a', 2);
      const b = await instance('slots1:', 'node-b', 2);
      const random = mulberry32(20261214);
      let inFlight = 0;
      let most = 0;
      let served = 0;
      const never = new AbortController().signal;
      // Each call holds its slot over a few turns of the event loop, as a streamed answer does.
      const oneCall = async (gate: ModelCallGate): Promise<void> => {
        const release = await gate.acquire(never);
        inFlight++;
        most = Math.max(most, inFlight);
        for (let hops = Math.floor(random() * 5); hops >= 0; hops--)
          await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        served++;
        release();
      };
      await Promise.all(Array.from({ length: 40 }, (_unused, i) => oneCall(i % 2 === 0 ? a.gate : b.gate)));
      expect(served).toBe(40);
      expect(most).toBe(2);
      expect(a.gate.load).toEqual({ running: 0, waiting: 0 });
      expect(b.gate.load).toEqual({ running: 0, waiting: 0 });
    },
  );

  it(
    "a dead instance's slots come back a lease after it died; a stop while waiting leaves the line",
    { timeout: 30_000 },
    async () => {
      const a = await instance('slots2:', 'node-a', 2, 1_000);
      const b = await instance('slots2:', 'node-b', 2, 1_000);
      const never = new AbortController().signal;
      await a.gate.acquire(never);
      await a.gate.acquire(never);
      // a dies holding both: no renewal, no release.
      a.coordinator.halt();
      // A call on b waits in line; stopped there, it leaves the line at once.
      const stopped = new AbortController();
      const waits: number[] = [];
      let inLine!: () => void;
      const queued = new Promise<void>((resolve) => (inLine = resolve));
      const gaveUp = b.gate
        .acquire(stopped.signal, (ahead) => {
          waits.push(ahead);
          inLine();
        })
        .catch((error: unknown) => error);
      await queued;
      expect(b.gate.load).toEqual({ running: 0, waiting: 1 });
      stopped.abort(new Error('stopped by the person'));
      expect(await gaveUp).toMatchObject({ message: 'stopped by the person' });
      expect(b.gate.load).toEqual({ running: 0, waiting: 0 });
      // The next one waits too, until a's slots have lapsed (1 s lease, never renewed), then gets one.
      const release = await b.gate.acquire(never, (ahead) => waits.push(ahead));
      expect(waits).toEqual([0, 0]);
      expect(b.gate.load).toEqual({ running: 1, waiting: 0 });
      release();
    },
  );
});

describe('MAX_CONCURRENT_MODEL_CALLS through two assembled cores on one Redis', () => {
  it(
    'four threads, two per instance, with a limit of 2: two calls reach the model, the others wait (and say so) until one ends',
    { timeout: 60_000 },
    async () => {
      const dir = await tempDir('limits-core-');
      cleanups.push(dir.remove);
      const llm = await new FakeOpenAI().start();
      cleanups.push(() => llm.stop());
      const held = Array.from({ length: 4 }, (_unused, i) => llm.replyTextHeld(`Answer ${i}, in full.`, 1));
      const env = {
        ...coreTestEnv(dir.path, llm),
        STORE_URL: redis.url,
        COORDINATION_URL: redis.url,
        MAX_CONCURRENT_MODEL_CALLS: '2',
        CLUSTER_LEASE_MS: '3000',
      };
      const waiting = new Set<string>();
      const answered = new Set<string>();
      const cores: Core[] = [];
      for (let i = 0; i < 2; i++) {
        const core = await startCore(loadConfig(env), { logger: memoryLogger() });
        cleanups.push(() => core.close());
        core.observers.add('test', {
          onWaiting: (session, ahead) =>
            void (ahead === null ? waiting.delete(session.key.thread) : waiting.add(session.key.thread)),
          onEvent: (session, event) =>
            void (event.type === 'turn_end' && event.status === 'completed'
              ? answered.add(session.key.thread)
              : undefined),
        });
        await core.recover();
        cores.push(core);
      }
      const key = (thread: string) => ({ platform: 'test', workspace: 'W1', channel: 'C1', thread });
      for (const [i, thread] of ['T1', 'T2', 'T3', 'T4'].entries()) {
        expect(
          await cores[i % 2]!.manager.deliver(key(thread), {
            text: `question ${thread}`,
            userId: `U${i}`,
            eventId: `e-${thread}`,
          }),
        ).toMatchObject({ status: 'started' });
      }
      // Two calls reach the model; the other two asked for a slot and were told to wait (the
      // barrier: a call reports its wait only once the bot-wide slots said no).
      await waitFor(() => llm.requests.length === 2 && waiting.size === 2, 20_000);
      expect(llm.requests).toHaveLength(2);
      // One answer ends: one waiting call gets its slot, whichever instance it is on; then the next.
      held[0]!.release();
      await waitFor(() => llm.requests.length === 3 && waiting.size === 1, 20_000);
      expect(llm.requests).toHaveLength(3);
      for (const hold of held) hold.release();
      await waitFor(() => answered.size === 4, 20_000);
      expect(llm.requests).toHaveLength(4);
    },
  );
});
