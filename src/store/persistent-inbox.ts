// The inbox, persisted: prompts waiting for a human survive a restart, and so do their
// answers. Same rules as the engine's in-memory inbox: an item is keyed by (session,
// tool_call_id), so opening is idempotent; the first answer wins; an answer must be one
// the item offered. Waiters are in this process: an answer given while no engine waits
// (after a restart) is stored, and the session layer resumes the turn with it.
import {
  isOfferedChoice,
  newInboxItem,
  PromptWaiters,
  type InboxItem,
  type OpenPrompt,
  type InboxPort,
  type InboxResolution,
  type ResolveResult,
} from '../engine/index.js';
import { KeyedMutex } from './keyed-mutex.js';
import type { SessionStore } from './session-store.js';

export class PersistentInbox implements InboxPort {
  private readonly mutex = new KeyedMutex();
  private readonly waiters = new PromptWaiters();

  /**
   * `once` (cluster mode): every final answer of an item (a click, a reply that declines it,
   * a stop that closes it) first claims the item across instances, so two instances cannot
   * both answer it; `release` gives the claim back when the answer could not be recorded.
   */
  constructor(
    private readonly store: SessionStore,
    private readonly once?: { claim(itemId: string): Promise<boolean>; release(itemId: string): Promise<void> },
  ) {}

  open(input: OpenPrompt): Promise<InboxItem> {
    return this.mutex.run(`call:${input.sessionId}:${input.toolCallId}`, async () => {
      const existing = await this.findByCall(input.sessionId, input.toolCallId);
      if (existing) return existing;
      const item = newInboxItem(input);
      await this.store.addItem(item);
      return item;
    });
  }

  get(itemId: string): Promise<InboxItem | undefined> {
    return this.store.getItem(itemId);
  }

  async findByCall(sessionId: string, toolCallId: string): Promise<InboxItem | undefined> {
    const id = await this.store.itemIdForCall(sessionId, toolCallId);
    return id === undefined ? undefined : this.store.getItem(id);
  }

  async lookup(sessionId: string, toolCallId: string): Promise<InboxResolution | undefined> {
    return (await this.findByCall(sessionId, toolCallId))?.resolution;
  }

  async pending(sessionId: string): Promise<InboxItem[]> {
    return (await this.store.sessionItems(sessionId)).filter((item) => item.state === 'pending');
  }

  resolve(itemId: string, resolution: InboxResolution, resolvedBy?: string): Promise<ResolveResult> {
    return this.mutex.run(`item:${itemId}`, async (): Promise<ResolveResult> => {
      const item = await this.store.getItem(itemId);
      if (!item) return { ok: false, reason: 'unknown_item' };
      if (item.state === 'resolved') return { ok: false, reason: 'already_resolved', item };
      if (!isOfferedChoice(item, resolution)) return { ok: false, reason: 'not_a_choice', item };
      if (this.once && !(await this.once.claim(itemId))) return { ok: false, reason: 'already_resolved', item };
      const resolved: InboxItem = { ...item, state: 'resolved', resolution, resolvedAt: Date.now() };
      if (resolvedBy !== undefined) resolved.resolvedBy = resolvedBy;
      try {
        await this.store.updateItem(resolved);
      } catch (error) {
        await this.once?.release(itemId).catch(() => undefined);
        throw error;
      }
      this.waiters.wake(itemId, resolution);
      return { ok: true, item: resolved };
    });
  }

  /**
   * Another instance answered the item (cluster mode): wake this instance's waiting turn with
   * the answer now in the store.
   */
  async refresh(itemId: string): Promise<void> {
    const item = await this.store.getItem(itemId);
    if (item?.resolution) this.waiters.wake(itemId, item.resolution);
  }

  /** Wait for an item's answer; resolves `undefined` if the signal fires first. */
  wait(itemId: string, signal: AbortSignal): Promise<InboxResolution | undefined> {
    const answer = this.waiters.wait(itemId, signal);
    // Registered first, then checked: an answer that landed meanwhile is not missed.
    this.store.getItem(itemId).then(
      (item) => {
        if (item?.resolution) this.waiters.wake(itemId, item.resolution);
      },
      () => undefined, // the store is down: the live waiter still gets a later answer
    );
    return answer;
  }
}
