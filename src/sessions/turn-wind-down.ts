// The moments after a turn's work, while it winds down: its last note is out (a failure with
// Retry, the step limit with Continue, a spend limit's pause with Continue for admins), and
// what is left is recording its end, clearing the thread's status and starting the replies
// that came meanwhile. A person who clicks that note's button as soon as it shows lands in
// those milliseconds. Such a click must act, not be told "I am already working in this
// thread": a control that finds the session winding down waits for the turn to end, then
// acts as if it had come a moment later. A reply in those moments is queued and starts the
// next turn (turn-driver.ts `afterTurn`); a click has no queue to wait in, so it waits here.
//
// The wait is bounded: a view that hangs (a platform that stops answering) must not hold a
// click for ever; past the bound the click finds the session busy and is told so.
import type { LiveSession } from './live-session.js';

/** How long a control waits for a winding-down turn. Milliseconds normally; a platform's rate limit can stretch it to seconds. */
const WIND_DOWN_WAIT_MS = 10_000;

/**
 * Resolves once the session's winding-down turn has ended (its next turn, if replies started
 * one, may already run), after `limitMs`, or when `signal` fires, whichever comes first. At
 * once when no turn winds down: a turn that still works is not waited for.
 */
export async function afterWindDown(
  live: LiveSession | undefined,
  options: { signal?: AbortSignal; limitMs?: number } = {},
): Promise<void> {
  const turn = live?.windingDown ? live.turn : null;
  if (!turn || options.signal?.aborted) return;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      turn,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, options.limitMs ?? WIND_DOWN_WAIT_MS);
        onAbort = resolve;
        options.signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
  }
}
