// The engine's two ways of asking a person, answered through an inbox: an approval for a risky
// call, and the interactive tools' questions, plans and directory requests. Each opens (or
// finds) the item for its call, waits for the answer, and marks the item interrupted when the
// turn stops first. It sits beside the inbox, not in it, so the inbox knows nothing of the
// interactive tools that read its answers.
import { approvalChoices, interactionChoices, type InboxItem, type InboxKind, type InboxPort } from './inbox.js';
import type { InteractiveCallbacks } from './interactive.js';
import type { Approver } from './permissions.js';

/**
 * An approver backed by the inbox: opens (or finds) the item for the call and waits for
 * its answer. A stopped turn resolves the item as interrupted, so a later click on the
 * stale prompt is told "already resolved" instead of landing on the next prompt.
 * `onOpen` lets a connector post the card for a newly opened item.
 */
export function approverFromInbox(inbox: InboxPort, onOpen?: (item: InboxItem) => void): Approver {
  return async (request) => {
    const item = await inbox.open({
      sessionId: request.sessionId,
      toolCallId: request.toolCallId,
      kind: 'approval',
      choices: approvalChoices(request.command),
    });
    onOpen?.(item);
    const resolution = await inbox.wait(item.id, request.signal);
    if (!resolution) {
      await inbox.resolve(item.id, { kind: 'interrupted' });
      return 'deny';
    }
    return resolution.kind === 'approval'
      ? { outcome: resolution.outcome, note: resolution.note, by: resolution.by }
      : 'deny';
  };
}

/** Interactive callbacks backed by the inbox, with the same stop behaviour as approvals. */
export function interactiveFromInbox(inbox: InboxPort, onOpen?: (item: InboxItem) => void): InteractiveCallbacks {
  const ask = async (
    kind: InboxKind,
    request: { sessionId: string; toolCallId: string; signal: AbortSignal },
    choices: string[] = [],
  ) => {
    const item = await inbox.open({ sessionId: request.sessionId, toolCallId: request.toolCallId, kind, choices });
    onOpen?.(item);
    const resolution = await inbox.wait(item.id, request.signal);
    if (!resolution) await inbox.resolve(item.id, { kind: 'interrupted' });
    return resolution;
  };
  return {
    askUser: async (request) => {
      const r = await ask('question', request, request.options);
      return { answer: r?.kind === 'question' ? r.answer : '' };
    },
    proposePlan: async (request) => {
      const r = await ask('plan', request, interactionChoices('plan'));
      return r?.kind === 'plan'
        ? { approved: r.approved, ...(r.feedback ? { feedback: r.feedback } : {}) }
        : { approved: false };
    },
    requestDirectory: async (request) => {
      const r = await ask('directory', request, interactionChoices('directory'));
      return r?.kind === 'directory' ? { granted: r.granted, ...(r.path ? { path: r.path } : {}) } : { granted: false };
    },
  };
}
