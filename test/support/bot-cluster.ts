// Several whole bots in cluster mode, as a deployment runs them: N processes of `npm start`'s
// command (bot-process.ts) in Slack HTTP mode with the same environment
// (the fake Slack API, the fake model, one Redis as COORDINATION_URL and store, short lease
// and sweep times), each on its own random port, behind the round-robin proxy a load
// balancer would be. What a test needs to play the cluster's bad days is here: deliver an
// event or a click to a chosen instance or through the proxy; SIGKILL, SIGSTOP/SIGCONT,
// SIGTERM and start an instance again (the proxy follows it to its new port); and ask Redis
// which instance owns a session (the lease holds `{node}:{epoch}`, and each instance logs
// its node id when cluster mode starts).
//
// The one idea: an instance is known by its slot (0…N-1), not by its process. A restart
// puts a new process (a new node id) in the same slot, so "instance 1" stays a place a
// test can send to.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { sessionIdOf } from '../../src/store/session-store.js';
import type { FakeOpenAI } from '../fakes/openai-server.js';
import { SLACK_IDS, type BlockActionsPayload, type EventCallbackBody } from '../fakes/slack-payloads.js';
import type { FakeSlack } from '../fakes/slack-server.js';
import { sendEvent, sendInteraction, type EventRetryOptions, type SlackDelivery } from '../fakes/slack-signer.js';
import { BotProcess } from './bot-process.js';
import type { RedisServer } from './redis-server.js';
import { RoundRobinProxy } from './round-robin-proxy.js';

const CLUSTER_SECRET = 'cluster-signing-secret';
/** The log line each instance prints when cluster mode starts (src/cluster/cluster-setup.ts), with its `node` id. */
const CLUSTER_LINE = 'cluster mode: sessions are shared through Redis';
/** The prefix of every key the bot writes (src/cluster/cluster-keys.ts, the default). */
const KEY_PREFIX = 'chat-agent:';
/** How long one instance may take to start: generous, as several start at once on a machine that may be busy. */
const START_TIMEOUT_MS = 60_000;
/** What an instance logs when its sweep took a session over (src/sessions/cluster-routing.ts). */
const TAKEOVER_LINE = 'cluster: took a session over';

export interface BotClusterOptions {
  size: number;
  redis: RedisServer;
  slack: FakeSlack;
  llm: FakeOpenAI;
  /** A temporary folder: the shared workspace and each process's cwd. */
  dir: string;
  /** More settings, the same for every instance (PERMISSION_MODE, SHELL_SANDBOX…). */
  env?: Record<string, string>;
  /** Default 2000 ms (the minimum is 1000). */
  leaseMs?: number;
  /** Default 200 ms. */
  sweepMs?: number;
}

/** A target: an instance's slot, or 'proxy' for the round-robin load balancer. */
export type Target = number | 'proxy';

export class BotCluster {
  /** The live process of each slot (a stopped one stays until it is started again). */
  readonly instances: BotProcess[] = [];
  /** Every process ever started, for clean-up and diagnostics. */
  readonly lives: BotProcess[] = [];
  /** Node id → slot, for every process ever started. */
  private readonly slots = new Map<string, number>();
  private constructor(
    readonly env: Record<string, string>,
    readonly options: BotClusterOptions,
    readonly redisClient: Redis,
    readonly proxy: RoundRobinProxy,
  ) {}

