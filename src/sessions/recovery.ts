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
// then the turn goes on, and inputs recorded but not taken steer it (or start a turn). A
// turn the crash cut where the model owed the next message (mid-stream, or between a tool
// round and the next call) goes on too. A turn resumed by two restarts in a row and cut
// again is given up instead (the thread says so, with Retry): a turn that crashes the bot
// must not crash it forever.
//
// The process that died may not have finished drawing the thread, so the trailing round's
// cards are drawn again: a waiting prompt with its buttons, a cut call as cut.
import { INTERRUPTED_BY_RESTART, shownArgumentsOf, type EngineLogger } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { PendingInput, SessionStore } from '../store/session-store.js';
import type { ThreadReplay } from './thread-replay.js';
import { OwnedElsewhereError, type Coordinator } from './coordination.js';
import { shownInteraction, type LiveSession } from './live-session.js';
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
  /** Resumed by too many restarts in a row: closed with a note instead. */
  givenUp: string[];
}

export interface RecoveryDeps {
  store: SessionStore;
  inbox: PersistentInbox;
  coordinator: Coordinator;
  sessions: LiveSessions;
  driver: TurnDriver;
  replies: PromptReplies;
  replay: ThreadReplay;
  logger: EngineLogger;
}

/** Restarts in a row that may resume one turn; the next one gives it up. */
const MAX_RESTART_RESUMES = 2;
const GIVEN_UP =
  'The bot restarted during this turn several times in a row, so it stopped here rather than loop. Retry to go on.';

export async function recoverSessions(deps: RecoveryDeps): Promise<RecoveryReport> {
  const report: RecoveryReport = { examined: 0, resumed: [], started: [], waiting: [], settled: [], givenUp: [] };
  for (const sessionId of await deps.store.openSessionIds()) {
    report.examined++;
    try {
      await deps.coordinator.exclusive(sessionId, () => recoverOne(deps, sessionId, report));
    } catch (error) {
      // Another instance owns it (cluster mode): it is that one's to carry on.
      if (error instanceof OwnedElsewhereError) continue;
      // One unreadable session must not keep the others (or the bot) from starting.
      deps.logger.error({ err: error, sessionId }, 'could not recover a session');
    }
  }
  return report;
}

/** Recovery for one session (cluster mode: a session taken over from an instance that died). */
export async function recoverSession(deps: RecoveryDeps, sessionId: string): Promise<RecoveryReport> {
  const report: RecoveryReport = { examined: 1, resumed: [], started: [], waiting: [], settled: [], givenUp: [] };
  await deps.coordinator.exclusive(sessionId, () => recoverOne(deps, sessionId, report));
  return report;
}

async function recoverOne(deps: RecoveryDeps, sessionId: string, report: RecoveryReport): Promise<void> {
  const { store, inbox, sessions, driver, replies, replay } = deps;
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
  await redrawCutCalls(deps, live);

  if (waiting.length > 0 && inputs.length === 0) {
    for (const item of waiting) {
      const call = calls.find((c) => c.id === item.toolCallId)!;
      const tool = live.engine.tools.get(call.function.name);
      const shown = (args: unknown) => {
        const parsed = tool?.schema.safeParse(args);
        return (
          (tool && parsed?.success ? shownArgumentsOf(tool, parsed.data) : undefined) ??
          shownInteraction(live.setup, call.function.name, args)
        );
      };
      await replay.waiting(live.record, call, item, tool?.metadata, shown);
    }
    report.waiting.push(sessionId);
    return;
  }
  if (live.engine.canResume()) {
    if ((live.record.restartResumes ?? 0) >= MAX_RESTART_RESUMES) {
      await giveUp(deps, live);
      report.givenUp.push(sessionId);
      return;
    }
    live.record = { ...live.record, restartResumes: (live.record.restartResumes ?? 0) + 1 };
    await store.saveSession(live.record);
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

/** A call of the trailing round that a restart cut is shown as cut (its card may still say "Running"). */
async function redrawCutCalls(deps: RecoveryDeps, live: LiveSession): Promise<void> {
  const round = live.engine.trailingRound();
  if (!round) return;
  const cut = new Set(
    live.engine.messages.flatMap((m) =>
      m.role === 'tool' && m.content.includes(INTERRUPTED_BY_RESTART) ? [m.tool_call_id] : [],
    ),
  );
  for (const call of round.calls)
    if (cut.has(call.id)) await deps.replay.closed(live.record, call, INTERRUPTED_BY_RESTART);
}

/** Too many restarts in a row resumed this turn: close it, say so, offer Retry. */
async function giveUp(deps: RecoveryDeps, live: LiveSession): Promise<void> {
  const waiting = await deps.inbox.pending(live.record.id);
  for (const item of waiting) await deps.replies.close(live.record, item, { kind: 'interrupted' });
  const closed = await live.engine.closeUnansweredToolCalls(INTERRUPTED_BY_RESTART, { kind: 'error', text: GIVEN_UP });
  for (const call of closed) await deps.replay.closed(live.record, call, INTERRUPTED_BY_RESTART);
  if (closed.length === 0) await live.engine.recordNotice('error', GIVEN_UP);
  await deps.replay.error(live.record, GIVEN_UP, 'restart_loop');
  live.record = { ...live.record, restartResumes: 0 };
  await deps.store.saveSession(live.record);
  await deps.driver.settleIfQuiet(live);
}

/**
 * Inputs still recorded as pending, minus any the transcript already holds: the crash may
 * have fallen between a message joining the history and leaving the pending list, and
 * running it again would send the model the same request twice.
 */
async function notYetTaken(live: LiveSession, inputs: PendingInput[], store: SessionStore): Promise<PendingInput[]> {
  if (inputs.length === 0) return inputs;
  const inHistory = new Set(
    live.engine.messages.flatMap((m) =>
      m.role === 'user' && typeof m.source?.messageId === 'string' ? [m.source.messageId] : [],
    ),
  );
  const fresh = inputs.filter((input) => !(input.source?.messageId && inHistory.has(input.source.messageId)));
  if (fresh.length !== inputs.length)
    await store.removePendingInputs(
      live.record.id,
      inputs.filter((input) => !fresh.includes(input)).map((input) => input.id),
    );
  return fresh;
}
