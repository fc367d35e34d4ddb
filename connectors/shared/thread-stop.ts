// A person's stop (a 🛑 reaction, Slack's Stop button, the playground's stop), the same on
// every platform: the message it was put on names its session (the bot recorded every message
// it posted there, thread-output.ts), else the thread the message is in does; the thread's note
// says who stopped it; the session layer's `interrupt` judges whether they may, and stops.
import type { ControlResult, SessionManager } from '../../src/sessions/session-manager.js';
import type { SessionRecord } from '../../src/sessions/thread-records.js';
import type { ThreadPresenter } from './thread-presenter.js';

export interface ThreadStopDeps {
  manager: Pick<SessionManager, 'interrupt' | 'records'>;
  presenterFor: (session: SessionRecord) => Pick<ThreadPresenter, 'noteStoppedBy'>;
}

/** The stop's outcome, with the thread's record when the session was known (where a refusal is answered). */
export interface ThreadStopped {
  record: SessionRecord | undefined;
  result: ControlResult;
}

/** The session a stop put on a message means: the one the bot recorded for that message, else the thread the message is in (`inThread`). */
export async function sessionStoppedAt(
  deps: ThreadStopDeps,
  messageKey: string,
  inThread: () => string,
): Promise<string> {
  return (await deps.manager.records.messageAt(messageKey))?.sessionId ?? inThread();
}

/**
 * Stop a thread's session for a person. `claimed`: the stop's event claim, settled while the
 * thread is looked up; false drops the stop (undefined is returned).
 */
export async function stopThread(deps: ThreadStopDeps, sessionId: string, userId: string): Promise<ThreadStopped>;
export async function stopThread(
  deps: ThreadStopDeps,
  sessionId: string,
  userId: string,
  claimed: Promise<boolean> | undefined,
): Promise<ThreadStopped | undefined>;
export async function stopThread(
  deps: ThreadStopDeps,
  sessionId: string,
  userId: string,
  claimed?: Promise<boolean>,
): Promise<ThreadStopped | undefined> {
  const record = await deps.manager.records.session(sessionId);
  if (claimed && !(await claimed)) return undefined;
  if (record) deps.presenterFor(record).noteStoppedBy(userId);
  // Even with no session yet: the message this stop was put on may still be on its way in.
  const result = await deps.manager.interrupt(sessionId, userId);
  return { record, result };
}
