// The write-ahead record of tool executions: before a tool's `execute` is invoked, the
// ledger durably records that the call started. After a crash, a call with that record and
// no result in the history may have run partly (a command half done, a file half written),
// so it is never run again unless its tool says it is safe to repeat (`idempotent`).
// True exactly-once is impossible across a crash; this gives at-most-once for side effects
// and at-least-once for idempotent tools.
//
// A round is one assistant message's tool calls, named by its first call's id (ids are
// unique per session). Only the trailing round can hold unanswered calls, so the ledger
// keeps one round per session: recording a new round forgets the previous one, and the
// record stays the size of one message's calls however long the session gets.
export interface ToolLedger {
  /**
   * Record, durably, that these calls of `round` are about to run: one write per call, or
   * one for a whole concurrent batch. Rejects when the record could not be written; the
   * engine then does not run the calls.
   */
  markStarted(sessionId: string, round: string, toolCallIds: readonly string[]): Promise<void>;
  /** The calls of `round` recorded as started. */
  started(sessionId: string, round: string): Promise<ReadonlySet<string>>;
}

export interface LedgerRound {
  round: string;
  started: string[];
}

/** The round after `ids` started, given what was recorded before (maybe another round). */
export function withStarted(previous: LedgerRound | undefined, round: string, ids: readonly string[]): LedgerRound {
  const started = previous?.round === round ? previous.started : [];
  return { round, started: [...new Set([...started, ...ids])] };
}

/** A ledger in memory: an engine on its own (tests, a sub-agent), which a crash takes with it. */
export class InMemoryToolLedger implements ToolLedger {
  private readonly rounds = new Map<string, LedgerRound>();

  async markStarted(sessionId: string, round: string, toolCallIds: readonly string[]): Promise<void> {
    this.rounds.set(sessionId, withStarted(this.rounds.get(sessionId), round, toolCallIds));
  }

  async started(sessionId: string, round: string): Promise<ReadonlySet<string>> {
    const recorded = this.rounds.get(sessionId);
    return new Set(recorded?.round === round ? recorded.started : []);
  }
}
