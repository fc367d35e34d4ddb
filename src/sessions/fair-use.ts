// Fair use: what one thread may queue and what one person may start, so a flood of replies
// or threads from one member cannot take the bot from everyone else. Every refusal is a
// sentence for the person it affects (the connector whispers it).
//
// In-process counters: with several instances each counts its own share (cluster mode's
// shared counters are issue 14's business).
import type { QueueLoad } from '../store/session-store.js';

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

export const DEFAULT_FAIR_USE: FairUseLimits = { maxQueuedInputs: 20, maxQueuedBytes: 256 * 1024, turnsPerUserPerMinute: 10, threadsPerUser: 3 };

const MINUTE_MS = 60_000;
/** People tracked at once; the oldest drop out first (their window has long passed anyway). */
const MAX_TRACKED_PEOPLE = 10_000;

export type FairUseVerdict = { ok: true } | { ok: false; reason: string };

export class FairUse {
  private readonly starts = new Map<string, number[]>();

  constructor(readonly limits: FairUseLimits = DEFAULT_FAIR_USE) {}

  /** May one more message of `bytes` join a thread that already holds `load`? */
  mayQueue(load: QueueLoad, bytes: number): FairUseVerdict {
    const { maxQueuedInputs, maxQueuedBytes } = this.limits;
    if (load.count >= maxQueuedInputs) {
      return { ok: false, reason: `${load.count} messages are already waiting in this thread (the limit is ${maxQueuedInputs}); send this again once I have taken them.` };
    }
    if (load.bytes + bytes > maxQueuedBytes) {
      return { ok: false, reason: `That would put more than ${Math.round(maxQueuedBytes / 1024)} KB of messages in this thread's queue; send it again once I have taken the others, or shorter.` };
    }
    return { ok: true };
  }

  /** May `userId` start a new turn, with `running` of their requests already working? */
  mayStart(userId: string, running: number, now = Date.now()): FairUseVerdict {
    const { threadsPerUser, turnsPerUserPerMinute } = this.limits;
    if (running >= threadsPerUser) {
      return { ok: false, reason: `You have ${running} threads working already (the limit is ${threadsPerUser}); this one starts when you send it again after one of them is done.` };
    }
    const recent = (this.starts.get(userId) ?? []).filter((at) => now - at < MINUTE_MS);
    if (recent.length >= turnsPerUserPerMinute) {
      const wait = Math.ceil((MINUTE_MS - (now - recent[0]!)) / 1000);
      return { ok: false, reason: `You started ${recent.length} requests in the last minute (the limit is ${turnsPerUserPerMinute}); send this again in ${wait} s.` };
    }
    return { ok: true };
  }

  /** Count a turn `userId` started. */
  started(userId: string, now = Date.now()): void {
    const recent = (this.starts.get(userId) ?? []).filter((at) => now - at < MINUTE_MS);
    this.starts.delete(userId);
    this.starts.set(userId, [...recent, now]);
    if (this.starts.size > MAX_TRACKED_PEOPLE) this.starts.delete(this.starts.keys().next().value!);
  }
}
