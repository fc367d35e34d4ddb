// Slack's own Stop button (an agent session's, shown while the bot works) is our stop: its
// `agent_session_stopped` event takes exactly the path a 🛑 reaction on the thread takes
// (the connector's `stop`): the same "who may stop" rule, a refusal told privately while the
// turn goes on, the same "Stopped by …" note, in cluster mode routed to the owner by the
// session layer.
//
// One click is one stop. Slack delivers an event again when it got no answer in time, and a
// click on two clients, or a retried delivery, must not post a second note or a second
// refusal: each stop is claimed once (the session layer's event claims, shared by every
// instance in cluster mode) under its thread and `event_ts`, which every delivery of that
// click carries.
import type { App } from '@slack/bolt';
import type { EngineLogger } from '../../src/engine/index.js';
import { readInbound } from './inbound-events.js';

export interface StopButtonDeps {
  logger: EngineLogger;
  /** The workspace the bot was installed in (auth.test), for a body without `team_id`. */
  teamId: () => string;
  /** Claim a platform event id once (SessionManager.claimEvent). */
  claimEvent: (eventId: string) => Promise<boolean>;
  /**
   * The 🛑 path: stop the thread rooted at `threadTs` for `userId`, or tell them privately why
   * not; nothing at all when `claimed` settles false (this click was handled already).
   */
  stop: (teamId: string, channel: string, threadTs: string, userId: string, claimed: Promise<boolean>) => Promise<void>;
}

export function listenForStopButton(app: App, deps: StopButtonDeps): void {
  app.event('agent_session_stopped', async ({ body }) => {
    const stopped = readInbound('agent_session_stopped', body, deps.logger);
    if (!stopped) return;
    const { channel, thread_ts: threadTs, user, event_ts: eventTs } = stopped.event;
    const teamId = stopped.team_id ?? deps.teamId();
    // The claim (a store write) runs while the stop looks the thread up, and decides before
    // anything is done: a stop is as quick as a 🛑, and one click still acts once.
    const claimed = deps.claimEvent(stopEventId(teamId, channel, threadTs, eventTs)).catch((error: unknown) => {
      // A stop is not lost to a store that failed: at worst a retry of it is applied twice.
      deps.logger.warn({ err: error }, 'could not record the Stop button click; stopping anyway');
      return true;
    });
    await deps.stop(teamId, channel, threadTs, user, claimed);
  });
}

/** One click's id: the same on every delivery of it, different for the next click. */
function stopEventId(teamId: string, channel: string, threadTs: string, eventTs: string): string {
  return `slack:${teamId}:stop:${channel}:${threadTs}:${eventTs}`;
}
