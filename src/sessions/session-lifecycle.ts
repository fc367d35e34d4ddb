// The session layer's life in this process, over the sessions it holds in memory: while it
// runs, idle engines leave memory; it ends by stopping its turns (shutdown) or, for a
// restart, by naming the turns in flight and ending their tools without stopping them
// (suspend: the next start's recovery carries each turn on); retention deletes the sessions
// untouched for too long, with their threads' folders.
//
// The one idea: `closing` is aborted first, whichever way the layer ends, so no new work is
// taken while the running turns wind down.
import type { EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import { sessionKeyOf, type SessionKey, type SessionRecord, type SessionStore } from '../store/session-store.js';
import { isBusy, type LiveSessions } from './live-sessions.js';
import { afterWindDown } from './turn-wind-down.js';

export interface SessionLifecycleDeps {
  store: SessionStore;
  inbox: PersistentInbox;
  sessions: LiveSessions;
  logger: EngineLogger;
  /** Drop an idle session's engine from memory after this long (default 15 min). */
  idleEvictMs?: number;
  /** Remove what a thread keeps outside the store (its own workspace folder) when retention deletes it. */
  removeThreadFiles?: (key: SessionKey) => Promise<void>;
}

/** A session whose turn was in flight as the bot suspended, and whether it only waits for a person's answer. */
export interface InFlightTurn {
  record: SessionRecord;
  waitingForAnswer: boolean;
}

export class SessionLifecycle {
  /** Aborted as the bot shuts down: no more work is taken, and controls waiting for a turn to wind down stop waiting. */
  private readonly closing = new AbortController();
  private readonly evictTimer: NodeJS.Timeout;

  constructor(private readonly deps: SessionLifecycleDeps) {
    const idleMs = deps.idleEvictMs ?? 15 * 60 * 1000;
    this.evictTimer = setInterval(() => void deps.sessions.evictIdle(idleMs), Math.max(1000, idleMs / 2));
    this.evictTimer.unref();
  }

  /** Aborted once the layer shuts down or suspends. */
  get signal(): AbortSignal {
    return this.closing.signal;
  }

  /** Wait until no turn runs (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const turns = this.deps.sessions.all().flatMap((live) => (live.turn ? [live.turn] : []));
      if (turns.length === 0) return;
      await Promise.allSettled(turns);
    }
  }

  /** Stop taking work; stop running turns through the usual interrupt path; release everything. */
  async shutdown(graceMs: number): Promise<void> {
    const sessions = this.deps.sessions;
    this.close();
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    for (const live of sessions.all()) if (live.engine.isRunning) live.engine.requestInterrupt();
    await this.idle();
    for (const live of sessions.all()) await sessions.evict(live.record.id);
  }

  /**
   * The bot is shutting down for a restart: take no more work, and name the sessions whose
   * turn is in flight (with whether it only waits for a person's answer). Nothing is stopped
   * or written: the caller fences the store, so what persists is what a crash at this instant
   * would leave, and the next start's recovery carries each turn on (core.ts `suspend`).
   */
  async beginSuspend(): Promise<InFlightTurn[]> {
    this.close();
    const working: InFlightTurn[] = [];
    for (const live of this.deps.sessions.all()) {
      if (!isBusy(live)) continue;
      const prompts = await this.deps.inbox.pending(live.record.id);
      working.push({ record: live.record, waitingForAnswer: prompts.length > 0 });
    }
    return working;
  }

  /**
   * After `beginSuspend` and the fence: end every session's tools now (a command on the host
   * would outlive the process), without waiting for the turns, which can record nothing more.
   */
  async releaseTools(): Promise<void> {
    await Promise.all(
      this.deps.sessions.all().map(async (live) => {
        try {
          await live.setup.dispose?.();
        } catch (error) {
          this.deps.logger.warn({ err: error, sessionId: live.record.id }, 'could not end a session’s tools');
        }
      }),
    );
  }

  /**
   * Retention: delete every session untouched for longer than `retentionMs`, with its thread's
   * own folder (each session is dropped from memory first, so no shell of it runs while its
   * folder goes). Resolves with the deleted ids.
   */
  async sweepExpired(retentionMs: number, now: number): Promise<string[]> {
    const { store, sessions, removeThreadFiles } = this.deps;
    const deleted = await store.sweepExpired(retentionMs, now);
    for (const sessionId of deleted) {
      await sessions.drop(sessionId);
      const key = sessionKeyOf(sessionId);
      if (!key || !removeThreadFiles) continue;
      try {
        await removeThreadFiles(key);
      } catch (error) {
        this.deps.logger.warn({ err: error, sessionId }, "could not remove an expired thread's folder");
      }
    }
    return deleted;
  }

  /**
   * Resolves once the turns winding down now have ended (at once when none does): a click on
   * a button a turn's end just showed (👍 / 👎 under its answer) waits for that turn to record
   * what the click looks for (turn-wind-down.ts).
   */
  async afterTurnsWindDown(): Promise<void> {
    await Promise.all(this.deps.sessions.all().map((live) => afterWindDown(live, { signal: this.closing.signal })));
  }

  private close(): void {
    this.closing.abort();
    clearInterval(this.evictTimer);
  }
}
