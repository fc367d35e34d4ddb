// What the session layer tells the operations side (src/ops/) and asks of its spend limits.
// Both are optional: a session layer built without them (tests, tools) behaves as before.
import type { InboxItem, InboxResolution } from '../engine/index.js';
import type { Place } from '../ops/ops-events.js';
import type { SessionRecord } from '../store/session-store.js';

/** Facts only the session layer knows: who clicked, stopped, switched, revoked, forgot, continued. */
export interface SessionOps {
  stopRequested(session: SessionRecord, by: string): void;
  /** A click answered a prompt (the click that won, on the instance that took it). */
  decided(session: SessionRecord, item: InboxItem, resolution: InboxResolution, by: string): void;
  modelSwitched(session: SessionRecord, by: string, from: string, to: string): void;
  /** `what`: the tool, or `tool: command`, whose grants were revoked. */
  grantsRevoked(session: SessionRecord, by: string, what: string, count: number): void;
  forgotten(session: SessionRecord, by: string): void;
  budgetContinued(session: SessionRecord, by: string): void;
}

export type BudgetVerdict = { ok: true } | { ok: false; reason: string };

/** Spend limits as the session layer sees them (src/ops/budget-guard.ts). */
export interface BudgetGate {
  /** Before a request starts a turn: refused (with the words to show the person, privately) when a limit it spends against is reached. */
  mayStart(place: Place, userId: string): Promise<BudgetVerdict>;
  /** An admin's Continue on a turn a limit paused: its model calls go past the limits until the turn ends. */
  allowTurn(place: Place, by: string): Promise<void>;
}
