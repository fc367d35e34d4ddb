// The sessions this process holds in memory, each built once from the store (a second
// request for a session being built waits for the same build) and dropped again after a
// while idle. A session is busy while a turn is reserved or its driver still runs; a busy
// session is never dropped.
import type { EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { PersistentToolLedger } from '../store/persistent-tool-ledger.js';
import type { SessionKey, SessionStore } from '../store/session-store.js';
import { buildLiveSession, type EngineSetupFactory, type GrantScope, type LiveSession } from './live-session.js';

export interface LiveSessionsOptions {
  store: SessionStore;
  inbox: PersistentInbox;
  ledger: PersistentToolLedger;
  engineSetup: EngineSetupFactory;
  defaultModel: string;
  grantScope: GrantScope;
  logger: EngineLogger;
}

export function isBusy(live: LiveSession): boolean {
  return live.engine.isRunning || live.turn !== null;
}

export class LiveSessions {
  private readonly live = new Map<string, LiveSession>();
  private readonly building = new Map<string, Promise<LiveSession>>();

  constructor(private readonly options: LiveSessionsOptions) {}

  /** The session if it is in memory now (no store read). */
  peek(sessionId: string): LiveSession | undefined {
    return this.live.get(sessionId);
  }

  /**
   * The session, built from the store if need be. With `key`, a session that does not exist
   * yet is created (a first message in a thread); `starter` is who started it.
   */
  get(sessionId: string, key?: SessionKey, starter?: string): Promise<LiveSession> {
    const existing = this.live.get(sessionId);
    if (existing) return Promise.resolve(existing);
    let building = this.building.get(sessionId);
    if (!building) {
      building = this.build(sessionId, key, starter).finally(() => this.building.delete(sessionId));
      this.building.set(sessionId, building);
    }
    return building;
  }

  private async build(sessionId: string, key: SessionKey | undefined, starter: string | undefined): Promise<LiveSession> {
    const { store, inbox, ledger, defaultModel, grantScope } = this.options;
    let record = await store.getSession(sessionId);
    if (!record) {
      if (!key) throw new Error(`unknown session ${sessionId}`);
      const now = Date.now();
      record = { id: sessionId, key, model: defaultModel, grants: { tools: [], commands: [] }, compaction: null, steerers: [], directories: [], createdAt: now, updatedAt: now };
      if (starter !== undefined) record.startedBy = starter;
      await store.saveSession(record);
    }
    const live = await buildLiveSession({ record, store, inbox, ledger, setup: await this.options.engineSetup(record), grantScope });
    this.live.set(sessionId, live);
    return live;
  }

  all(): LiveSession[] {
    return [...this.live.values()];
  }

  get size(): number {
    return this.live.size;
  }

  /** Drop a session from memory (not from the store), unless it is busy. */
  async evict(sessionId: string): Promise<void> {
    const live = this.live.get(sessionId);
    if (!live || isBusy(live)) return;
    this.live.delete(sessionId);
    this.options.ledger.forget(sessionId);
    try {
      await live.setup.dispose?.();
    } catch (error) {
      this.options.logger.warn({ err: error, sessionId }, 'disposing a session failed');
    }
  }

  async evictIdle(idleMs: number, now = Date.now()): Promise<void> {
    for (const [id, live] of this.live) {
      if (!isBusy(live) && now - live.lastUsed > idleMs) await this.evict(id);
    }
  }
}
