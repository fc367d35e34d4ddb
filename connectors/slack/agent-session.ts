// A Slack thread as an agent session (agents.sessions.setStatus): where the conversation
// stands shown natively, with a title, its initiator, and Slack's own Stop button while the
// bot works (a click comes back as `agent_session_stopped`: stop-button.ts).
//
// What this file owns:
//   - the mapping from our WorkStatus to the only four values Slack takes (a free-form status
//     is refused with invalid_arguments; one peer shipped exactly that bug);
//   - the session title, made of the request: mentions and links turned into plain words,
//     broadcasts made inert, one line, at most 200 characters (secrets are masked before it
//     gets here, by the presenter);
//   - which workspaces have sessions at all. A workspace or an app without them (not an agent
//     app, an older plan, GovSlack, a token or scope that may not) refuses the method; the bot
//     then says so once in the log for that workspace, never asks there again, and the surface
//     falls back to the "is thinking…" status of DM threads (assistant.threads.setStatus);
//   - the mark that a thread's session was created (so a later turn or a restart does not
//     send the title again): a store reference in the session's own list, deleted with it.
import type { WebClient } from '@slack/web-api';
import type { EngineLogger } from '../../src/engine/index.js';
import type { ThreadRecords } from '../../src/sessions/thread-records.js';
import { neutraliseBroadcasts } from '../shared/mentions.js';
import type { StatusDetails, WorkStatus } from '../shared/thread-surface.js';
import { slackError } from './slack-errors.js';

/**
 * The lifecycle values agents.sessions.setStatus (and chat.stopStream's session_status) accept.
 * @internal
 */
export type SessionStatus = 'processing' | 'suspended' | 'active' | 'closed';

/** @internal */
export const SESSION_STATUS: Readonly<Record<WorkStatus, SessionStatus>> = {
  thinking: 'processing',
  waiting: 'suspended',
  idle: 'active',
  closed: 'closed',
};

/**
 * Slack's cap on a session title.
 * @internal
 */
export const TITLE_LIMIT = 200;

/**
 * What the DM status line rotates through while the bot works (assistant.threads.setStatus's
 * `loading_messages`), unless LOADING_MESSAGES says otherwise: short, and about what it does.
 */
export const DEFAULT_LOADING_MESSAGES: readonly string[] = [
  'Reading the thread…',
  'Thinking it through…',
  'Running the tools…',
  'Checking the results…',
  'Writing the answer…',
];

/**
 * Refusals that mean "no agent sessions here", for this workspace as a whole. Anything else
 * (a rate limit, a channel the bot left, a 5xx) is a failure of this one call.
 */
const UNAVAILABLE = new Set([
  'unknown_method',
  'method_deprecated',
  'not_allowed',
  'not_allowed_token_type',
  'missing_scope',
  'no_permission',
  'not_enabled',
  'feature_not_enabled',
  'team_not_allowed',
  'not_implemented',
]);

/** One thread, as the sessions API names it. */
export interface SessionThread {
  /** The session id in our store (the created-mark lives in its reference list). */
  sessionId: string;
  /** The workspace (team id): availability is remembered per workspace. */
  teamId: string;
  channel: string;
  threadTs: string;
}

/**
 * A session title made of a request: Slack markup turned into the words it shows
 * (`<@U1|ada>` → `@ada`, `<#C1|ops>` → `#ops`, `<!here>` → `@here`, `<https://x|x>` → `x`),
 * broadcast words made inert (a word joiner after the `@`), whitespace folded to one line,
 * and cut to TITLE_LIMIT characters with an ellipsis. Empty when nothing is left.
 * @internal
 */
