// Prompts that wait for a human: approvals, questions, plans, directory requests.
//
// An item is keyed by (session, tool_call_id), so asking again after a restart finds the
// same item instead of minting a second one, and an answer given before the restart is
// used without asking again (durable resume). Resolving happens exactly once: the first
// answer wins. A resolution must be one of the choices the item offered, so free text can
// never mint a grant or approve a call. The persistent inbox (src/store/persistent-inbox.ts)
// implements the `InboxPort` seam; the engine's tests use an in-memory one
// (test/support/in-memory-inbox.ts).
import { randomUUID } from 'node:crypto';
import type { ApprovalOutcome } from './permissions.js';

export type InboxKind = 'approval' | 'question' | 'plan' | 'directory';

export type InboxResolution =
  /** `by`: who answered; an "always" answer becomes a grant that person owns. */
  | { kind: 'approval'; outcome: ApprovalOutcome; note?: string; by?: string }
  | { kind: 'question'; answer: string }
  | { kind: 'plan'; approved: boolean; feedback?: string }
  | { kind: 'directory'; granted: boolean; path?: string }
  /** The turn was stopped while the prompt waited: a later click is a no-op. */
  | { kind: 'interrupted' };

export interface InboxItem {
  id: string;
  sessionId: string;
  toolCallId: string;
  kind: InboxKind;
  /** The closed vocabulary this prompt accepts (approval outcomes, question options). */
  choices: string[];
  state: 'pending' | 'resolved';
  resolution?: InboxResolution;
  resolvedBy?: string;
  createdAt: number;
  resolvedAt?: number;
  /** An approval's reason and command, kept so its card can be shown again after a restart. */
  reason?: string;
  command?: string;
}

/** What the engine needs: has this prompt already been answered? */
export interface InboxLookup {
  lookup(sessionId: string, toolCallId: string): Promise<InboxResolution | undefined> | InboxResolution | undefined;
}

export type OpenPrompt = {
  sessionId: string;
  toolCallId: string;
  kind: InboxKind;
  choices?: string[];
  reason?: string;
  command?: string;
};

/** A fresh pending item for a tool call's prompt. */
export function newInboxItem(input: OpenPrompt): InboxItem {
  return {
    id: randomUUID(),
    sessionId: input.sessionId,
    toolCallId: input.toolCallId,
    kind: input.kind,
    choices: input.choices ?? [],
    state: 'pending',
    createdAt: Date.now(),
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    ...(input.command !== undefined ? { command: input.command } : {}),
  };
}

/** An inbox that can open, wait for and resolve prompts: in memory here, persistent in src/store. */
export interface InboxPort extends InboxLookup {
  open(input: OpenPrompt): InboxItem | Promise<InboxItem>;
  wait(itemId: string, signal: AbortSignal): Promise<InboxResolution | undefined>;
  resolve(itemId: string, resolution: InboxResolution, resolvedBy?: string): ResolveResult | Promise<ResolveResult>;
}

export type ResolveResult =
  | { ok: true; item: InboxItem }
  | { ok: false; reason: 'unknown_item' | 'already_resolved' | 'not_a_choice'; item?: InboxItem };

/**
 * The people (engines) waiting for prompts' answers in this process. A wait ends with the
 * answer, or with `undefined` when its signal fires; either way its listener is released.
 */
export class PromptWaiters {
  private readonly waiting = new Map<string, Set<(resolution: InboxResolution) => void>>();

  wait(itemId: string, signal: AbortSignal): Promise<InboxResolution | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiters = this.waiting.get(itemId) ?? new Set();
      this.waiting.set(itemId, waiters);
      const onAbort = (): void => {
        waiters.delete(wake);
        resolve(undefined);
      };
      const wake = (resolution: InboxResolution): void => {
        waiters.delete(wake);
        signal.removeEventListener('abort', onAbort);
        resolve(resolution);
      };
      waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  wake(itemId: string, resolution: InboxResolution): void {
    const waiters = this.waiting.get(itemId);
    this.waiting.delete(itemId);
    for (const wake of waiters ?? []) wake(resolution);
  }
}

/** A resolution must be one the item offered: free text never mints a grant or approves. */
export function isOfferedChoice(item: Pick<InboxItem, 'kind' | 'choices'>, resolution: InboxResolution): boolean {
  if (resolution.kind === 'interrupted') return true;
  if (resolution.kind !== item.kind) return false;
  switch (resolution.kind) {
    case 'approval':
      return item.choices.includes(resolution.outcome);
    case 'question':
      // Free text may answer a question; options, when offered, are suggestions.
      return true;
    case 'plan':
    case 'directory':
      return true;
  }
}

/**
 * The choices an approval prompt offers: "always allow this command" only for shell calls;
 * "… for everyone" only where admins approve (`everyone`), since only an admin may give it.
 */
export function approvalChoices(command: string | undefined, options: { everyone?: boolean } = {}): string[] {
  const always = command === undefined ? ['always_tool'] : ['always_tool', 'always_command'];
  const forEveryone = options.everyone ? always.map((choice) => `${choice}_all`) : [];
  return ['once', ...always, ...forEveryone, 'deny'];
}

/** The choices each interactive prompt offers (a question's options are suggestions only). */
export function interactionChoices(kind: InboxKind, options: string[] = []): string[] {
  return kind === 'plan' ? ['approve', 'reject'] : kind === 'directory' ? ['grant', 'deny'] : options;
}
