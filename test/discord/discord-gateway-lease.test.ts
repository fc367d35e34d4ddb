// Discord in cluster mode: two bots (each one instance: its own core, coordinator and
// discord.js client) on one real redis-server and one fake Discord. Only the holder of the
// gateway's lease connects; the other stands by, posting through REST, and connects when the
// holder dies; a mention both receive during the handover is answered once.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DiscordConnector, type DiscordStartInfo } from '../../connectors/discord/discord-connector.js';
import { clusterKeys } from '../../src/cluster/cluster-keys.js';
import type { SingletonLease } from '../../src/cluster/singleton-lease.js';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { DISCORD_IDS, mention } from '../fakes/discord-payloads.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { RedisServer } from '../support/redis-server.js';
import { tempDir } from '../support/test-connector.js';

// Long enough that a busy machine's stalls (a process left without CPU for a second) do not
// pass for a dead holder; the waits below count renewals and events, not this clock.
const LEASE_MS = 3_000;
const GATEWAY_KEY = clusterKeys().singleton('discord-gateway');

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
});

interface Instance {
  name: string;
  core: Core;
  connector: DiscordConnector;
  logs: ReturnType<typeof memoryLogger>;
  info: DiscordStartInfo;
  /** The gateway's lease as the connector took it from the core. */
  lease: () => SingletonLease;
  /** The process dies: no renewal, no release, no shutdown note; its gateway connection drops. */
  die(): Promise<void>;
  stop(): Promise<void>;
}

interface World {
  dir: string;
  fake: FakeDiscord;
  llm: FakeOpenAI;
  instances: Instance[];
  remove(): Promise<void>;
}

let world: World | undefined;
afterEach(async () => {
  if (!world) return;
  for (const instance of world.instances.reverse()) await instance.stop();
  await world.fake.stop();
  await world.llm.stop();
  await world.remove();
  await onRedis((client) => client.flushall());
  world = undefined;
});

async function cluster(): Promise<World> {
  const dir = await tempDir('discord-gateway-');
  const fake = await new FakeDiscord().start();
  const llm = await new FakeOpenAI().start();
  world = { dir: dir.path, fake, llm, instances: [], remove: () => dir.remove() };
  return world;
}

async function boot(w: World, name: string): Promise<Instance> {
  const logs = memoryLogger();
  const config = loadConfig({
    ...coreTestEnv(`${w.dir}/${name}`, w.llm),
    STORE_URL: redis.url,
    CLUSTER_LEASE_MS: String(LEASE_MS),
    CLUSTER_SWEEP_MS: '200',
    DISCORD_TOKEN: w.fake.token,
    DISCORD_API_URL: w.fake.apiUrl,
  });
  const core = await startCore(config, { logger: logs });
  let lease: SingletonLease | undefined;
  const singleton = core.singleton!.bind(core);
  core.singleton = (leaseName) => (lease = singleton(leaseName));
  const connector = DiscordConnector.create({ config, core, logger: logs, answerIntervalMs: 50 });
  await core.recover();
  const info = await connector.start();
  let dead = false;
  let stopped = false;
  const instance: Instance = {
    name,
    core,
    connector,
    logs,
    info,
    lease: () => lease!,
    async die() {
      dead = true;
      lease!.halt();
      await connector.close();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (dead) await core.manager.shutdown(0);
      else await connector.stop();
      await core.close();
    },
  };
  w.instances.push(instance);
  return instance;
}

const holding = (i: Instance): boolean => i.connector.holdsGateway && i.connector.client.isReady();

