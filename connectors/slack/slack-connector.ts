// The Slack connector: the only code that knows Slack. Inbound, it turns Bolt events into
// session calls (a mention or a thread reply → deliver, a 🛑 reaction → interrupt, a
// button → resolve or retry, `@bot /command` → a thread command: human-messages.ts); outbound,
// it registers a thread presenter per session (shared/thread-presenter.ts, kept in
// thread-presenters.ts) drawing on a Slack surface (slack-surface.ts) with the core's observer hub.
//
// Bolt is configured on purpose (bolt-app.ts): never acknowledge what was not recorded, and
// a failing start-up auth.test is an error in words, not a crash.
//
// Inbound, the door comes first: a payload that does not parse is acknowledged and dropped
// (inbound-events.ts: Slack must not resend it), and a message from someone who may not use
// the bot is refused before anything it holds is looked up (human-messages.ts).
//
// Files: a message's shared files are described to the session layer (inbound-files.ts) and
// fetched only when a turn takes the message, through the file source registered here
// (file-source.ts); attach_file posts through the file sink (file-sink.ts).
import type { AddressInfo } from 'node:net';
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { clustered, type Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { sessionIdOf, type SessionKey, type SessionRecord } from '../../src/sessions/thread-records.js';
import { sessionStoppedAt, stopThread } from '../shared/thread-stop.js';
import { listenForButtons } from './button-clicks.js';
import { presenterObserver } from '../shared/thread-presenter.js';
import { AgentSessions } from './agent-session.js';
import { listenForAgentCommand } from './agent-command.js';
import { readHumanMessage, readInbound } from './inbound-events.js';
import { receiveHumanMessage, type HumanMessageDeps } from './human-messages.js';
import { listenForFeedback } from './feedback-clicks.js';
import { SlackFileSink } from './file-sink.js';
import { SlackFileSource } from './file-source.js';
import { openBoltApp } from './bolt-app.js';
import { withIdentity, type SlackIdentity } from './post-identity.js';
import { listenForMessagesTab } from './messages-tab.js';
import { messageKey } from './slack-surface.js';
import { listenForStopButton } from './stop-button.js';
import { SlackThreadPresenters } from './thread-presenters.js';
import { UserNames } from './user-names.js';
import { checkSlackProfileChannels } from './profile-channels.js';

export const STOP_REACTION = 'octagonal_sign';

export interface SlackConnectorOptions {
  config: Config;
  core: Core;
  logger: EngineLogger;
}

export class SlackConnector {
  private readonly presenters: SlackThreadPresenters;
  private readonly names: UserNames;
  private readonly agentSessions: AgentSessions;
  private taking = false;
  /** The start's look-up of the profiles' channels (profile-channels.ts); tests await it. */
  profileChannels: Promise<void> = Promise.resolve();
  private botUserId = '';
  private teamId = '';
  private teamUrl = '';

  private constructor(
    private readonly app: App,
    private readonly options: SlackConnectorOptions,
  ) {
    this.names = new UserNames(app.client, options.logger);
    // The schedule_task tool reads a Slack person's "when" in their own zone, as /schedule does.
    options.core.personZones.register('slack', (userId) => this.names.timezoneOf(userId));
    this.agentSessions = new AgentSessions({ records: options.core.manager.records, logger: options.logger });
    this.presenters = new SlackThreadPresenters({
      client: app.client,
      config: options.config,
      core: options.core,
      logger: options.logger,
      agentSessions: this.agentSessions,
      botUserId: () => this.botUserId,
      identityAt: (workspace, channel) => this.identityAt(workspace, channel),
    });
  }

  /** Build the Bolt app and check the token (auth.test). Events flow only after start(). */
  static async create(options: SlackConnectorOptions): Promise<SlackConnector> {
    const { config, logger } = options;
    const app = await openBoltApp(config, logger, options.core);
    const connector = new SlackConnector(app, options);
    await connector.identify();
    connector.listen();
    options.core.observers.add(
      'slack',
      presenterObserver((session) => connector.presenters.presenterFor(session)),
    );
    options.core.files.registerSource(
      'slack',
      new SlackFileSource({ token: config.SLACK_BOT_TOKEN, apiUrl: config.SLACK_API_URL, client: app.client }),
    );
    options.core.files.registerSink('slack', new SlackFileSink((thread) => connector.presenters.threadClient(thread)));
    return connector;
  }

  /** Start taking events: Socket Mode connects; HTTP mode listens on PORT. */
  async start(): Promise<void> {
    const { config, logger } = this.options;
    // Several instances each open a connection and Slack spreads events over them (up to 10).
    if (config.SLACK_APP_TOKEN && clustered(config)) logger.warn({}, SOCKET_MODE_CLUSTER_WARNING);
    if (this.options.config.SLACK_APP_TOKEN) await this.app.start();
    else await this.app.start(this.options.config.PORT);
    this.taking = true;
    // Connected: the channels the profiles name are looked up, in the background (warnings only).
    this.profileChannels = checkSlackProfileChannels(
      this.app.client,
      this.options.core.profiles.book.all(),
      logger,
    ).then(
      () => undefined,
      (error: unknown) => logger.warn({ err: error }, "could not look up the profiles' Slack channels"),
    );
  }

  /** The HTTP port actually bound (HTTP mode; PORT=0 picks a free one). */
  get port(): number | undefined {
    const receiver = (this.app as unknown as { receiver?: { server?: { address(): AddressInfo | string | null } } })
      .receiver;
    const address = receiver?.server?.address();
    return typeof address === 'object' && address ? address.port : undefined;
  }

  /** Stop and release everything (tests; the bot shuts down in two steps, below). */
  async stop(): Promise<void> {
    await this.stopTaking();
    await this.close();
  }

  /**
   * Take no new event: the HTTP server or the Socket Mode connection closes (Slack retries
   * what it could not deliver). The Web API client keeps working, for the shutdown's notes.
   */
  async stopTaking(): Promise<void> {
    if (this.taking) await this.app.stop();
    this.taking = false;
  }

  /** Nothing is left open once the receiver stopped: the Web API client holds no socket of its own. */
  async close(): Promise<void> {
    await this.stopTaking();
  }

  /** Thread presenters held in memory (bounded by MAX_LIVE_SESSIONS; tests, metrics). */
  get viewCount(): number {
    return this.presenters.size;
  }

  get client(): WebClient {
    return this.app.client;
  }

  private async identify(): Promise<void> {
    const auth = await this.app.client.auth.test();
    this.botUserId = auth.user_id ?? '';
    this.teamId = auth.team_id ?? '';
    this.teamUrl = (auth.url ?? '').replace(/\/$/, '');
  }

  /** The name and icon the bot posts with in a channel (its profile's `identity`, read now: a reload applies at once). */
  private identityAt(workspace: string, channel: string): SlackIdentity | undefined {
    return this.options.core.profiles.settingsAt({ platform: 'slack', workspace, channel }).identity;
  }

  /**
   * One listener per kind of payload. Each reads its payload through inbound-events.ts and
   * returns normally on a malformed one: a listener that throws makes Bolt answer 500, and
   * Slack would send the same bad payload again.
   */
  private listen(): void {
    const { logger } = this.options;
    // Read after auth.test (identify): the bot's ids are known by now.
    const messages: HumanMessageDeps = {
      core: this.options.core,
      logger,
      names: this.names,
      bot: { userId: this.botUserId, teamId: this.teamId, teamUrl: this.teamUrl },
      replies: this,
    };
    this.app.event('app_mention', async ({ body }) => {
      const delivery = readHumanMessage(body, 'app_mention', logger);
      if (delivery)
        await receiveHumanMessage(
          delivery.message,
          { teamId: delivery.teamId ?? this.teamId, mentioned: true },
          messages,
        );
    });
    this.app.event('message', async ({ body }) => {
      const delivery = readHumanMessage(body, 'message', logger);
      if (delivery)
        await receiveHumanMessage(
          delivery.message,
          { teamId: delivery.teamId ?? this.teamId, mentioned: false },
          messages,
        );
    });
    this.app.event('reaction_added', async ({ body }) => {
      const reaction = readInbound('reaction_added', body, logger);
      const reacted = reaction?.event.reaction === STOP_REACTION ? reaction.event.message : undefined;
      if (!reaction || !reacted) return;
      await this.onStopReaction(reaction.team_id ?? this.teamId, reacted.channel, reacted.ts, reaction.event.user);
    });
    listenForStopButton(this.app, {
      logger,
      teamId: () => this.teamId,
      claimEvent: (id) => this.options.core.manager.claimEvent(id),
      stop: (team, channel, thread, user, claimed) => this.onStopReaction(team, channel, thread, user, claimed),
    });
    // Show all takes the live presenters' card text first, the stored transcript after a restart.
    listenForButtons(this.app, {
      client: this.app.client,
      core: this.options.core,
      logger,
      grantScope: this.options.config.GRANT_SCOPE,
      presenterFor: (session) => this.presenters.presenterFor(session),
      cardText: (sessionId, toolCallId) => this.presenters.live(sessionId)?.fullTextOf(toolCallId),
      whisper: (channel, user, threadTs, text) => this.whisper(channel, user, threadTs, text),
    });
    listenForMessagesTab(this.app, {
      client: this.app.client,
      viewing: this.options.core.viewing,
      logger,
      prompts: this.options.config.SUGGESTED_PROMPTS,
      teamId: () => this.teamId,
    });
    listenForFeedback(this.app, {
      client: this.app.client,
      feedback: this.options.core.feedback,
      admits: (user, actor) => this.options.core.manager.admits(user, actor),
      logger,
      teamId: this.teamId,
    });
    listenForAgentCommand(this.app, logger);
  }

  /** `claimed`: the stop's event claim (the Stop button), settled while the thread is looked up; false drops it. */
  private async onStopReaction(
    teamId: string,
    channel: string,
    ts: string,
    userId: string,
    claimed?: Promise<boolean>,
  ): Promise<void> {
    const deps = {
      manager: this.options.core.manager,
      presenterFor: (session: SessionRecord) => this.presenters.presenterFor(session),
    };
    const sessionId = await sessionStoppedAt(deps, messageKey(channel, ts), () =>
      sessionIdOf({ platform: 'slack', workspace: teamId, channel, thread: ts }),
    );
    const stopped = await stopThread(deps, sessionId, userId, claimed);
    if (stopped?.result.status === 'refused')
      await this.whisper(channel, userId, stopped.record?.key.thread ?? ts, stopped.result.reason);
  }

  /** A private answer to one person in the thread (a refusal, a command's output). */
  async whisper(channel: string, user: string, threadTs: string, text: string): Promise<void> {
    await this.client.chat
      .postEphemeral({ channel, user, text, thread_ts: threadTs })
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not answer privately'));
  }

  /** /forget deleted the thread's conversation: its agent session is closed (nothing to do without sessions). */
  async closed(key: SessionKey): Promise<void> {
    await this.agentSessions.close(this.presenters.threadClient(key), {
      sessionId: sessionIdOf(key),
      teamId: key.workspace,
      channel: key.channel,
      threadTs: key.thread,
    });
  }

  /** Post in a thread (a command's visible answer). */
  async post(channel: string, threadTs: string, text: string): Promise<void> {
    // In the name and icon of the channel's profile, as the thread's other messages.
    await withIdentity(this.client, () => this.identityAt(this.teamId, channel))
      .chat.postMessage({ channel, thread_ts: threadTs, text })
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not post in the thread'));
  }
}

/** Logged once at start in cluster mode with Socket Mode. */
export const SOCKET_MODE_CLUSTER_WARNING =
  'Slack Socket Mode in cluster mode: every instance opens its own connection and Slack spreads events over them (at most 10 connections). HTTP mode is the multi-instance mode (README: Several instances).';
