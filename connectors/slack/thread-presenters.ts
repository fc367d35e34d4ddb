// The Slack connector's live thread presenters (shared/thread-presenter.ts), one per session,
// each drawing on a Slack surface (slack-surface.ts) through a client of its own.
//
// At most MAX_LIVE_SESSIONS are kept: the least recently used whose thread is not working are
// dropped (a presenter holds only the current turn's cards; a later turn builds a fresh one,
// and card-index.ts finds earlier cards). Each surface's client lets SLACK_CALLS_PER_THREAD
// calls run at once; the rest queue.
import type { WebClient } from '@slack/web-api';
import type { Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { sessionIdOf, type SessionKey, type SessionRecord } from '../../src/sessions/thread-records.js';
import { ThreadPresenter } from '../shared/thread-presenter.js';
import { DEFAULT_LOADING_MESSAGES, type AgentSessions } from './agent-session.js';
import { limitClient } from './limited-client.js';
import { withIdentity, type SlackIdentity } from './post-identity.js';
import { SlackSurface } from './slack-surface.js';
import type { StreamingSupport } from './streaming-support.js';

export interface SlackThreadPresentersDeps {
  /** The app's client: each thread's own client is built on it. */
  client: WebClient;
  config: Config;
  core: Core;
  logger: EngineLogger;
  agentSessions: AgentSessions;
  /** This bot's user id (auth.test), read when a presenter is built. */
  botUserId: () => string;
  /** The name and icon the bot posts with in a channel (its profile's `identity`). */
  identityAt: (workspace: string, channel: string) => SlackIdentity | undefined;
}

export class SlackThreadPresenters {
  private readonly presenters = new Map<string, ThreadPresenter>();
  /** Each live presenter's rate-limited client: a file posted into its thread queues behind its cards. */
  private readonly threadClients = new WeakMap<ThreadPresenter, WebClient>();
  private readonly support: StreamingSupport = { native: true };

  constructor(private readonly deps: SlackThreadPresentersDeps) {}

  /** Presenters held in memory. */
  get size(): number {
    return this.presenters.size;
  }

  /** The session's presenter if it is live; none is built. */
  live(sessionId: string): ThreadPresenter | undefined {
    return this.presenters.get(sessionId);
  }

  /** The thread's presenter, built on demand with its Slack surface; the least recently used beyond the bound are dropped. */
  presenterFor(session: SessionRecord): ThreadPresenter {
    let presenter = this.presenters.get(session.id);
    if (presenter) {
      this.presenters.delete(session.id);
      this.presenters.set(session.id, presenter);
      return presenter;
    }
    const { config, core, logger } = this.deps;
    // The profile's name and icon, where its place sets them (post-identity.ts).
    const identity = () => this.deps.identityAt(session.key.workspace, session.key.channel);
    const client = withIdentity(limitClient(this.deps.client, config.SLACK_CALLS_PER_THREAD), identity);
    const surface = new SlackSurface(
      {
        client,
        records: core.manager.records,
        logger,
        support: this.support,
        botUserId: this.deps.botUserId(),
        agentSessions: this.deps.agentSessions,
        loadingMessages: config.LOADING_MESSAGES ?? DEFAULT_LOADING_MESSAGES,
        identity,
      },
      session,
    );
    presenter = new ThreadPresenter(
      {
        surface,
        records: core.manager.records,
        logger,
        grantScope: config.GRANT_SCOPE,
        toolDisplay: config.TOOL_DISPLAY,
        feedback: core.feedback,
        mask: (text) => core.mask(text),
        prices: core.prices,
      },
      session,
    );
    this.presenters.set(session.id, presenter);
    this.threadClients.set(presenter, client);
    if (this.presenters.size > config.MAX_LIVE_SESSIONS) {
      for (const id of this.presenters.keys()) {
        if (this.presenters.size <= config.MAX_LIVE_SESSIONS) break;
        if (id !== session.id && !core.manager.isWorking(id)) this.presenters.delete(id);
      }
    }
    return presenter;
  }

  /** The client that posts into a thread: its presenter's rate-limited one when live, else the app's. */
  threadClient(thread: SessionKey): WebClient {
    const presenter = this.presenters.get(sessionIdOf(thread));
    return (presenter && this.threadClients.get(presenter)) ?? this.deps.client;
  }
}
