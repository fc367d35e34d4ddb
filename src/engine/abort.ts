// Cancellation primitives. The rule behind all of them: every wait on a stop signal is
// released when its race ends. A long session races thousands of chunks, approvals and
// tools against one turn signal; a listener left behind per race is a leak that grows
// with the conversation.

export const ABORTED: unique symbol = Symbol('aborted');
export type Aborted = typeof ABORTED;

/**
 * Await `promise`, or return ABORTED as soon as `signal` fires, whichever comes first.
 * The loser is not cancelled (a promise cannot be); its rejection is swallowed here so it
 * never surfaces as an unhandled rejection.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | Aborted> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise<T | Aborted>((resolve, reject) => {
    const onAbort = (): void => {
      resolve(ABORTED);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * An AbortController that follows `parent` until `release()` is called. Each provider
 * request gets its own, because the openai SDK adds a listener to every signal it is given
 * and never removes it: handing it the turn's long-lived signal would leak one per call.
 */
export function linkedAbortController(parent: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, release: () => undefined };
  }
  const follow = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', follow, { once: true });
  return { controller, release: () => parent.removeEventListener('abort', follow) };
}

/** Resolve after `ms`, or at once when `signal` fires; the timer never outlives the wait. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
