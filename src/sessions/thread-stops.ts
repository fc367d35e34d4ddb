// A stop, from a 🛑, a command, or the bot itself (a scheduled run nobody answered): it ends
// the running turn, or closes what waits to resume (a prompt, a call whose prompt was just
// answered). Who may stop is checked where the stop comes in; the turn is stopped where it
// runs (its owner, in cluster mode). A stop for a thread not known yet is kept a minute for
// the turn that thread's first message starts (early-stops.ts).
import { INTERRUPTED_BY_USER, type EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { SessionRecord } from '../store/session-store.js';
import type { AccessPolicy } from './access-policy.js';
import type { ClusterRouting } from './cluster-routing.js';
import type { Coordinator } from './coordination.js';
import { EarlyStops } from './early-stops.js';
import { markStopped } from './live-session.js';
import type { LiveSessions } from './live-sessions.js';
import { BOT_ITSELF, type PromptReplies } from './prompt-replies.js';
import type { Reporter } from './session-observer.js';
import type { SessionOps } from './session-ops.js';
import type { ControlResult } from './thread-controls.js';
import type { ThreadReplay } from './thread-replay.js';
import type { TurnDriver } from './turn-driver.js';

export interface ThreadStopsDeps {
  inbox: PersistentInbox;
  coordinator: Coordinator;
  access: AccessPolicy;
  sessions: LiveSessions;
  driver: TurnDriver;
  replies: PromptReplies;
  replay: ThreadReplay;
  reporter: Reporter;
  logger: EngineLogger;
  /** Cluster mode only (made after this, from its `interruptHere`): read at each stop. */
  routing: () => ClusterRouting | undefined;
  ops?: SessionOps;
}

export class ThreadStops {
  private readonly earlyStops = new EarlyStops();

  constructor(private readonly deps: ThreadStopsDeps) {}

  /**
   * A stop, from a reaction or a command: ends the running turn, or closes a waiting prompt.
   * A turn that starts while the stop waits for the session's lock (a message delivered a
   * moment before, a turn resumed by recovery or a click) is stopped too.
   */
  async interrupt(sessionId: string, userId: string): Promise<ControlResult> {
    const known = await this.deps.sessions.record(sessionId);
    if (known) {
      const access = this.deps.access.mayStop(userId, known);
      if (!access.allowed) return { status: 'refused', reason: access.reason };
      this.deps.ops?.stopRequested(known, userId);
      const routing = this.deps.routing();
      if (routing)
        return ((await routing.stop(sessionId, userId)) as ControlResult | undefined) ?? { status: 'done', sessionId };
    }
    return this.interruptHere(sessionId, userId, known);
  }

  /** A stop, applied on the instance that owns the session (access was checked where it came in). */
  async interruptHere(sessionId: string, userId: string, known?: SessionRecord): Promise<ControlResult> {
    const { sessions, driver, replies, replay } = this.deps;
    // Told here, where the thread's turn runs and its note is shown (the stop may have come in on another instance).
    if (known && userId !== BOT_ITSELF) await this.deps.reporter.stopBy(known, userId);
    if (known && (await this.stopOwnedTurn(sessionId, userId))) return { status: 'done', sessionId };
    return this.deps.coordinator.exclusive(sessionId, async () => {
      // Unknown a moment ago: the thread's first message may have been delivering as the stop came.
      const record = known ?? (await sessions.record(sessionId));
      if (!record) {
        this.earlyStops.remember(sessionId, userId);
        return { status: 'unknown_session' };
      }
      if (!known) {
        const access = this.deps.access.mayStop(userId, record);
        if (!access.allowed) return { status: 'refused', reason: access.reason };
      }
      if (await this.stopOwnedTurn(sessionId, userId)) return { status: 'done', sessionId };
      const live = await sessions.get(sessionId);
      // Replies that arrived as the last turn ended are not run after this stop.
      markStopped(live, userId);
      // No turn runs, but something may wait to resume: a prompt (the process restarted
      // while it waited) or a call whose prompt was answered a moment ago. A stop closes
      // them all, so the resume that would follow finds nothing to run.
      const pending = await this.deps.inbox.pending(sessionId);
      if (pending.length === 0 && live.engine.unansweredToolCalls().length === 0) return { status: 'idle' };
      for (const item of pending) await replies.close(record, item, { kind: 'interrupted' }, userId);
      const closed = await live.engine.closeUnansweredToolCalls(INTERRUPTED_BY_USER, {
        kind: 'interrupted',
        text: 'Stopped by the user.',
      });
      for (const call of closed) await replay.closed(record, call, INTERRUPTED_BY_USER);
      await driver.settleIfQuiet(live);
      return { status: 'done', sessionId };
    });
  }

  /**
   * Close a turn's prompts that have waited since `since` (a scheduled run nobody answered,
   * src/schedules/): the turn stops as a 🛑 would stop it, by the bot itself. Resolves whether
   * something waited. Prompts opened before `since` (a person's own turn) are left alone.
   */
  async closeWaitingSince(sessionId: string, since: number): Promise<boolean> {
    const waiting = (await this.deps.inbox.pending(sessionId)).filter((item) => item.createdAt >= since);
    if (waiting.length === 0) return false;
    const known = await this.deps.sessions.record(sessionId);
    if (!known) return false;
    const routing = this.deps.routing();
    if (routing) await routing.stop(sessionId, BOT_ITSELF);
    else await this.interruptHere(sessionId, BOT_ITSELF, known);
    return true;
  }

  /** A turn just started in this thread: a 🛑 processed before the message that started it meant this turn. */
  async applyEarlyStop(record: SessionRecord): Promise<void> {
    const early = this.earlyStops.take(record.id);
    if (early && this.deps.access.mayStop(early, record).allowed) await this.stopOwnedTurn(record.id, early);
  }

  private async stopOwnedTurn(sessionId: string, userId: string): Promise<boolean> {
    if (!this.deps.coordinator.isTurnOwned(sessionId)) return false;
    await this.deps.coordinator.dispatch(sessionId, { kind: 'stop', userId });
    return true;
  }
}
