// The tool ledger, persisted with the session's other data: a call's start is written
// before its tool runs, so a restart can tell "never started" (run it) from "started, no
// result" (it may have run partly: answer it, do not run it again). One store write per
// call, or per concurrent batch; the record holds one round (one assistant message's calls).
import { withStarted, type LedgerRound, type ToolLedger } from '../engine/index.js';
import { KeyedMutex } from './keyed-mutex.js';
import type { SessionStore } from './session-store.js';

export class PersistentToolLedger implements ToolLedger {
  /** The last round written per session, so a write needs no read first. */
  private readonly rounds = new Map<string, LedgerRound>();
  private readonly mutex = new KeyedMutex();

  constructor(private readonly store: SessionStore) {}

  markStarted(sessionId: string, round: string, toolCallIds: readonly string[]): Promise<void> {
    return this.mutex.run(sessionId, async () => {
      const previous = this.rounds.get(sessionId) ?? (await this.store.getToolRound(sessionId));
      const next = withStarted(previous, round, toolCallIds);
      await this.store.setToolRound(sessionId, next);
      this.rounds.set(sessionId, next);
    });
  }

  async started(sessionId: string, round: string): Promise<ReadonlySet<string>> {
    const recorded = this.rounds.get(sessionId) ?? (await this.store.getToolRound(sessionId));
    return new Set(recorded?.round === round ? recorded.started : []);
  }

  /** Drop what this process remembers of a session (evicted or forgotten). */
  forget(sessionId: string): void {
    this.rounds.delete(sessionId);
  }
}
