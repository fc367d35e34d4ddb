// A switch that makes one Keyv refuse every write from now on, used when the bot shuts down:
// from that instant the store holds exactly what a crash would have left, and the turns still
// running in memory can change nothing (their writes fail with WritesFencedError, which the
// engine and the session layer treat as "stop quietly"). Reads go on working.
//
// Why a fence rather than stopping each turn: a stop writes ("Stopped by the user", a closed
// prompt), and those writes are what made a deploy cost users their approvals. A crash
// writes nothing, and recovery already carries every crash state on: a pending approval stays
// pending, a call that started is answered "interrupted by a restart", a cut answer is asked
// for again.
import type Keyv from 'keyv';
import { WritesFencedError } from '../engine/fenced.js';

const WRITES = ['set', 'setMany', 'delete', 'deleteMany', 'clear'] as const;

export interface WriteFence {
  /** Refuse every write from now on (but to kept prefixes). */
  close(reason: string): void;
  /**
   * Keys under `prefix` stay writable after the fence: a connector's own record of what its
   * page shows (the playground's threads), which is rendering, not conversation state, so
   * the shutdown's "restarting" note is kept like a posted Slack message is.
   */
  keep(prefix: string): void;
  readonly closed: boolean;
}

export function fenceWrites(keyv: Keyv): WriteFence {
  let reason: string | undefined;
  const kept: string[] = [];
  const isKept = (key: unknown): boolean => typeof key === 'string' && kept.some((prefix) => key.startsWith(prefix));
  // set(key), delete(key | keys), setMany([{ key }]), deleteMany(keys); clear() is never kept.
  const allKept = (name: (typeof WRITES)[number], first: unknown): boolean => {
    if (name === 'clear') return false;
    const keys = Array.isArray(first)
      ? first.map((entry: unknown) =>
          typeof entry === 'object' && entry !== null ? (entry as { key?: unknown }).key : entry,
        )
      : [first];
    return keys.length > 0 && keys.every(isKept);
  };
  const target = keyv as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of WRITES) {
    const original = target[name];
    if (typeof original !== 'function') continue;
    const bound = original.bind(keyv);
    target[name] = (...args: unknown[]) =>
      reason === undefined || allKept(name, args[0]) ? bound(...args) : Promise.reject(new WritesFencedError(reason));
  }
  return {
    close: (why) => {
      reason ??= why;
    },
    keep: (prefix) => {
      if (prefix.length > 0) kept.push(prefix);
    },
    get closed() {
      return reason !== undefined;
    },
  };
}
