// At most N model calls at once for the whole bot. A flood of threads (one person opening 25
// at once, a busy channel) then waits in line instead of sending 25 requests to the
// provider together, which would hit its rate limits and the bot's memory alike.
//
// One idea: the gate sits between the engine and the provider, as a provider itself, so the
// engine is unchanged. A call that waits says so (`waiting(ahead)`), so the thread can show
// "waiting for a free slot", and a stop while waiting leaves the line at once.
import type { Provider, ProviderChunk, ProviderRequest, ProviderResolver } from '../engine/index.js';

export class ModelCallGate {
  private running = 0;
  private readonly line: { admit: () => void; signal: AbortSignal }[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`the model call limit must be a positive integer, got ${max}`);
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
    if (this.running < this.max && this.line.length === 0) {
      this.running++;
      return this.releaser();
    }
    onWait?.(this.line.length);
    await new Promise<void>((resolve, reject) => {
      const entry = {
        signal,
        admit: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const at = this.line.indexOf(entry);
        if (at >= 0) this.line.splice(at, 1);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.line.push(entry);
    });
    return this.releaser();
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

async function* gatedStream(inner: Provider, request: ProviderRequest, signal: AbortSignal, gate: ModelCallGate, hooks?: GateHooks): AsyncIterable<ProviderChunk> {
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
