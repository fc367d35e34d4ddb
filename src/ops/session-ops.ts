// The session layer's facts (src/sessions/session-ops.ts) as ops events on the bus.
import type { InboxResolution } from '../engine/index.js';
import type { SessionOps } from '../sessions/session-ops.js';
import { placeOf, type OpsBus } from './ops-events.js';
import type { OpsObserver } from './ops-observer.js';

export function sessionOps(bus: OpsBus, observer: OpsObserver, now: () => number = Date.now): SessionOps {
  return {
    stopRequested: (session, by) => observer.stopRequested(session, by),
    decided: (session, item, resolution, by) => {
      const place = placeOf(session);
      const tool = observer.toolOf(session.id, item.toolCallId) ?? item.kind;
      observer.decided(session.id, item.toolCallId);
      const at = now();
      bus.emit({
        type: 'wait_ended',
        at,
        place,
        toolCallId: item.toolCallId,
        tool,
        kind: item.kind,
        decision: decisionOf(resolution),
        by,
        waitedMs: at - item.createdAt,
      });
      if (resolution.kind === 'approval' && resolution.outcome.startsWith('always')) {
        const what =
          resolution.outcome.startsWith('always_command') && item.command ? `${tool}: ${item.command}` : tool;
        bus.emit({
          type: 'grant_changed',
          at,
          place,
          by,
          change: 'given',
          what,
          scope: resolution.outcome.endsWith('_all') ? 'everyone' : 'giver',
        });
      }
    },
    modelSwitched: (session, by, from, to) =>
      bus.emit({ type: 'model_switched', at: now(), place: placeOf(session), by, from, to }),
    grantsRevoked: (session, by, what) =>
      bus.emit({
        type: 'grant_changed',
        at: now(),
        place: placeOf(session),
        by,
        change: 'revoked',
        what,
        scope: 'thread and channel',
      }),
    forgotten: (session, by) => bus.emit({ type: 'forgotten', at: now(), place: placeOf(session), by }),
    budgetContinued: (session, by) => bus.emit({ type: 'budget_continued', at: now(), place: placeOf(session), by }),
  };
}

/**
 * A resolution in one word or two, never the person's text (a question's answer stays out).
 * @internal
 */
export function decisionOf(resolution: InboxResolution): string {
  switch (resolution.kind) {
    case 'approval':
      return resolution.outcome;
    case 'question':
      return 'answered';
    case 'plan':
      return resolution.approved ? 'approved' : 'rejected';
    case 'directory':
      return resolution.granted ? 'granted' : 'refused';
    case 'interrupted':
      return 'interrupted';
  }
}
