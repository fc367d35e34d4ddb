// A thread's Web API client with at most N calls in flight. A burst in one thread (a model
// answering with many tool calls, each a card posted and then updated) then queues behind
// its own thread's earlier calls instead of firing hundreds of requests at once, which Slack
// would answer with 429s for every thread of the workspace.
//
// The client is wrapped, not edited: every method under `client.<group>.<method>(…)` (and
// `apiCall`) passes through one semaphore per wrapped client, in call order.
import type { WebClient } from '@slack/web-api';

/** @internal */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`a concurrency limit must be a positive integer, got ${limit}`);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes to the next caller directly; otherwise it is freed.
      if (next) next();
      else this.active--;
    }
  }

  /** Calls running and waiting (tests). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}

export function limitClient(client: WebClient, limit: number): WebClient {
  const gate = new Semaphore(limit);
  const wrapMethod =
    (method: (...args: unknown[]) => Promise<unknown>, self: unknown) =>
    (...args: unknown[]) =>
      gate.run(() => method.apply(self, args));
  const groups = new Map<PropertyKey, unknown>();
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property === 'apiCall' && typeof value === 'function')
        return wrapMethod(value as (...args: unknown[]) => Promise<unknown>, target);
      if (value === null || typeof value !== 'object') return value;
      // A method group (chat, reactions, assistant.threads, …): its functions go through the gate.
      let wrapped = groups.get(property);
      if (!wrapped) {
        wrapped = wrapGroup(value, wrapMethod);
        groups.set(property, wrapped);
      }
      return wrapped;
    },
  });
}

function wrapGroup(
  group: object,
  wrapMethod: (method: (...args: unknown[]) => Promise<unknown>, self: unknown) => unknown,
): object {
  const inner = new Map<PropertyKey, unknown>();
  return new Proxy(group, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value === 'function') return wrapMethod(value as (...args: unknown[]) => Promise<unknown>, target);
      if (value === null || typeof value !== 'object') return value;
      let nested = inner.get(property);
      if (!nested) {
        nested = wrapGroup(value, wrapMethod);
        inner.set(property, nested);
      }
      return nested;
    },
  });
}
