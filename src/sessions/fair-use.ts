// Fair use: what one thread may queue and what one person may start, so a flood of replies
// or threads from one member cannot take the bot from everyone else. Every refusal is a
// sentence for the person it affects (the connector whispers it).
//
// A thread's queue is counted from the store (every instance reads the same). A person's
// starts and working threads are counted through the coordination seam (coordination.ts
// PersonCounters): in this process for one instance, in Redis in cluster mode, so a person
// gets their share of the whole bot, not a share per instance.
import { randomUUID } from 'node:crypto';
import type { QueueLoad } from '../store/session-store.js';
import { InProcessPersonCounters, type PersonCounters } from './person-counters.js';

export interface FairUseLimits {
  /** Messages waiting in one thread (default 20). */
  maxQueuedInputs: number;
  /** Their text's total size in bytes (default 256 KiB). */
  maxQueuedBytes: number;
  /** New turns one person may start per minute, across threads (default 10). */
  turnsPerUserPerMinute: number;
  /** Threads working on one person's request at once (default 3). */
  threadsPerUser: number;
}

const DEFAULT_FAIR_USE: FairUseLimits = {
  maxQueuedInputs: 20,
  maxQueuedBytes: 256 * 1024,
  turnsPerUserPerMinute: 10,
  threadsPerUser: 3,
};

export type FairUseVerdict = { ok: true } | { ok: false; reason: string };

/** A start fair use counted: the thread works for `userId` until `threadDone`. */
export interface CountedStart {
  userId: string;
  sessionId: string;
  startId: string;
}

export class FairUse {
  constructor(
    readonly limits: FairUseLimits = DEFAULT_FAIR_USE,
    private readonly people: PersonCounters = new InProcessPersonCounters(),
  ) {}

  /** May one more message of `bytes` join a thread that already holds `load`? */
  mayQueue(load: QueueLoad, bytes: number): FairUseVerdict {
    const { maxQueuedInputs, maxQueuedBytes } = this.limits;
    if (load.count >= maxQueuedInputs) {
      return {
        ok: false,
        reason: `${load.count} messages are already waiting in this thread (the limit is ${maxQueuedInputs}); send this again once I have taken them.`,
      };
    }
    if (load.bytes + bytes > maxQueuedBytes) {
      return {
        ok: false,
        reason: `That would put more than ${Math.round(maxQueuedBytes / 1024)} KB of messages in this thread's queue; send it again once I have taken the others, or shorter.`,
      };
    }
    return { ok: true };
  }

  /**
   * May `userId` start a new turn in `sessionId`? When they may, the start is counted at once
   * (for the whole bot): `undo` it if it does not happen after all, `threadDone` when its turn is over.
   */
  async start(
    userId: string,
    sessionId: string,
  ): Promise<{ ok: true; counted: CountedStart } | { ok: false; reason: string }> {
    const { threadsPerUser, turnsPerUserPerMinute } = this.limits;
    const counted: CountedStart = { userId, sessionId, startId: randomUUID() };
    const verdict = await this.people.tryStart(userId, sessionId, counted.startId, {
      turnsPerMinute: turnsPerUserPerMinute,
      threads: threadsPerUser,
    });
    if (verdict.ok) return { ok: true, counted };
    if (verdict.limit === 'threads') {
      return {
        ok: false,
        reason: `You have ${verdict.working} threads working already (the limit is ${threadsPerUser}); this one starts when you send it again after one of them is done.`,
      };
    }
    const wait = Math.max(1, Math.ceil(verdict.retryInMs / 1000));
    return {
      ok: false,
      reason: `You started ${verdict.recent} requests in the last minute (the limit is ${turnsPerUserPerMinute}); send this again in ${wait} s.`,
    };
  }

  /** A counted start that did not happen (a spend limit refused it, or the turn could not begin). */
  undo(counted: CountedStart): Promise<void> {
    return this.people.undoStart(counted.userId, counted.sessionId, counted.startId);
  }

  /** The thread's turn is over: it no longer counts among the person's working threads. */
  threadDone(counted: CountedStart): Promise<void> {
    return this.people.threadDone(counted.userId, counted.sessionId);
  }
}
