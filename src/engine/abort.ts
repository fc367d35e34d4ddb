// Cancellation primitives. The rule behind all of them: every wait on a stop signal is
// released when its race ends. A long session races thousands of chunks, approvals and
// tools against one turn signal; a listener left behind per race is a leak that grows
// with the conversation.
import { getEventListeners } from 'node:events';

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

/**
 * One turn's stop, for the many waits a turn races against it. A race or a linked controller
 * on a plain AbortSignal adds and removes an EventTarget listener each time, which cost more
 * than the rest of a model↔tool iteration together; here the signal holds one listener for the
 * whole turn, and each wait joins a set that a stop empties. The rule is the same: a wait
 * leaves the set when its race ends, so a long turn holds only the waits in progress. (No
 * closure is made per wait: the build names every named closure as it is made, which costs.)
 */
export class StopScope {
  private readonly waiting = new Set<AbortController | PendingRace>();
  private spare: AbortController | undefined;
  private readonly onAbort = (): void => this.stopAll();

  constructor(readonly signal: AbortSignal) {
    if (!signal.aborted) signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Let go of the signal (a scope made for one wait on a signal that lives on). */
  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }

  /** `raceAbort` on this scope's signal: `promise`, or ABORTED as soon as the turn stops. */
  race<T>(promise: Promise<T>): Promise<T | Aborted> {
    if (this.signal.aborted) {
      promise.catch(() => undefined);
      return Promise.resolve(ABORTED);
    }
    const race = new PendingRace(this.waiting);
    const outcome = new Promise<T | Aborted>((resolve, reject) =>
      race.hold(resolve as (value: unknown) => void, reject),
    );
    this.waiting.add(race);
    promise.then(
      (value) => race.settle(value),
      (error: unknown) => race.fail(error),
    );
    return outcome;
  }

  /**
   * A controller of its own that follows this scope until `unlink`ed (`linkedAbortController`
   * on this scope's signal), for a provider or a tool that may leave listeners on its signal.
   * `reuse`: one a finished model call gave back may be handed out (see `unlink`).
   */
  link(reuse = false): AbortController {
    const controller = (reuse && this.spare) || new AbortController();
    if (controller === this.spare) this.spare = undefined;
    if (this.signal.aborted) controller.abort(this.signal.reason);
    else this.waiting.add(controller);
    return controller;
  }

  /**
   * The controller's wait is over. `reusable`: its holder is done with it (a model call's stream
   * ended), so when nothing listens to it any more the next `link(true)` may hand it out again: one
   * controller then serves a turn's calls, where a new one per call was the dearest thing a
   * model call made. One the holder left a listener on is never handed out again.
   */
  unlink(controller: AbortController, reusable = false): void {
    this.waiting.delete(controller);
    if (reusable && !controller.signal.aborted && getEventListeners(controller.signal, 'abort').length === 0)
      this.spare = controller;
  }

  /** How many waits are in progress (a test holds it to zero between races). */
  get size(): number {
    return this.waiting.size;
  }

  private stopAll(): void {
    const reason: unknown = this.signal.reason;
    const waits = [...this.waiting];
    this.waiting.clear();
    for (const wait of waits) {
      if (wait instanceof AbortController) wait.abort(reason);
      else wait.stop();
    }
  }
}

/** One race of a StopScope: settled by its promise or by the stop, whichever comes first. */
class PendingRace {
  private resolve: ((value: unknown) => void) | undefined;
  private reject: ((error: Error) => void) | undefined;

  constructor(private readonly waiting: Set<unknown>) {}

  hold(resolve: (value: unknown) => void, reject: (error: Error) => void): void {
    this.resolve = resolve;
    this.reject = reject;
  }

  settle(value: unknown): void {
    this.waiting.delete(this);
    this.resolve!(value);
  }

  fail(error: unknown): void {
    this.waiting.delete(this);
    this.reject!(error instanceof Error ? error : new Error(String(error)));
  }

  stop(): void {
    this.resolve!(ABORTED);
  }
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
