// At most N model calls at once for the whole bot. A flood of threads (one person opening 25
// at once, a busy channel) then waits in line instead of sending 25 requests to the
// provider together, which would hit its rate limits and the bot's memory alike.
//
// One idea: the gate sits between the engine and the provider, as a provider itself, so the
// engine is unchanged. A call that waits says so (`waiting(ahead)`), so the thread can show
// "waiting for a free slot", and a stop while waiting leaves the line at once.
//
// With several instances (cluster mode) the N slots are the whole bot's, held in Redis
// (`SharedSlots`, src/cluster/redis-model-slots.ts): each instance keeps its own line, in
// arrival order, and the call at its head takes a bot-wide slot when one is free, woken by a
// release here or a hint from another instance. `ahead` then counts this instance's line.
import type { Provider, ProviderChunk, ProviderRequest, ProviderResolver } from '../engine/index.js';

/** The bot-wide slots several instances share. */
export interface SharedSlots {
  /** Take a slot if one is free now: its release, else undefined (also when the pool cannot be asked: the call waits). */
  take(): Promise<(() => void) | undefined>;
  /** Resolves when a slot may have come free somewhere (a hint, at the latest after a poll period), or when `signal` aborts. */
  whenFreed(signal: AbortSignal): Promise<void>;
}

interface InLine {
  signal: AbortSignal;
  /** One process: the slot passes on; shared: the slot's release comes with it. */
  admit: (shared?: () => void) => void;
}

export class ModelCallGate {
  private running = 0;
  private readonly line: InLine[] = [];
  /** Shared slots: whether a loop hands slots to the line now, and how to wake it early. */
  private pumping = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly max: number,
    private readonly shared?: SharedSlots,
  ) {
    if (!Number.isInteger(max) || max < 1)
      throw new Error(`the model call limit must be a positive integer, got ${max}`);
  }

  /** How many calls run, and how many wait (tests, status). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.line.length };
  }

  /**
   * Wait for a slot (in arrival order), then hold it until `release` is called. Rejects with
   * the signal's reason if it is aborted while waiting. `onWait` is told how many are ahead.
   */
  async acquire(signal: AbortSignal, onWait?: (ahead: number) => void): Promise<() => void> {
    signal.throwIfAborted();
    if (this.shared) return this.acquireShared(this.shared, signal, onWait);
    if (this.running < this.max && this.line.length === 0) {
      this.running++;
      return this.releaser();
    }
    onWait?.(this.line.length);
    await this.wait(signal);
    return this.releaser();
  }

  private async acquireShared(
    shared: SharedSlots,
    signal: AbortSignal,
    onWait?: (ahead: number) => void,
  ): Promise<() => void> {
    // Nobody waits here: try the pool at once (no local count stops it: the pool holds the bot's).
    if (this.line.length === 0) {
      const slot = await takeFrom(shared);
      if (slot) {
        if (!signal.aborted) return this.sharedReleaser(slot);
        slot();
      }
      // Stopped while the pool was asked.
      signal.throwIfAborted();
    }
    onWait?.(this.line.length);
    let slot: (() => void) | undefined;
    const waiting = this.wait(signal, (given) => (slot = given));
    void this.pump(shared);
    await waiting;
    return this.sharedReleaser(slot!);
  }

  /** Join the line until admitted; leave it at once when `signal` aborts. */
  private wait(signal: AbortSignal, given?: (slot: () => void) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry: InLine = {
        signal,
        admit: (slot) => {
          signal.removeEventListener('abort', onAbort);
          if (slot) given?.(slot);
          resolve();
        },
      };
      const onAbort = (): void => {
        const at = this.line.indexOf(entry);
        if (at >= 0) this.line.splice(at, 1);
        // The loop that hands out shared slots looks again (it ends when nobody waits).
        this.wake?.();
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.line.push(entry);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.line.shift();
      // The slot passes straight to the next in line: `running` does not change.
      if (next) next.admit();
      else this.running--;
    };
  }

  private sharedReleaser(slot: () => void): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      slot();
      this.wake?.();
    };
  }

  /**
   * Shared slots: while calls wait, take a slot for the head of the line whenever one is free,
   * else wait for one to come free (a release here, a hint from the pool, its poll). One loop at
   * a time; it ends when the line is empty. It never throws: the pool answers undefined when it
   * cannot be asked.
   */
  private async pump(shared: SharedSlots): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.line.length > 0) {
        const slot = await takeFrom(shared);
        if (slot) {
          const next = this.line.shift();
          if (next) next.admit(slot);
          else slot();
          continue;
        }
        await this.freed(shared);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async freed(shared: SharedSlots): Promise<void> {
    const done = new AbortController();
    try {
      await Promise.race([new Promise<void>((resolve) => (this.wake = resolve)), shared.whenFreed(done.signal)]);
    } finally {
      this.wake = undefined;
      done.abort();
    }
  }
}

/** A slot, or undefined when none is free or the pool could not be asked (the call waits and tries again). */
function takeFrom(shared: SharedSlots): Promise<(() => void) | undefined> {
  return shared.take().catch(() => undefined);
}

export interface GateHooks {
  /** A call of this session waits for a slot, with `ahead` calls in front of it. */
  waiting(ahead: number): void | Promise<void>;
  /** It got its slot (only called after `waiting`). */
  admitted(): void | Promise<void>;
}

/** The same providers, each call first taking a slot of `gate`. */
export function gatedResolver(resolve: ProviderResolver, gate: ModelCallGate, hooks?: GateHooks): ProviderResolver {
  return (model) => {
    const inner = resolve(model);
    return {
      name: inner.name,
      capabilities: (name) => inner.capabilities(name),
      stream: (request, signal) => gatedStream(inner, request, signal, gate, hooks),
    } satisfies Provider;
  };
}

async function* gatedStream(
  inner: Provider,
  request: ProviderRequest,
  signal: AbortSignal,
  gate: ModelCallGate,
  hooks?: GateHooks,
): AsyncIterable<ProviderChunk> {
  let waited = false;
  const release = await gate.acquire(signal, (ahead) => {
    waited = true;
    void hooks?.waiting(ahead);
  });
  try {
    if (waited) await hooks?.admitted();
    yield* inner.stream(request, signal);
  } finally {
    release();
  }
}