export function sessionTitle(text: string): string {
  const words = text
    .replace(/<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => `@${label || id}`)
    .replace(/<#([CG][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, name?: string) => `#${name || id}`)
    .replace(/<!subteam\^[A-Z0-9]+(?:\|([^>]*))?>/g, (_m, label?: string) => label || '@group')
    .replace(/<!([a-z]+)(?:\|([^>]*))?>/gi, (_m, kind: string, label?: string) => label || `@${kind}`)
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, '$2')
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  // Whatever markup is left (a stray `<…>`) is text, not a token Slack could act on.
  const inert = neutraliseBroadcasts(words.replace(/</g, '‹').replace(/>/g, '›'), 'slack-plain');
  return capped(inert, TITLE_LIMIT);
}

/** At most `limit` UTF-16 units, an ellipsis at the cut, never half a surrogate pair. */
function capped(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let cut = limit - 1;
  if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut -= 1;
  return `${text.slice(0, cut).trimEnd()}…`;
}

export interface AgentSessionsDeps {
  records: Pick<ThreadRecords, 'messageAt' | 'rememberMessage'>;
  logger: EngineLogger;
}

/** The connector's view of agent sessions, shared by every thread: one per connector. */
export class AgentSessions {
  /** Workspaces that refused the sessions API: never asked again (until a restart). */
  private readonly unavailable = new Set<string>();

  constructor(private readonly deps: AgentSessionsDeps) {}

  /** False once this workspace refused the sessions API. */
  available(teamId: string): boolean {
    return !this.unavailable.has(teamId);
  }

  /**
   * Tell Slack where the thread's session stands. True when Slack took it; false when this
   * workspace has no sessions (now or from an earlier refusal): the caller falls back. Other
   * failures throw, as any surface call may.
   */
  async setStatus(
    client: WebClient,
    thread: SessionThread,
    status: WorkStatus,
    details?: StatusDetails,
  ): Promise<boolean> {
    if (!this.available(thread.teamId)) return false;
    // Only a turn that answers a new request may be the one that creates the session; the
    // store is asked only then.
    const creating = status === 'thinking' && details !== undefined && !(await this.created(thread));
    const title = creating && details.title ? sessionTitle(details.title) : '';
    try {
      await client.agents.sessions.setStatus({
        channel_id: thread.channel,
        thread_ts: thread.threadTs,
        status: SESSION_STATUS[status],
        // Only read by Slack when the call creates the session: sent once, with the first request.
        ...(title ? { title } : {}),
        ...(creating && details.initiator ? { initiator_user_id: details.initiator } : {}),
      });
    } catch (error) {
      if (this.refused(thread.teamId, error)) return false;
      throw error;
    }
    if (creating) await this.markCreated(thread);
    return true;
  }

  /** /forget: the thread's session is closed (nothing to do where there are no sessions). */
  async close(client: WebClient, thread: SessionThread): Promise<void> {
    await this.setStatus(client, thread, 'closed');
  }

  /** A refusal of the method itself: remembered for the workspace, logged once at info. */
  private refused(teamId: string, error: unknown): boolean {
    const code = slackError(error);
    if (code === undefined || !UNAVAILABLE.has(code)) return false;
    if (!this.unavailable.has(teamId)) {
      this.unavailable.add(teamId);
      this.deps.logger.info(
        { team: teamId, error: code },
        'Slack agent sessions are not available in this workspace; showing the DM "is thinking…" status instead',
      );
    }
    return true;
  }

  private async created(thread: SessionThread): Promise<boolean> {
    return (await this.deps.records.messageAt(markKey(thread))) !== undefined;
  }

  private async markCreated(thread: SessionThread): Promise<void> {
    try {
      await this.deps.records.rememberMessage(markKey(thread), { sessionId: thread.sessionId, kind: 'agent_session' });
    } catch (error) {
      // Losing the mark only means the title is offered again (Slack ignores it on an existing session).
      this.deps.logger.debug({ err: error }, 'could not record that the agent session was created');
    }
  }
}

/** Not a message key (`slack:<channel>:<ts>`): nothing a reaction or a click can look up. */
function markKey(thread: SessionThread): string {
  return `slack-agent-session:${thread.channel}:${thread.threadTs}`;
}