describe('the Discord gateway in cluster mode', () => {
  it('only one instance connects to the gateway; the other stands by and says so', async () => {
    const w = await cluster();
    const a = await boot(w, 'a');
    const b = await boot(w, 'b');
    expect(a.info).toMatchObject({ gateway: 'holder', botUserId: DISCORD_IDS.botUserId });
    expect(b.info).toEqual({ gateway: 'standby', botUserId: DISCORD_IDS.botUserId });
    expect(
      b.logs.lines.some((line) => line.message === 'Discord gateway: standing by (another instance holds it)'),
    ).toBe(true);
    expect(w.fake.gateway.openConnections).toBe(1);
    expect(w.fake.gateway.identifyCount).toBe(1);
    // Several renewals later (more than a lease), still one connection, never a second Identify.
    for (let renewal = 0; renewal < 4; renewal++) await nextRenewal();
    expect(w.fake.gateway.openConnections).toBe(1);
    expect(w.fake.gateway.identifyCount).toBe(1);
    expect(holding(a)).toBe(true);
    expect(b.connector.holdsGateway).toBe(false);
  });

  it('when the holder dies, the standby connects within lease + retry, and answers the next mention', async () => {
    const w = await cluster();
    const a = await boot(w, 'a');
    const b = await boot(w, 'b');
    await a.die();
    // Once a's key runs out, b's next retry takes it (how soon is the scale-out bench's to measure).
    await waitFor(() => holding(b), LEASE_MS * 5);
    expect(w.fake.gateway.openConnections).toBe(1);
    await waitFor(
      () => b.logs.lines.some((line) => line.message === 'Discord gateway: connected (holding it)'),
      10_000,
    );

    w.llm.replyText('Answered by the new holder.');
    const asked = w.fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} are you there?` });
    await waitFor(() => botPosts(w, asked.id).some((m) => m.content.includes('Answered by the new holder.')), 8_000);
  });

  it('a clean shutdown hands the gateway over at once, not a lease later', async () => {
    const w = await cluster();
    const a = await boot(w, 'a');
    const b = await boot(w, 'b');
    const holder = await onRedis((client) => client.get(GATEWAY_KEY));
    expect(holder).not.toBeNull();
    await a.stop();
    // a dropped its key as it stopped (it did not leave it to run out): b takes it at its next retry.
    expect(await onRedis((client) => client.get(GATEWAY_KEY))).not.toBe(holder);
    await waitFor(() => holding(b), LEASE_MS * 3);
  });

  it('a mention both receive while a stalled holder and its successor overlap is answered once', async () => {
    const w = await cluster();
    const a = await boot(w, 'a');
    const b = await boot(w, 'b');
    // a stalls: no renewal, but its gateway connection stays up (a paused process that wakes later).
    a.lease().halt();
    await waitFor(() => holding(b), LEASE_MS * 3);
    // Its lease stopped with its renewals, but its connection still receives events.
    expect(a.connector.client.isReady()).toBe(true);
    expect(w.fake.gateway.openConnections).toBe(2);

    w.llm.replyText('Only once.');
    const asked = w.fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} one answer please` });
    await waitFor(() => botPosts(w, asked.id).some((m) => m.content.includes('Only once.')), 8_000);
    // Both connections were sent the mention.
    const deliveries = w.fake.gateway.sent.filter(
      (f) => f.t === 'MESSAGE_CREATE' && (f.d as { id?: string }).id === asked.id,
    );
    expect(new Set(deliveries.map((f) => f.connection)).size).toBe(2);
    // Barrier: a second mention, which both receive too, answered; the first one then had all
    // the time its second delivery needs to be recognised as one already taken.
    w.llm.replyText('And this once too.');
    const again = w.fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} and another` });
    await waitFor(() => botPosts(w, again.id).some((m) => m.content.includes('And this once too.')), 15_000);
    await a.core.manager.idle();
    await b.core.manager.idle();
    expect(w.llm.requests).toHaveLength(2);
    expect(botPosts(w, asked.id).filter((m) => m.content.includes('Only once.'))).toHaveLength(1);
    expect(
      w.fake.rest
        .callsTo('POST /channels/:channel/messages/:message/threads')
        .filter((c) => c.params.message === asked.id && c.status === 201),
    ).toHaveLength(1);
  });

  it('a holder whose lease is taken from under it disconnects; the taker connects', async () => {
    const w = await cluster();
    const a = await boot(w, 'a');
    const b = await boot(w, 'b');
    // Another instance's value in the key (what a holder that paused past its lease finds).
    await onRedis((client) => client.set(GATEWAY_KEY, 'someone-else', 'PX', LEASE_MS));
    await waitFor(() => !a.connector.holdsGateway, LEASE_MS * 2);
    await w.fake.gateway.waitForNoConnections(LEASE_MS * 2);
    expect(
      a.logs.lines.some(
        (line) => line.message === 'Discord gateway: lease lost; disconnecting (another instance takes over)',
      ),
    ).toBe(true);
    // 'someone-else' never renews: one of the two takes the gateway back; only one connects.
    await waitFor(() => holding(a) || holding(b), LEASE_MS * 4);
    // Two renewals by the new holder: the other one's retries came and went meanwhile.
    await nextRenewal();
    await nextRenewal();
    expect(w.fake.gateway.openConnections).toBe(1);
    expect([a, b].filter((i) => i.connector.holdsGateway)).toHaveLength(1);
  });
});

function botPosts(w: World, channelId: string) {
  return w.fake.thread(channelId).filter((m) => m.author.id === DISCORD_IDS.botUserId);
}

async function onRedis<T>(work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(redis.url);
  try {
    return await work(client);
  } finally {
    client.disconnect();
  }
}

/** Resolves once the gateway's lease has been renewed (its time to live in Redis went up): counted by work, not by a clock. */
async function nextRenewal(): Promise<void> {
  await onRedis(async (client) => {
    let last = await client.pttl(GATEWAY_KEY);
    for (;;) {
      const now = await client.pttl(GATEWAY_KEY);
      if (now > last) return;
      last = now;
    }
  });
}
