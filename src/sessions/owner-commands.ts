// The owner's side of the coordination seam: what this instance does with a command for a
// session it runs. In one process the coordinator hands each command (steering, a stop, an
// answered prompt) to `applyOwnerCommand` at once; in cluster mode the routing
// (cluster-routing.ts) drains a session's command list and applies each through the
// one-process paths `ownerPaths` names (the same code a single process runs).
import type { EngineLogger } from '../engine/index.js';
import type { SessionStore } from '../store/session-store.js';
import type { LocalSessions } from './cluster-routing.js';
import type { SessionCommand } from './coordination.js';
import { markStopped } from './live-session.js';
import { isBusy, type LiveSessions } from './live-sessions.js';
import type { MessageDelivery } from './message-delivery.js';
import type { PromptAnswers } from './prompt-answers.js';
import { recoverSession, type RecoveryDeps } from './recovery.js';
import type { Reporter } from './session-observer.js';
import type { ThreadStops } from './thread-stops.js';

export interface OwnerDeps {
  store: SessionStore;
  sessions: LiveSessions;
  delivery: MessageDelivery;
  stops: ThreadStops;
  answers: PromptAnswers;
  /** What the restart recovery of one session taken over needs. */
  recovery: RecoveryDeps;
  reporter: Reporter;
  logger: EngineLogger;
}

/** Act on a command for a session this instance runs. */
export async function applyOwnerCommand(
  deps: Pick<OwnerDeps, 'sessions' | 'answers'>,
  sessionId: string,
  command: SessionCommand,
): Promise<void> {
  const live = deps.sessions.peek(sessionId);
  switch (command.kind) {
    case 'steer':
      live?.engine.queueSteering(command.text, command.source, command.inputId, command.attachments);
      return;
    case 'stop':
      // A reserved turn counts: a stop right after the message that started it lands.
      if (live?.engine.isRunning) {
        markStopped(live, command.userId);
        live.engine.requestInterrupt();
      }
      return;
    case 'resolved':
      return deps.answers.resolvedHere(sessionId, command.itemId, command.toolCallId);
  }
}

/** The one-process paths, as the cluster routing applies the commands this instance owns. */
export function ownerPaths(deps: OwnerDeps): LocalSessions {
  const { store, sessions, logger } = deps;
  return {
    deliverHere: (key, message, inputId) => deps.delivery.deliverHere(key, message, inputId),
    interruptHere: async (sessionId, userId) =>
      deps.stops.interruptHere(sessionId, userId, await sessions.record(sessionId)),
    resolvedHere: (sessionId, itemId, toolCallId) => deps.answers.resolvedHere(sessionId, itemId, toolCallId),
    recoverHere: async (sessionId) => {
      await recoverSession(deps.recovery, sessionId);
    },
    inFlight: async (sessionId) => (await store.openSessionIds()).includes(sessionId),
    announceTakeover: async (sessionId) => {
      const record = await sessions.record(sessionId);
      if (record) await deps.reporter.takenOver(record);
    },
    busy: (sessionId) => {
      const live = sessions.peek(sessionId);
      return live !== undefined && isBusy(live);
    },
    forget: (sessionId, lost) => {
      if (lost) logger.warn({ sessionId }, 'cluster: this instance lost a session to another; its work here stops');
      // Another instance may have written the session since: nothing held here is current.
      store.forgetCached(sessionId);
      void sessions.drop(sessionId);
    },
  };
}