  /** Start `size` instances at once, then the proxy in front of them. */
  static async start(options: BotClusterOptions): Promise<BotCluster> {
    const { dir, slack, llm, redis } = options;
    const workspace = join(dir, 'workspace');
    await mkdir(workspace, { recursive: true });
    // No such file: no MCP servers (as the other whole-bot tests run).
    const mcpConfig = join(dir, 'no-mcp.json');
    const env: Record<string, string> = {
      MODEL: 'openai:gpt-4.1',
      OPENAI_API_KEY: 'sk-cluster-test',
      OPENAI_BASE_URL: llm.baseURL,
      SLACK_BOT_TOKEN: 'xoxb-cluster-test',
      SLACK_SIGNING_SECRET: CLUSTER_SECRET,
      SLACK_API_URL: slack.apiUrl,
      PORT: '0',
      COORDINATION_URL: redis.url,
      CLUSTER_LEASE_MS: String(options.leaseMs ?? 2_000),
      CLUSTER_SWEEP_MS: String(options.sweepMs ?? 200),
      WORKSPACE_DIR: workspace,
      MCP_CONFIG: mcpConfig,
      PERMISSION_MODE: 'interactive',
      LOG_LEVEL: 'info',
      ...options.env,
    };
    const redisClient = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    redisClient.on('error', () => undefined);
    await redisClient.connect();
    const started = await Promise.allSettled(
      Array.from({ length: options.size }, () => BotProcess.start(env, dir, START_TIMEOUT_MS)),
    );
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      for (const s of started) if (s.status === 'fulfilled') await s.value.kill();
      redisClient.disconnect();
      throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    }
    const bots = started.map((s) => (s as PromiseFulfilledResult<BotProcess>).value);
    const proxy = await RoundRobinProxy.start(bots.map((bot) => `http://127.0.0.1:${bot.port}`));
    const cluster = new BotCluster(env, options, redisClient, proxy);
    bots.forEach((bot, slot) => cluster.place(slot, bot));
    return cluster;
  }

  get size(): number {
    return this.instances.length;
  }

  /** The node id an instance logged when cluster mode started. */
  nodeOf(slot: number): string {
    return nodeIdOf(this.instance(slot));
  }

  instance(slot: number): BotProcess {
    const bot = this.instances[slot];
    if (!bot) throw new Error(`no instance ${slot} (there are ${this.instances.length})`);
    return bot;
  }

  /** Where Slack's request for `target` goes (the proxy forwards to `/slack/events` of the backend). */
  urlOf(target: Target): string {
    return target === 'proxy' ? `${this.proxy.url}/slack/events` : this.instance(target).eventsUrl;
  }

  /** Deliver an Events API body to one instance, or through the proxy. */
  sendEvent(
    target: Target,
    body: EventCallbackBody<{ type: string }>,
    options: EventRetryOptions = {},
  ): Promise<SlackDelivery> {
    return sendEvent(this.urlOf(target), CLUSTER_SECRET, body, options);
  }

  /** Deliver a click (block_actions) to one instance, or through the proxy. */
  click(target: Target, payload: BlockActionsPayload): Promise<SlackDelivery> {
    return sendInteraction(this.urlOf(target), CLUSTER_SECRET, payload);
  }

  /** SIGKILL the instance and wait until it is gone. */
  async kill(slot: number): Promise<void> {
    await this.instance(slot).kill();
  }

  /** SIGSTOP: the process holds its sockets and does nothing (a long GC pause, a frozen VM). */
  pause(slot: number): void {
    this.instance(slot).signal('SIGSTOP');
  }

  resume(slot: number): void {
    this.instance(slot).signal('SIGCONT');
  }

  /** SIGTERM (a graceful stop: leases handed over) and wait for the exit; the exit code. */
  async terminate(slot: number, timeoutMs = 20_000): Promise<number | null | 'hung'> {
    const bot = this.instance(slot);
    bot.signal('SIGTERM');
    const timer = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), timeoutMs).unref());
    return Promise.race([bot.exited, timer]);
  }

  /** Start a new process in the slot (after kill or terminate); the proxy follows it to its new port. */
  async restart(slot: number): Promise<BotProcess> {
    const old = this.instance(slot);
    if (old.alive) await old.kill();
    const bot = await BotProcess.start(this.env, this.options.dir, START_TIMEOUT_MS);
    this.place(slot, bot);
    this.proxy.setBackend(slot, `http://127.0.0.1:${bot.port}`);
    return bot;
  }

  /** The slot whose current process holds the session's lease now, or undefined (no lease, or a process no longer in a slot). */
  async ownerOf(sessionId: string): Promise<number | undefined> {
    const holder = await this.leaseOf(sessionId);
    if (!holder) return undefined;
    const slot = this.slots.get(holder.node);
    return slot !== undefined && this.nodeOf(slot) === holder.node ? slot : undefined;
  }

  /** The lease as stored: `{node}:{epoch}`, split. */
  async leaseOf(sessionId: string): Promise<{ node: string; epoch: number } | undefined> {
    const value = await this.redisClient.get(`${KEY_PREFIX}lease:{${sessionId}}`);
    if (!value) return undefined;
    const at = value.lastIndexOf(':');
    return { node: value.slice(0, at), epoch: Number(value.slice(at + 1)) };
  }

  /** Wait until the session has an owner that `accept`s; its slot. */
  async waitForOwner(
    sessionId: string,
    accept: (slot: number) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const slot = await this.ownerOf(sessionId).catch(() => undefined);
      if (slot !== undefined && accept(slot)) return slot;
      if (Date.now() > deadline)
        throw new Error(
          `no accepted owner of ${sessionId} within ${timeoutMs} ms (lease: ${JSON.stringify(await this.leaseOf(sessionId).catch(() => 'unreadable'))})${this.story()}`,
        );
      await sleep(25);
    }
  }

  /** Every takeover an instance logged for the session ('cluster: took a session over'), oldest first: by which slot, when (its clock). */
  takeovers(sessionId: string): { slot: number | undefined; at: number; inFlight: boolean }[] {
    return this.lives
      .flatMap((bot) =>
        bot
          .lines()
          .filter((line) => line.msg === TAKEOVER_LINE && line.sessionId === sessionId)
          .map((line) => ({
            slot: this.slots.get(safeNode(bot) ?? ''),
            at: Number(line.time),
            inFlight: line.inFlight === true,
          })),
      )
      .sort((a, b) => a.at - b.at);
  }

  /** Wait until an instance other than `from` logged that it took the session over; that takeover. */
  async waitForTakeover(
    sessionId: string,
    from: number,
    timeoutMs = 15_000,
  ): Promise<{ slot: number; at: number; inFlight: boolean }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.takeovers(sessionId).find((t) => t.slot !== undefined && t.slot !== from);
      if (found) return found as { slot: number; at: number; inFlight: boolean };
      if (Date.now() > deadline)
        throw new Error(
          `no instance took ${sessionId} over from instance ${from} within ${timeoutMs} ms${this.story()}`,
        );
      await sleep(25);
    }
  }

  /** The last log lines of every process, for a failing assertion's message. */
  story(chars = 2_500): string {
    return this.lives
      .map((bot) => {
        const slot = this.slots.get(safeNode(bot) ?? '') ?? '?';
        return `\n--- instance ${slot} (pid ${bot.pid}, ${bot.alive ? 'alive' : 'gone'}) stdout:\n${bot.stdout.slice(-chars)}\nstderr:\n${bot.stderr.slice(-1_000)}`;
      })
      .join('');
  }

  /** Every process killed, the proxy and the Redis client closed. */
  async dispose(): Promise<void> {
    for (const bot of this.lives) {
      bot.signal('SIGCONT');
      await bot.kill();
    }
    await this.proxy.close();
    this.redisClient.disconnect();
  }

  private place(slot: number, bot: BotProcess): void {
    this.instances[slot] = bot;
    this.lives.push(bot);
    this.slots.set(nodeIdOf(bot), slot);
  }
}

/** The session id of a Slack thread in the fake workspace. */
export function slackSessionId(threadTs: string, channel: string = SLACK_IDS.channelId): string {
  return sessionIdOf({ platform: 'slack', workspace: SLACK_IDS.teamId, channel, thread: threadTs });
}

function nodeIdOf(bot: BotProcess): string {
  const node = safeNode(bot);
  if (!node)
    throw new Error(
      `the instance did not log "${CLUSTER_LINE}" with its node id (is COORDINATION_URL set?)\n${bot.stdout.slice(-2_000)}`,
    );
  return node;
}

function safeNode(bot: BotProcess): string | undefined {
  const line = bot.lines().find((l) => l.msg === CLUSTER_LINE);
  return typeof line?.node === 'string' ? line.node : undefined;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
