// The Slack connector: the only code that knows Slack. Inbound, it turns Bolt events into
// session calls (a mention or a thread reply → deliver, a 🛑 reaction → interrupt, a
// button → resolve or retry, `@bot /command` → a thread command); outbound, it registers a
// thread presenter per session (shared/thread-presenter.ts) drawing on a Slack surface
// (slack-surface.ts) with the core's observer hub.
//
// Bolt is configured on purpose (bolt-app.ts): never acknowledge what was not recorded, and
// a failing start-up auth.test is an error in words, not a crash.
//
// Inbound, the door comes first: a payload that does not parse is acknowledged and dropped
// (inbound-events.ts: Slack must not resend it), and a message from someone who may not use
// the bot is refused before anything it holds is looked up (user-names.ts).
//
// Files: a message's shared files are described to the session layer (inbound-files.ts) and
// fetched only when a turn takes the message, through the file source registered here
// (file-source.ts); attach_file posts through the file sink (file-sink.ts).
import type { AddressInfo } from 'node:net';
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { clustered, type Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger, MessageSource } from '../../src/engine/index.js';
import { sessionIdOf, type SessionKey, type SessionRecord } from '../../src/sessions/thread-records.js';
import { isForTheBot, mentionsBotInText } from '../shared/inbound-checks.js';
import { sessionStoppedAt, stopThread } from '../shared/thread-stop.js';
import { listenForButtons } from './button-clicks.js';
import { presenterObserver, ThreadPresenter } from '../shared/thread-presenter.js';
import { AgentSessions, DEFAULT_LOADING_MESSAGES } from './agent-session.js';
import type { StreamingSupport } from './streaming-support.js';
import { readHumanMessage, readInbound, type HumanMessage } from './inbound-events.js';
import { incomingFilesOf } from './inbound-files.js';
import { listenForFeedback } from './feedback-clicks.js';
import { SlackFileSink } from './file-sink.js';
import { SlackFileSource } from './file-source.js';
import { mentionedUsers, readableText, threadCommand } from './message-text.js';
import { runThreadCommand, slackCommandLines } from './thread-commands.js';
import { openBoltApp } from './bolt-app.js';
import { limitClient } from './limited-client.js';
import { withIdentity, type SlackIdentity } from './post-identity.js';
import { carryViewing, listenForMessagesTab } from './messages-tab.js';
import { messageKey, SlackSurface } from './slack-surface.js';
import { listenForStopButton } from './stop-button.js';
import { UserNames } from './user-names.js';
import { checkSlackProfileChannels } from './profile-channels.js';

export const STOP_REACTION = 'octagonal_sign';

export interface SlackConnectorOptions {
  config: Config;
  core: Core;
  logger: EngineLogger;
}

/** Mentions left as ids: enough to tell a command or an empty message, before any lookup. */
const NO_NAMES: ReadonlyMap<string, string> = new Map();

