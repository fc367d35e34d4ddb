// How a turn ends when it does not simply complete: stopped by the user, a failed model call,
// an unexpected error, or a consumer that walked away. Each ending leaves the history valid
// (no tool call without a result) and marks the place with a notice the user can see.
import type { EngineEvent, TurnEndStatus } from './events.js';
import { isWritesFenced } from './fenced.js';
import { describeProviderError, isContextOverflow, ProviderError } from './provider.js';
import { INTERRUPTED_BY_USER } from './tool-calls.js';
import type { ActiveTurn, EngineParts } from './engine-parts.js';

type Ending = AsyncGenerator<EngineEvent, TurnEndStatus, undefined>;

export async function* endInterrupted(parts: EngineParts, turn: ActiveTurn): Ending {
  await parts.history.appendNotice('interrupted', 'Stopped by the user.');
  yield { type: 'interrupted', iterations: turn.iterations };
  return 'interrupted';
}

/** A failed model call: what the user watched arrive is kept, then an error notice. */
export async function* endFailed(
  parts: EngineParts,
  turn: ActiveTurn,
  error: unknown,
  text: string,
  reasoning: string,
): Ending {
  await parts.history.appendPartial(text, reasoning);
  if (turn.signal.aborted) return yield* endInterrupted(parts, turn);
  if (error instanceof ProviderError && error.kind === 'budget') {
    // A spend limit paused the turn before the call was sent: a notice of its own, which
    // only an admin's Continue gets past (src/sessions/thread-controls.ts).
    const message = parts.maskOutput(error.message);
    await parts.history.appendNotice('budget', message);
    yield { type: 'error', message, errorKind: 'budget' };
    return 'error';
  }
  const described = isContextOverflow(error)
    ? {
        message: "The conversation no longer fits in the model's context, and compaction could not make room.",
        kind: 'context_overflow',
      }
    : describeProviderError(error);
  parts.logger.warn({ err: error, kind: described.kind }, 'model call failed');
  // An SDK's error can quote a URL or a header: the notice reaches the thread.
  const message = parts.maskOutput(described.message);
  await parts.history.appendNotice('error', message);
  yield { type: 'error', message, errorKind: described.kind };
  return 'error';
}

/** A bug or a failing store must not kill the bot: report it, keep the history valid. */
export async function* failInternally(parts: EngineParts, turn: ActiveTurn, error: unknown): Ending {
  if (isWritesFenced(error)) {
    // This process may no longer write the session (the bot is shutting down): the store
    // keeps what was written before, which the next owner carries on from. Nothing to record.
    turn.controller.abort(error);
    parts.logger.debug({ sessionId: parts.sessionId }, 'turn left as it was: writes are fenced');
    return 'interrupted';
  }
  parts.logger.error({ err: error }, 'turn failed unexpectedly');
  // A store's error can quote its connection URL, password included.
  const message = parts.maskOutput(
    `Something went wrong inside the agent: ${error instanceof Error ? error.message : String(error)}`,
  );
  try {
    await parts.history.answerUnanswered('the turn failed before this call could run');
    await parts.history.appendNotice('error', message);
  } catch (persistError) {
    parts.logger.error({ err: persistError }, 'could not record the failure');
  }
  yield { type: 'error', message, errorKind: 'internal' };
  return turn.signal.aborted ? 'interrupted' : 'error';
}

/** The consumer walked away mid-turn (or a yield threw): stop, and leave no orphans. */
export async function abandon(parts: EngineParts, turn: ActiveTurn): Promise<void> {
  turn.controller.abort(new Error('turn abandoned'));
  try {
    await parts.history.answerUnanswered(INTERRUPTED_BY_USER);
    await parts.history.appendNotice('interrupted', 'Stopped.');
  } catch (error) {
    if (!isWritesFenced(error)) parts.logger.error({ err: error }, 'could not close an abandoned turn');
  }
}
