// A small in-process connector for the session layer's tests: it plays a chat platform
// (threads, users, buttons, a stop reaction) against a real SessionManager with a real
// store, and records what the bot showed. The Slack and Discord connectors plug into the
// same SessionManager calls.
import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import { inject } from 'vitest';
import { clusterKeys, type ClusterKeys } from '../../src/cluster/cluster-keys.js';
import { RedisCoordinator, type ClusterTimings } from '../../src/cluster/redis-coordinator.js';
import { connectedDuplicate } from '../../src/cluster/redis-keyv-store.js';
import { redisIdSet } from '../../src/cluster/redis-id-set.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineEvent, InboxItem, ToolDefinition } from '../../src/engine/index.js';
import { AccessPolicy, parseAccessConfig } from '../../src/sessions/access-policy.js';
import { InProcessCoordinator } from '../../src/sessions/coordination.js';
import type { EngineSetup } from '../../src/sessions/live-session.js';
import {
  SessionManager,
  type InputDisposition,
  type SessionManagerOptions,
} from '../../src/sessions/session-manager.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { PersistentInbox } from '../../src/store/persistent-inbox.js';
import { sessionIdOf, SessionStore, type SessionKey, type SessionRecord } from '../../src/store/session-store.js';
import type { ScriptedProvider } from '../fakes/scripted-provider.js';
import { waitFor } from './engine-kit.js';

export interface Shown {
  sessionId: string;
  event: EngineEvent;
  prompt?: InboxItem;
}

export interface TestBotOptions {
  provider: ScriptedProvider;
  tools?: ToolDefinition[];
  storeUrl?: string;
  allowedUsers?: string;
  admins?: string;
  setup?: Partial<EngineSetup>;
  manager?: Partial<SessionManagerOptions>;
  /**
   * Cluster mode: the bot is one instance on this Redis (default: the `sessions-on-redis`
   * test project's, so the session tests also run on the Redis coordinator). Bots with the same `storeUrl` share keys; others are kept apart.
   */
  cluster?: { url: string; timings?: Partial<ClusterTimings> };
  /** Awaited as each event is shown, like a platform call that draws it: a test can act at that instant. */
  onShown?: (event: EngineEvent, bot: TestBot) => void | Promise<void>;
}

export class TestBot {
  readonly shown: Shown[] = [];
  readonly inputs: { sessionId: string; inputId: string; disposition: InputDisposition }[] = [];
  readonly closedPrompts: InboxItem[] = [];
  private nextEvent = 1;
  /** Event ids differ between bots sharing a store, as real platform ids do. */
  private readonly instance = Math.random().toString(36).slice(2, 8);

  private constructor(
    readonly manager: SessionManager,
    readonly store: SessionStore,
    readonly inbox: PersistentInbox,
    private readonly opened: OpenedStore,
    /** Cluster mode: this bot's coordinator. */
    readonly coordinator?: RedisCoordinator,
    private readonly keys: ClusterKeys = clusterKeys(),
  ) {}

  /**
   * The store a bot started with `storeUrl` uses: that URL, or in cluster mode the Redis,
   * under keys of that URL's own (for crash states written by hand).
   */
  static openStore(
    storeUrl: string | undefined,
    clusterUrl = clusterRedisUrl(),
    keys = testKeys(storeUrl),
  ): Promise<OpenedStore> {
    return clusterUrl ? openKeyvStore(clusterUrl, 'bot', { keys }) : openKeyvStore(storeUrl ?? 'memory://');
  }

  /** The session store a bot started with `storeUrl` sees (in cluster mode, its open index is the shared Redis set). */
  static sessionStore(opened: OpenedStore, storeUrl: string | undefined, clusterUrl = clusterRedisUrl()): SessionStore {
    if (!clusterUrl || !opened.redis) return new SessionStore(opened.keyv);
    const keys = testKeys(storeUrl);
    return new SessionStore(
      opened.keyv,
      redisIdSet(opened.redis, keys.openSessions),
      redisIdSet(opened.redis, keys.allSessions),
    );
  }

