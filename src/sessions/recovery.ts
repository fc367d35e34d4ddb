// Start-up recovery: repair what a crash left, before anything else touches a session.
//
// Only sessions the store's open index names are read (a turn was running, inputs were
// recorded, a prompt waited): an install with 10,000 quiet threads reads the few that need
// it. Each is decided from what was persisted (transcript, inbox, tool ledger), and each
// unanswered tool call on its own, by the engine's resume:
//   - a call whose approval still waits stays pending: its buttons keep working, the click
//     resumes the turn;
//   - a call that started (the ledger says so) and has no result is answered "interrupted by
//     a restart" and not run again, unless its tool is idempotent;
//   - a call never started runs: with the answer its prompt got meanwhile, or with none
//     needed;
// then the turn goes on, and inputs recorded but not taken steer it (or start a turn).
import type { EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { PendingInput, SessionStore } from '../store/session-store.js';
import type { Coordinator } from './coordination.js';
import type { LiveSession } from './live-session.js';
import { isBusy, type LiveSessions } from './live-sessions.js';
import type { PromptReplies } from './prompt-replies.js';
import type { TurnDriver } from './turn-driver.js';

export interface RecoveryReport {
  /** Sessions the open index named (what recovery read). */
  examined: number;
  /** A turn resumed at its unanswered tool calls. */
  resumed: string[];
  /** A turn started from inputs recorded before the crash. */
  started: string[];
  /** A prompt still waits for a click. */
  waiting: string[];
  /** Nothing was left to do: the session leaves the open index. */
  settled: string[];
}

export interface RecoveryDeps {
  store: SessionStore;
  inbox: PersistentInbox;
  coordinator: Coordinator;
  sessions: LiveSessions;
  driver: TurnDriver;
  replies: PromptReplies;
  logger: EngineLogger;
}

export async function recoverSessions(deps: RecoveryDeps): Promise<RecoveryReport> {
  const report: RecoveryReport = { examined: 0, resumed: [], started: [], waiting: [], settled: [] };
  for (const sessionId of await deps.store.openSessionIds()) {
    report.examined++;
    try {
      await deps.coordinator.exclusive(sessionId, () => recoverOne(deps, sessionId, report));
    } catch (error) {
      // One unreadable session must not keep the others (or the bot) from starting.
      deps.logger.error({ err: error, sessionId }, 'could not recover a session');
    }
  }
  return report;
}

async function recoverOne(deps: RecoveryDeps, sessionId: string, report: RecoveryReport): Promise<void> {
  const { store, inbox, sessions, driver, replies } = deps;
  if (!(await store.getSession(sessionId))) {
    await store.markSettled(sessionId);
    return;
  }
  const live = await sessions.get(sessionId);
  if (isBusy(live)) return; // something already started it (a click that came first)

  const calls = live.engine.unansweredToolCalls();
  const prompts = await inbox.pending(sessionId);
  // A prompt whose call already has its result (the crash fell between the two writes):
  // its buttons must not work any more.
  for (const item of prompts.filter((p) => !calls.some((call) => call.id === p.toolCallId))) {
    await replies.close(live.record, item, { kind: 'interrupted' });
  }
  const waiting = prompts.filter((p) => calls.some((call) => call.id === p.toolCallId));
  const inputs = await notYetTaken(live, await store.getPendingInputs(sessionId), store);

  if (waiting.length > 0 && inputs.length === 0) {
    report.waiting.push(sessionId);
    return;
  }
  if (calls.length > 0) {
    // A reply was recorded while a prompt waited, and the crash came before it declined the
    // prompt: it declines it now, as it would have then, and steers the resumed turn.
    const first = inputs[0];
    if (first) await replies.decline(live.record, waiting, { text: first.text, userId: first.source?.userId ?? '' });
    await driver.startResume(live);
    report.resumed.push(sessionId);
    return;
  }
  if (inputs.length > 0) {
    await driver.startWithInputs(live, inputs);
    report.started.push(sessionId);
    return;
  }
  await store.markSettled(sessionId);
  report.settled.push(sessionId);
  // Nothing to do: do not hold it in memory (recovery would otherwise load every open session for good).
  await sessions.evict(sessionId);
}

/**
 * Inputs still recorded as pending, minus any the transcript already holds: the crash may
 * have fallen between a message joining the history and leaving the pending list, and
 * running it again would send the model the same request twice.
 */
async function notYetTaken(live: LiveSession, inputs: PendingInput[], store: SessionStore): Promise<PendingInput[]> {
  if (inputs.length === 0) return inputs;
  const inHistory = new Set(
    live.engine.messages.flatMap((m) => (m.role === 'user' && typeof m.source?.messageId === 'string' ? [m.source.messageId] : [])),
  );
  const fresh = inputs.filter((input) => !(input.source?.messageId && inHistory.has(input.source.messageId)));
  if (fresh.length !== inputs.length) await store.setPendingInputs(live.record.id, fresh);
  return fresh;
}