export class SlackConnector {
  private readonly presenters = new Map<string, ThreadPresenter>();
  /** Each live presenter's rate-limited client: a file posted into its thread queues behind its cards. */
  private readonly threadClients = new WeakMap<ThreadPresenter, WebClient>();
  private readonly names: UserNames;
  private readonly support: StreamingSupport = { native: true };
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
  }

  /** Build the Bolt app and check the token (auth.test). Events flow only after start(). */
  static async create(options: SlackConnectorOptions): Promise<SlackConnector> {
    const { config, logger } = options;
    const app = await openBoltApp(config, logger, options.core);
    const connector = new SlackConnector(app, options);
    await connector.identify();
    connector.listen();
    options.core.observers.add('slack', presenterObserver((session) => connector.presenterFor(session)));
    options.core.files.registerSource('slack', new SlackFileSource({ token: config.SLACK_BOT_TOKEN, apiUrl: config.SLACK_API_URL, client: app.client }));
    options.core.files.registerSink('slack', new SlackFileSink((thread) => connector.threadClient(thread)));
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
    this.profileChannels = checkSlackProfileChannels(this.app.client, this.options.core.profiles.book.all(), logger).then(
      () => undefined,
      (error: unknown) => logger.warn({ err: error }, 'could not look up the profiles\' Slack channels'),
    );
  }

  /** The HTTP port actually bound (HTTP mode; PORT=0 picks a free one). */
  get port(): number | undefined {
    const receiver = (this.app as unknown as { receiver?: { server?: { address(): AddressInfo | string | null } } }).receiver;
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

  /**
   * The thread's presenter, built on demand with its Slack surface. At most MAX_LIVE_SESSIONS
   * are kept: the least recently used whose thread is not working are dropped (a presenter
   * holds only the current turn's cards; a later turn builds a fresh one, and card-index.ts
   * finds earlier cards). Each surface's client lets SLACK_CALLS_PER_THREAD calls run at once;
   * the rest queue.
   */
  private presenterFor(session: SessionRecord): ThreadPresenter {
    let presenter = this.presenters.get(session.id);
    if (presenter) {
      this.presenters.delete(session.id);
      this.presenters.set(session.id, presenter);
      return presenter;
    }
    const { config, core, logger } = this.options;
    // The profile's name and icon, where its place sets them (post-identity.ts).
    const identity = () => this.identityAt(session.key.workspace, session.key.channel);
    const client = withIdentity(limitClient(this.app.client, config.SLACK_CALLS_PER_THREAD), identity);
    const surface = new SlackSurface(
      { client, records: core.manager.records, logger, support: this.support, botUserId: this.botUserId, agentSessions: this.agentSessions, loadingMessages: config.LOADING_MESSAGES ?? DEFAULT_LOADING_MESSAGES, identity },
      session,
    );
    presenter = new ThreadPresenter({ surface, records: core.manager.records, logger, grantScope: config.GRANT_SCOPE, toolDisplay: config.TOOL_DISPLAY, feedback: core.feedback, mask: (text) => core.mask(text), prices: core.prices }, session);
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

  /** The name and icon the bot posts with in a channel (its profile's `identity`, read now: a reload applies at once). */
  private identityAt(workspace: string, channel: string): SlackIdentity | undefined {
    return this.options.core.profiles.settingsAt({ platform: 'slack', workspace, channel }).identity;
  }

  /** The client that posts into a thread: its presenter's rate-limited one when live, else the app's. */
  private threadClient(thread: SessionKey): WebClient {
    const presenter = this.presenters.get(sessionIdOf(thread));
    return (presenter && this.threadClients.get(presenter)) ?? this.app.client;
  }

  /**
   * One listener per kind of payload. Each reads its payload through inbound-events.ts and
   * returns normally on a malformed one: a listener that throws makes Bolt answer 500, and
   * Slack would send the same bad payload again.
   */
  private listen(): void {
    const { logger } = this.options;
    this.app.event('app_mention', async ({ body }) => {
      const delivery = readHumanMessage(body, 'app_mention', logger);
      if (delivery) await this.onMessage(delivery.message, delivery.teamId ?? this.teamId, true);
    });
    this.app.event('message', async ({ body }) => {
      const delivery = readHumanMessage(body, 'message', logger);
      if (delivery) await this.onMessage(delivery.message, delivery.teamId ?? this.teamId, false);
    });
    this.app.event('reaction_added', async ({ body }) => {
      const reaction = readInbound('reaction_added', body, logger);
      const reacted = reaction?.event.reaction === STOP_REACTION ? reaction.event.message : undefined;
      if (!reaction || !reacted) return;
      await this.onStopReaction(reaction.team_id ?? this.teamId, reacted.channel, reacted.ts, reaction.event.user);
    });
    listenForStopButton(this.app, { logger, teamId: () => this.teamId, claimEvent: (id) => this.options.core.manager.claimEvent(id), stop: (team, channel, thread, user, claimed) => this.onStopReaction(team, channel, thread, user, claimed) });
    // Show all takes the live presenters' card text first, the stored transcript after a restart.
    listenForButtons(this.app, {
      client: this.app.client,
      core: this.options.core,
      logger,
      grantScope: this.options.config.GRANT_SCOPE,
      presenterFor: (session) => this.presenterFor(session),
      cardText: (sessionId, toolCallId) => this.presenters.get(sessionId)?.fullTextOf(toolCallId),
      whisper: (channel, user, threadTs, text) => this.whisper(channel, user, threadTs, text),
    });
    listenForMessagesTab(this.app, { client: this.app.client, viewing: this.options.core.viewing, logger, prompts: this.options.config.SUGGESTED_PROMPTS, teamId: () => this.teamId });
    listenForFeedback(this.app, { client: this.app.client, feedback: this.options.core.feedback, admits: (user, actor) => this.options.core.manager.admits(user, actor), logger, teamId: this.teamId });
    this.app.command('/agent', async ({ ack, body, respond }) => {
      await ack();
      if (!readInbound('slash_command', body, logger)) return;
      await respond({ response_type: 'ephemeral', text: HELP_TEXT });
    });
  }

  private async onMessage(message: HumanMessage, teamId: string, mentioned: boolean): Promise<void> {
    const isDm = message.channel_type === 'im' || message.channel.startsWith('D');
    const threadTs = message.thread_ts ?? message.ts;
    const key: SessionKey = { platform: 'slack', workspace: teamId, channel: message.channel, thread: threadTs };
    // A plain channel message reaches the bot only as a reply in a thread it works in. A reply
    // that mentions the bot also arrives as app_mention, with the same ts: that event carries it.
    const threadReply = Boolean(message.thread_ts) && message.thread_ts !== message.ts;
    const place = { directMessage: isDm, mentioned, threadReply, duplicateOfMention: mentionsBotInText(message.text, this.botUserId) };
    if (!(await isForTheBot(place, () => this.options.core.manager.records.isOurs(key)))) return;
    // One id per Slack message: Slack's retries of an event claim the same id, so a message
    // starts one turn, or runs one command, once.
    const eventId = `slack:${teamId}:${message.channel}:${message.ts}`;
    // Slack Connect: someone from another organisation, who `*` does not include.
    const external = Boolean(message.user_team && this.teamId && message.user_team !== this.teamId);
    const { manager } = this.options.core;
    // Read with mentions left as ids: a thread command needs no names, and judges its caller
    // by its own rule (thread-commands.ts).
    const bare = readableText(message.text, this.botUserId, NO_NAMES);
    const command = mentioned || isDm ? threadCommand(bare) : undefined;
    if (command) {
      if (!(await manager.claimEvent(eventId))) return;
      const { core } = this.options;
      await runThreadCommand(command, {
        connector: this,
        key,
        userId: message.user,
        external,
        manager,
        logger: this.options.logger,
        feedback: core.feedback,
        ...(core.spend ? { spend: core.spend } : {}),
        ...(core.schedules ? { schedules: core.schedules } : {}),
        // Their Slack time zone (users.info `tz`, kept with their name), asked only by /schedule.
        timezone: () => this.names.timezoneOf(message.user),
        defaultTimezone: core.scheduleTimezone,
      });
      return;
    }
    // A message made only of files (a screenshot dropped in the thread) is a message too.
    const attachments = incomingFilesOf(message.files, this.options.logger);
    if (!bare && attachments.length === 0) return;
    // The door first: someone who may not use the bot is refused before anything the message
    // holds is looked up (`deliver` judges the same again).
    const door = manager.admits(message.user, { external });
    if (!door.allowed) return this.whisper(message.channel, message.user, threadTs, door.reason);
    // The author first: their name goes into the source; the mentions share the rest of the budget.
    const names = await this.names.namesOf([message.user, ...mentionedUsers(message.text).filter((id) => id !== this.botUserId)]);
    const text = readableText(message.text, this.botUserId, names);
    const source = this.sourceOf(message, teamId, threadTs, names.get(message.user) ?? message.user);
    // Their DM: what Slack last said they are viewing becomes this thread's context (messages-tab.ts).
    if (isDm) await carryViewing(this.options.core.viewing, key, message.user, this.options.logger);
    const result = await manager.deliver(key, {
      text,
      userId: message.user,
      eventId,
      external,
      source,
      // Described, not fetched: the turn that takes the message fetches them (file-source.ts),
      // so a file from someone deliver refuses is never downloaded.
      ...(attachments.length > 0 ? { attachments } : {}),
    });
    if (result.status === 'refused') await this.whisper(message.channel, message.user, threadTs, result.reason);
    else if ('filesRefused' in result && result.filesRefused) await this.whisper(message.channel, message.user, threadTs, result.filesRefused);
  }

  /** `claimed`: the stop's event claim (the Stop button), settled while the thread is looked up; false drops it. */
  private async onStopReaction(teamId: string, channel: string, ts: string, userId: string, claimed?: Promise<boolean>): Promise<void> {
    const deps = { manager: this.options.core.manager, presenterFor: (session: SessionRecord) => this.presenterFor(session) };
    const sessionId = await sessionStoppedAt(deps, messageKey(channel, ts), () => sessionIdOf({ platform: 'slack', workspace: teamId, channel, thread: ts }));
    const stopped = await stopThread(deps, sessionId, userId, claimed);
    if (stopped?.result.status === 'refused') await this.whisper(channel, userId, stopped.record?.key.thread ?? ts, stopped.result.reason);
  }

  /** A private answer to one person in the thread (a refusal, a command's output). */
  async whisper(channel: string, user: string, threadTs: string, text: string): Promise<void> {
    await this.client.chat
      .postEphemeral({ channel, user, text, thread_ts: threadTs })
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not answer privately'));
  }

  /** /forget deleted the thread's conversation: its agent session is closed (nothing to do without sessions). */
  async closed(key: SessionKey): Promise<void> {
    await this.agentSessions.close(this.threadClient(key), { sessionId: sessionIdOf(key), teamId: key.workspace, channel: key.channel, threadTs: key.thread });
  }

  /** Post in a thread (a command's visible answer). */
  async post(channel: string, threadTs: string, text: string): Promise<void> {
    // In the name and icon of the channel's profile, as the thread's other messages.
    await withIdentity(this.client, () => this.identityAt(this.teamId, channel))
      .chat.postMessage({ channel, thread_ts: threadTs, text })
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not post in the thread'));
  }

  private sourceOf(message: HumanMessage, teamId: string, threadTs: string, userName: string): MessageSource {
    const source: MessageSource = {
      platform: 'slack',
      workspace: teamId,
      channel: message.channel,
      thread: threadTs,
      userId: message.user,
      userName,
      messageId: message.ts,
    };
    if (this.teamUrl) source.permalink = `${this.teamUrl}/archives/${message.channel}/p${message.ts.replace('.', '')}`;
    return source;
  }
}

export const HELP_TEXT = [
  '*How to use me*',
  '• Mention me in a channel with a task; I work in a thread under your message. Reply in that thread to steer me.',
  '• React with :octagonal_sign: to my thread to stop me at once.',
  '• In a thread, mention me with a command:',
  ...slackCommandLines('    ◦'),
  '• Under each answer, :+1: or :-1: says whether it helped (a :-1: lets you say why).',
].join('\n');

/** Logged once at start in cluster mode with Socket Mode. */
export const SOCKET_MODE_CLUSTER_WARNING =
  'Slack Socket Mode in cluster mode: every instance opens its own connection and Slack spreads events over them (at most 10 connections). HTTP mode is the multi-instance mode (README: Several instances).';
