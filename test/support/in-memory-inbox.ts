// An inbox held in memory, for the engine's tests: the same seam the persistent inbox
// (src/store/persistent-inbox.ts) implements, with its rules (one item per tool call, the
// first offered answer wins), and nothing kept past the process.
import {
  isOfferedChoice,
  newInboxItem,
  PromptWaiters,
  type InboxItem,
  type InboxPort,
  type InboxResolution,
  type OpenPrompt,
  type ResolveResult,
} from '../../src/engine/index.js';

export class InMemoryInbox implements InboxPort {
  private readonly items = new Map<string, InboxItem>();
  private readonly byCall = new Map<string, string>();
  private readonly waiters = new PromptWaiters();

  /** Open (or find) the prompt for a tool call. Idempotent on (session, tool_call_id). */
  open(input: OpenPrompt): InboxItem {
    const key = callKey(input.sessionId, input.toolCallId);
    const existing = this.byCall.get(key);
    if (existing) return this.items.get(existing)!;
    const item = newInboxItem(input);
    this.items.set(item.id, item);
    this.byCall.set(key, item.id);
    return item;
  }

  get(itemId: string): InboxItem | undefined {
    return this.items.get(itemId);
  }

  findByCall(sessionId: string, toolCallId: string): InboxItem | undefined {
    const id = this.byCall.get(callKey(sessionId, toolCallId));
    return id === undefined ? undefined : this.items.get(id);
  }

  pending(sessionId: string): InboxItem[] {
    return [...this.items.values()].filter((item) => item.sessionId === sessionId && item.state === 'pending');
  }

  lookup(sessionId: string, toolCallId: string): InboxResolution | undefined {
    return this.findByCall(sessionId, toolCallId)?.resolution;
  }

  /** First answer wins; an answer outside the offered choices is refused. */
  resolve(itemId: string, resolution: InboxResolution, resolvedBy?: string): ResolveResult {
    const item = this.items.get(itemId);
    if (!item) return { ok: false, reason: 'unknown_item' };
    if (item.state === 'resolved') return { ok: false, reason: 'already_resolved', item };
    if (!isOfferedChoice(item, resolution)) return { ok: false, reason: 'not_a_choice', item };
    item.state = 'resolved';
    item.resolution = resolution;
    item.resolvedBy = resolvedBy;
    item.resolvedAt = Date.now();
    this.waiters.wake(itemId, resolution);
    return { ok: true, item };
  }

  /** Wait for an item's answer; resolves `undefined` if the signal fires first. */
  wait(itemId: string, signal: AbortSignal): Promise<InboxResolution | undefined> {
    const item = this.items.get(itemId);
    if (item?.resolution) return Promise.resolve(item.resolution);
    return this.waiters.wait(itemId, signal);
  }
}

function callKey(sessionId: string, toolCallId: string): string {
  return `${sessionId}\u0000${toolCallId}`;
}
