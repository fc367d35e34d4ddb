// The sessions this process holds in memory, each built once from the store (a second
// request for a session being built waits for the same build) and dropped again after a
// while idle, or when more than `maxLive` are held (the least recently used go first: a bot
// that answered ten thousand threads holds a few hundred, and rebuilds any other from the
// store when it is next needed). A session is busy while a turn is reserved or its driver
// still runs; a busy session is never dropped.
import type { EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { PersistentToolLedger } from '../store/persistent-tool-ledger.js';
import type { SessionKey, SessionRecord, SessionStore } from '../store/session-store.js';
import { buildLiveSession, type EngineSetupFactory, type GrantScope, type LiveSession } from './live-session.js';
import type { SessionProfiles } from './session-profiles.js';

export interface LiveSessionsOptions {
  store: SessionStore;
  inbox: PersistentInbox;
  ledger: PersistentToolLedger;
  engineSetup: EngineSetupFactory;
  defaultModel: string;
  grantScope: GrantScope;
  logger: EngineLogger;
  /** Sessions kept in memory at most (default 500); busy ones are never dropped. */
  maxLive?: number;
  /**
   * Whether a caller works with the session now (it holds the session's lock: a message being
   * delivered, a click): such a session is not dropped, or the caller's engine would be
   * disposed under it and a second one built.
   */
  inUse?: (sessionId: string) => boolean;
  /** Profiles (src/profiles/): a new thread starts under its place's, with its model; a changed file rebuilds idle sessions. */
  profiles?: SessionProfiles;
}

const DEFAULT_MAX_LIVE = 500;

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

  /** The session's record: the one in memory, else the stored one (nothing is built). */
  async record(sessionId: string): Promise<SessionRecord | undefined> {
    return this.live.get(sessionId)?.record ?? (await this.options.store.getSession(sessionId));
  }

  /**
   * The session, built from the store if need be. With `key`, a session that does not exist
   * yet is created (a first message in a thread); `starter` is who started it.
   */
  async get(sessionId: string, key?: SessionKey, starter?: string): Promise<LiveSession> {
    const existing = this.live.get(sessionId);
    // Built before the profiles file changed, and idle: rebuilt, so its next turn runs under what the file says now.
    if (existing && this.stale(existing) && !isBusy(existing)) await this.evict(sessionId);
    return this.current(sessionId, key, starter);
  }

  private stale(live: LiveSession): boolean {
    return this.options.profiles !== undefined && live.setupVersion !== this.options.profiles.version;
  }

  private current(sessionId: string, key?: SessionKey, starter?: string): Promise<LiveSession> {
    const existing = this.live.get(sessionId);
    if (existing) {
      // Map order is recency order: the least recently used come first.
      this.live.delete(sessionId);
      this.live.set(sessionId, existing);
      return Promise.resolve(existing);
    }
    let building = this.building.get(sessionId);
    if (!building) {
      building = this.build(sessionId, key, starter).finally(() => this.building.delete(sessionId));
      this.building.set(sessionId, building);
    }
    return building;
  }

  private async build(
    sessionId: string,
    key: SessionKey | undefined,
    starter: string | undefined,
  ): Promise<LiveSession> {
    const { store, inbox, ledger, defaultModel, grantScope } = this.options;
    let record = await store.getSession(sessionId);
    if (!record) {
      if (!key) throw new Error(`unknown session ${sessionId}`);
      const now = Date.now();
      // The thread keeps the profile of its place at this moment, and starts with its model.
      const profile = this.options.profiles?.forPlace(key);
      record = {
        id: sessionId,
        key,
        model: profile?.model ?? defaultModel,
        grants: { tools: [], commands: [] },
        compaction: null,
        steerers: [],
        directories: [],
        createdAt: now,
        updatedAt: now,
      };
      if (profile) record.profile = profile.name;
      if (starter !== undefined) record.startedBy = starter;
      await store.saveSession(record);
    }
    const version = this.options.profiles?.version;
    const live = await buildLiveSession({
      record,
      store,
      inbox,
      ledger,
      setup: await this.options.engineSetup(record),
      grantScope,
    });
    if (version !== undefined) live.setupVersion = version;
    this.live.set(sessionId, live);
    void this.trim();
    return live;
  }

  /** Drop the least recently used idle sessions past `maxLive`. */
  private async trim(): Promise<void> {
    const max = this.options.maxLive ?? DEFAULT_MAX_LIVE;
    let excess = this.live.size - max;
    if (excess <= 0) return;
    // By key, not by entry: with a thousand sessions busy at once every build walks them all,
    // and an entry is an array made for each step.
    for (const id of this.live.keys()) {
      if (excess <= 0) return;
      const live = this.live.get(id);
      if (!live || isBusy(live) || this.options.inUse?.(id)) continue;
      excess--;
      await this.evict(id);
    }
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

  /**
   * Drop the session from memory even while a turn runs (cluster mode: another instance owns
   * it now): the turn is silenced (`fenced`), its tools end, and the next use rebuilds the
   * session from the store.
   */
  async drop(sessionId: string): Promise<void> {
    const live = this.live.get(sessionId);
    if (!live) return;
    this.live.delete(sessionId);
    live.fenced = true;
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
