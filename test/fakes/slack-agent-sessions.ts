// FakeSlack's agent sessions (agents.sessions.setStatus / rename, and chat.stopStream's
// `session_status`), plugged into FakeSlack's method lookup the way its files are. Slack's
// rules as the reference and the SDK's types give them: a status is one of `processing`,
// `active`, `suspended`, `closed` (anything else: `invalid_arguments`); `title` (at most 200
// characters) and `initiator_user_id` count only when the call creates the session; a rename
// takes 1-200 characters. Each thread's session keeps the history of its statuses, so a test
// can assert the walk (processing → suspended → processing → active).
//
// `refuse('unknown_method')` plays a workspace (or an app) without agent sessions: every
// sessions call, and a stopStream that carries a `session_status`, answers that error.
import type { SlackAnswer, SlackArgs } from './slack-server.js';

const SESSION_STATUSES = ['processing', 'active', 'suspended', 'closed'] as const;
type FakeSessionStatus = (typeof SESSION_STATUSES)[number];

export interface AgentSessionState {
  channel: string;
  threadTs: string;
  /** The current status. */
  status: FakeSessionStatus;
  /** Every status set, in order (setStatus and stopStream's session_status alike). */
  history: FakeSessionStatus[];
  /** Which call set each entry of `history`. */
  via: ('agents.sessions.setStatus' | 'chat.stopStream')[];
  title?: string;
  initiator?: string;
  /** Titles given by agents.sessions.rename, in order. */
  renames: string[];
}

type Handler = (args: SlackArgs, token: string | undefined) => SlackAnswer;

export interface AgentSessionsHost {
  /** FakeSlack's own chat.stopStream (this file checks and records `session_status` around it). */
  stopStream: Handler;
  /** The thread a stored message is in (its thread_ts), if the fake holds it. */
  threadOf: (channel: string, ts: string) => string | undefined;
}

const TITLE_LIMIT = 200;

export class FakeAgentSessions {
  private readonly sessions = new Map<string, AgentSessionState>();
  private refusal: string | undefined;

  constructor(private readonly host: AgentSessionsHost) {}

  /** From now on every sessions call answers `error` (a workspace without agent sessions). */
  refuse(error = 'unknown_method'): this {
    this.refusal = error;
    return this;
  }

  /** Sessions work again. */
  allow(): this {
    this.refusal = undefined;
    return this;
  }

  /** The session of a thread, or undefined when none was ever created. */
  session(channel: string, threadTs: string): AgentSessionState | undefined {
    const state = this.sessions.get(key(channel, threadTs));
    return state && structuredClone(state);
  }

  all(): AgentSessionState[] {
    return [...this.sessions.values()].map((state) => structuredClone(state));
  }

  readonly handlers: Record<string, Handler> = {
    'agents.sessions.setStatus': (args) => {
      if (this.refusal) return failed(this.refusal);
      const channel = str(args, 'channel_id');
      const threadTs = str(args, 'thread_ts');
      const status = str(args, 'status');
      if (!channel) return failed('channel_not_found');
      if (!threadTs || !isStatus(status)) return failed('invalid_arguments');
      const title = str(args, 'title');
      if (title !== undefined && title.length > TITLE_LIMIT) return failed('invalid_arguments');
      let state = this.sessions.get(key(channel, threadTs));
      if (!state) {
        // Title and initiator are read only when the call creates the session.
        state = { channel, threadTs, status, history: [], via: [], renames: [], ...(title ? { title } : {}) };
        const initiator = str(args, 'initiator_user_id');
        if (initiator) state.initiator = initiator;
        this.sessions.set(key(channel, threadTs), state);
      }
      record(state, status, 'agents.sessions.setStatus');
      return { ok: true };
    },

    'agents.sessions.rename': (args) => {
      if (this.refusal) return failed(this.refusal);
      const state = this.sessions.get(key(str(args, 'channel_id') ?? '', str(args, 'thread_ts') ?? ''));
      const title = str(args, 'title') ?? '';
      if (title.length < 1 || title.length > TITLE_LIMIT) return failed('invalid_arguments');
      if (!state) return failed('session_not_found');
      state.title = title;
      state.renames.push(title);
      return { ok: true };
    },

    'chat.stopStream': (args, token) => {
      if (args.session_status === undefined) return this.host.stopStream(args, token);
      if (this.refusal) return failed(this.refusal);
      const status = str(args, 'session_status');
      if (!isStatus(status)) return failed('invalid_arguments');
      const channel = str(args, 'channel') ?? '';
      const threadTs = this.host.threadOf(channel, str(args, 'ts') ?? '');
      const state = threadTs === undefined ? undefined : this.sessions.get(key(channel, threadTs));
      if (!state) return failed('session_not_found');
      const answer = this.host.stopStream(args, token);
      if (answer.ok) record(state, status, 'chat.stopStream');
      return answer;
    },
  };
}

function record(state: AgentSessionState, status: FakeSessionStatus, via: AgentSessionState['via'][number]): void {
  state.status = status;
  state.history.push(status);
  state.via.push(via);
}

function isStatus(value: string | undefined): value is FakeSessionStatus {
  return (SESSION_STATUSES as readonly string[]).includes(value ?? '');
}

function key(channel: string, threadTs: string): string {
  return `${channel}/${threadTs}`;
}

function failed(error: string): SlackAnswer {
  return { ok: false, error };
}

function str(args: SlackArgs, field: string): string | undefined {
  const value = args[field];
  return typeof value === 'string' ? value : undefined;
}