  static async start(options: TestBotOptions): Promise<TestBot> {
    const clusterUrl = options.cluster?.url ?? clusterRedisUrl();
    const keys = testKeys(options.storeUrl);
    const opened = await TestBot.openStore(options.storeUrl, clusterUrl, keys);
    const store = TestBot.sessionStore(opened, options.storeUrl, clusterUrl);
    const coordinator =
      clusterUrl && opened.redis
        ? clusterTestCoordinator(opened.redis, await connectedDuplicate(opened.redis), keys, options.cluster?.timings)
        : undefined;
    const inbox = new PersistentInbox(
      store,
      coordinator
        ? { claim: (id) => coordinator.resolveOnce(id), release: (id) => coordinator.unresolve(id) }
        : undefined,
    );
    const holder: { bot?: TestBot } = {};
    const manager = new SessionManager({
      store,
      inbox,
      coordinator: coordinator ?? new InProcessCoordinator(store),
      access: new AccessPolicy(parseAccessConfig(options.allowedUsers, options.admins)),
      defaultModel: 'scripted-model',
      engineSetup: () => ({ provider: options.provider, tools: options.tools ?? [], ...options.setup }),
      observer: {
        onEvent: async (session, event, prompt) => {
          holder.bot!.shown.push({ sessionId: session.id, event, ...(prompt ? { prompt } : {}) });
          await options.onShown?.(event, holder.bot!);
        },
        onInput: (session, inputId, disposition) => {
          holder.bot!.inputs.push({ sessionId: session.id, inputId, disposition });
        },
        onPromptClosed: (_session, item) => {
          holder.bot!.closedPrompts.push(item);
        },
      },
      // Failures inside turns are logged, not thrown: surface them in test output.
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (details, message) => console.warn(`[bot] ${message}`, details),
        error: (details, message) => console.error(`[bot] ${message}`, details),
      },
      ...options.manager,
    });
    const bot = new TestBot(manager, store, inbox, opened, coordinator, keys);
    holder.bot = bot;
    await coordinator?.start();
    return bot;
  }

  static thread(thread: string, channel = 'C1'): SessionKey {
    return { platform: 'test', workspace: 'W1', channel, thread };
  }

  /** A session record as the bot stores it for a thread U1 started (for crash states written by hand). */
  static record(thread: string, extra: Partial<SessionRecord> = {}): SessionRecord {
    const now = Date.now();
    const key = TestBot.thread(thread);
    return {
      id: sessionIdOf(key),
      key,
      model: 'scripted-model',
      grants: { tools: [], commands: [] },
      compaction: null,
      startedBy: 'U1',
      steerers: [],
      directories: [],
      createdAt: now,
      updatedAt: now,
      ...extra,
    };
  }

  /** A user posts in a thread (a mention, a reply): the platform's event id is fresh unless given. */
  say(thread: string, userId: string, text: string, eventId = `ev-${this.instance}-${this.nextEvent++}`) {
    return this.manager.deliver(TestBot.thread(thread), {
      text,
      userId,
      eventId,
      source: { platform: 'test', channel: 'C1', thread, userId, messageId: eventId },
    });
  }

  events(thread: string): EngineEvent[] {
    const id = sessionIdOf(TestBot.thread(thread));
    return this.shown.filter((s) => s.sessionId === id).map((s) => s.event);
  }

  /** The prompt (inbox item) behind the latest card of this kind in the thread. */
  async waitForPrompt(thread: string, kind: EngineEvent['type'] = 'permission_required'): Promise<InboxItem> {
    const id = sessionIdOf(TestBot.thread(thread));
    await waitFor(() => this.shown.some((s) => s.sessionId === id && s.event.type === kind && s.prompt));
    return [...this.shown].reverse().find((s) => s.sessionId === id && s.event.type === kind && s.prompt)!.prompt!;
  }

  async waitForEvent(thread: string, type: EngineEvent['type'], count = 1): Promise<void> {
    await waitFor(() => this.events(thread).filter((e) => e.type === type).length >= count);
  }

  sessionId(thread: string): string {
    return sessionIdOf(TestBot.thread(thread));
  }

  private stopped = false;

  /**
   * The process "dies" (restart tests): in cluster mode its coordinator stops renewing and
   * its leases run out now, as they would a lease time after a real death. (In one process
   * the abandoned bot needs nothing: the next one simply opens the same store.)
   */
  async die(): Promise<void> {
    if (!this.coordinator || !this.opened.redis) return;
    for (const sessionId of this.coordinator.halt()) await this.opened.redis.pexpire(this.keys.lease(sessionId), 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.manager.shutdown(100);
    await this.coordinator?.close();
    await this.opened.close();
  }
}

export async function tempDir(prefix = 'chat-agent-'): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  // mkdtemp makes it 700: a root bot's commands run as another uid and must pass through it
  // to reach a workspace inside (as they must through a real bot's folder).
  await chmod(path, 0o755);
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** The `sessions-on-redis` project's Redis (cluster-global-setup.ts), or TEST_CLUSTER_REDIS_URL; none elsewhere. */
function clusterRedisUrl(): string | undefined {
  return process.env.TEST_CLUSTER_REDIS_URL ?? inject('clusterRedisUrl');
}

/** Bots with the same store URL share keys in the cluster's Redis; any other bot gets its own. */
function testKeys(storeUrl: string | undefined): ClusterKeys {
  return clusterKeys(
    `t${createHash('sha256')
      .update(storeUrl ?? randomUUID())
      .digest('hex')
      .slice(0, 12)}:`,
  );
}

/** One test instance's coordinator: short timings, so takeovers happen within a test. */
function clusterTestCoordinator(
  redis: Redis,
  subscriber: Redis,
  keys: ClusterKeys,
  timings: Partial<ClusterTimings> = {},
): RedisCoordinator {
  return new RedisCoordinator({
    redis,
    subscriber,
    keys,
    timings: { leaseMs: 3_000, sweepMs: 200, pollMs: 100, ...timings },
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: (details, message) => console.warn(`[cluster] ${message}`, details),
      error: (details, message) => console.error(`[cluster] ${message}`, details),
    },
    onClose: () => subscriber.quit().then(() => undefined),
  });
}
