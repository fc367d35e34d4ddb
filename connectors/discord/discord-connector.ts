// The Discord connector: the only code that knows Discord (through discord.js v14). Inbound,
// it turns gateway events into session calls (a mention → a thread on that message and
// `deliver`; a message in such a thread or a DM → `deliver`: inbound-messages.ts; 🛑 →
// `interrupt`: stop-reaction.ts; a button → `resolve` or `controls.retry`: button-clicks.ts;
// 👍 / 👎 and a 👎's reason → core.feedback, answer-feedback.ts; a slash command → the shared
// command runner, slash-commands.ts); outbound, it registers a thread presenter per session
// (shared/thread-presenter.ts, held in live-threads.ts) drawing on a Discord surface
// (discord-surface.ts) with the core's observer hub. Everything it sends goes through
// outbound.ts (no mass mentions).
//
// Decisions a reader must hold:
// - The session is the thread (session-places.ts): a DM channel is its own thread. Whether a
//   message is the bot's to answer is the shared rule (shared/inbound-checks.ts).
// - De-duplication is `deliver`'s (inbound-messages.ts): a gateway replay after a Resume, or a
//   redelivery after a restart, starts no second turn.
// - Access: `ALLOWED_USERS=*` means the members of the bot's home servers: those DISCORD_GUILD_ID
//   lists, else any server the bot was invited to (start-up warns when the application is
//   public). A message from another server, or a DM from someone who is a member of none of
//   them, is `external`: refused unless their id is listed (home-guilds.ts). ALLOWED_USERS and
//   ADMINS name user ids.
// - Refusals are private where Discord allows it: a click's is an ephemeral follow-up; a
//   message's or a reaction's (Discord has no ephemeral answer to those) is a DM to the
//   person, or, when their DMs are closed, a reply in the thread that pings nobody.
// - Every interaction is acknowledged first (deferUpdate, within Discord's 3 seconds), work after.
// - Cluster mode (core.singleton): one instance holds the gateway, chosen by a lease; the
//   others stand by (discord-gateway.ts). Posting needs no gateway: every instance posts
//   through its own REST client, whatever it holds.
import { Client, Events, REST, MessageFlags, type Interaction } from 'discord.js';
import type { Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { answerFeedbackInteraction } from './answer-feedback.js';
import { presenterObserver } from '../shared/thread-presenter.js';
import { answerButtonClick, type ButtonClickDeps } from './button-clicks.js';
import { discordMessageKey } from './discord-surface.js';
import { DiscordOutbound } from './outbound.js';
import { countRestCalls } from './api-calls.js';
import { DiscordGateway, GATEWAY_LEASE, restOptions, type DiscordStartInfo } from './discord-gateway.js';
import { HomeGuilds } from './home-guilds.js';
import { runSlashCommand } from './slash-commands.js';
import { takeMessage, type InboundMessageDeps } from './inbound-messages.js';
import { LiveThreads } from './live-threads.js';
import { whisperToPerson } from './private-answers.js';
import { DM_WORKSPACE, sessionKeyOfCommand } from './session-places.js';
import { takeStopReaction, type StopReactionDeps } from './stop-reaction.js';

export { threadName } from './message-content.js';
import { DiscordFileSink, DiscordFileSource } from './file-transfer.js';
import { premiumTier, UploadLimits } from './upload-limits.js';
import { checkDiscordProfileChannels } from './profile-channels.js';

export {
  INTENTS,
  INVITE_PERMISSIONS,
  PARTIALS,
  type DiscordGatewayInfo,
  type DiscordStandbyInfo,
  type DiscordStartInfo,
} from './discord-gateway.js';

export interface DiscordConnectorOptions {
  config: Config;
  core: Core;
  logger: EngineLogger;
  /** Between two edits of a streamed answer (default 1 s; tests shorten it). */
  answerIntervalMs?: number;
}

export class DiscordConnector {
  private readonly outbound: DiscordOutbound;
  /** The thread presenters held in memory (live-threads.ts). */
  private readonly threads: LiveThreads;
  /** What the bot posts with: its own REST client, so posting outlives any gateway connection. */
  private readonly rest: REST;
  /** The start's look-up of the profiles' channels (profile-channels.ts); tests await it. */
  profileChannels: Promise<void> = Promise.resolve();
  private botUserId = '';
  /** False once the shutdown began: inbound events are ignored. */
  private taking = true;
  private readonly gateway: DiscordGateway;
  private readonly home: HomeGuilds;
  /** How large a file the bot may post where (the sink's limit). */
  private readonly uploadLimits: UploadLimits;

  private constructor(private readonly options: DiscordConnectorOptions) {
    this.rest = new REST(restOptions(options.config)).setToken(botToken(options.config.DISCORD_TOKEN));
    countRestCalls(this.rest, options.core.ops);
    this.home = new HomeGuilds({ config: options.config, rest: this.rest, logger: options.logger });
    this.outbound = new DiscordOutbound(this.rest);
    this.threads = new LiveThreads({
      config: options.config,
      core: options.core,
      logger: options.logger,
      outbound: this.outbound,
      ...(options.answerIntervalMs !== undefined ? { answerIntervalMs: options.answerIntervalMs } : {}),
    });
    this.uploadLimits = new UploadLimits({
      dmWorkspace: DM_WORKSPACE,
      tierOf: (guildId) =>
        premiumTier(this.rest, this.holdsGateway ? this.client.guilds.cache.get(guildId) : undefined, guildId),
    });
    this.gateway = new DiscordGateway({
      config: options.config,
      logger: options.logger,
      rest: this.rest,
      ...(options.core.singleton ? { lease: options.core.singleton(GATEWAY_LEASE) } : {}),
      listen: (client) => this.listen(client),
      taking: () => this.taking,
      identified: (botUserId) => (this.botUserId = botUserId),
    });
  }

  /** Build the client and register the observer. Events flow only after start(). */
  static create(options: DiscordConnectorOptions): DiscordConnector {
    const connector = new DiscordConnector(options);
    options.core.observers.add(
      'discord',
      presenterObserver((session) => connector.threads.presenterFor(session)),
    );
    options.core.files.registerSource(
      'discord',
      new DiscordFileSource({
        apiUrl: options.config.DISCORD_API_URL,
        refresh: (url) => connector.outbound.refreshAttachmentUrl(url),
      }),
    );
    options.core.files.registerSink(
      'discord',
      new DiscordFileSink({ outbound: connector.outbound, limits: connector.uploadLimits, dmWorkspace: DM_WORKSPACE }),
    );
    return connector;
  }

  /** The gateway client now (another one after a handover in cluster mode). */
  get client(): Client {
    return this.gateway.client;
  }

  /** Cluster mode: whether this instance holds the gateway now; outside it, always. */
  get holdsGateway(): boolean {
    return this.gateway.holdsGateway;
  }

  /**
   * Log in and wait until the gateway is ready (guilds known). In cluster mode only the
   * instance that takes the gateway's lease logs in; the others resolve at once, standing by.
   */
  async start(): Promise<DiscordStartInfo> {
    // Beside the login, not before it: the lookup never fails a start, it only warns.
    const checked = this.home.checkHome();
    let info: DiscordStartInfo;
    try {
      info = await this.gateway.start();
    } finally {
      await checked;
    }
    if (info.gateway !== 'standby') this.home.reportGuilds(this.client);
    // Started: the channels the profiles name are looked up, in the background (warnings only).
    const { logger } = this.options;
    this.profileChannels = checkDiscordProfileChannels(this.rest, this.options.core.profiles.book.all(), logger).then(
      () => undefined,
      (error: unknown) => logger.warn({ err: error }, "could not look up the profiles' Discord channels"),
    );
    return info;
  }

  /** Whether a person is from outside the bot's home servers (home-guilds.ts). */
  private isOutsider(userId: string, guildId: string | null): Promise<boolean> {
    return this.home.isOutsider(this.client, userId, guildId);
  }

  /** Stop and release everything (tests; the bot shuts down in two steps, below). */
  async stop(): Promise<void> {
    await this.stopTaking();
    await this.close();
  }

  /**
   * Take no new event: the gateway's events are ignored from now on (a click is told the bot
   * is restarting). REST keeps working, for the shutdown's notes. In cluster mode the gateway
   * is handed over now: another instance takes the events while this one shuts down.
   */
  async stopTaking(): Promise<void> {
    this.taking = false;
    if (this.gateway.leased) await this.gateway.leave();
  }

  async close(): Promise<void> {
    this.taking = false;
    this.threads.disposeAll();
    if (this.gateway.leased) await this.gateway.leave();
    await this.gateway.destroy();
    // Nothing posts after close, as after a crash (discord.js's destroy() clears its REST token too).
    this.rest.setToken(null as unknown as string);
  }

  /** Thread presenters held in memory (bounded by MAX_LIVE_SESSIONS). */
  get viewCount(): number {
    return this.threads.size;
  }

  /** One listener per kind of event; each logs its own failure (a listener must not throw into discord.js). */
  private listen(client: Client): void {
    const { logger } = this.options;
    countRestCalls(client.rest, this.options.core.ops);
    const guard = (what: string, work: Promise<void>): void => {
      work.catch((error: unknown) => logger.error({ err: error }, `Discord: could not handle ${what}`));
    };
    client.on(Events.MessageCreate, (message) => guard('a message', takeMessage(this.messageDeps(), message)));
    client.on(Events.MessageReactionAdd, (reaction, user) =>
      guard('a reaction', takeStopReaction(this.stopReactionDeps(), reaction, user)),
    );
    client.on(Events.InteractionCreate, (interaction) => guard('an interaction', this.onInteraction(interaction)));
    client.on(Events.GuildCreate, (guild) => this.home.joined(guild));
    client.on(Events.Error, (error) => logger.error({ err: error }, 'Discord client error'));
  }

  // ---- inbound: what each event's module is given --------------------------------------------

  private stopReactionDeps(): StopReactionDeps {
    return {
      manager: this.options.core.manager,
      presenterFor: (session) => this.threads.presenterFor(session),
      botUserId: () => this.botUserId,
      channels: this.channels,
      whisper: (...to) => this.whisper(...to),
    };
  }

  private messageDeps(): InboundMessageDeps {
    return {
      manager: this.options.core.manager,
      outbound: this.outbound,
      botUserId: () => this.botUserId,
      isOutsider: (userId, guildId) => this.isOutsider(userId, guildId),
      whisper: (...to) => this.whisper(...to),
    };
  }

  // ---- inbound: interactions -----------------------------------------------------------------

  private async onInteraction(interaction: Interaction): Promise<void> {
    // Discord says with each interaction how large a file the app may post there: the sink's best limit.
    this.uploadLimits.remember(interaction.guildId ?? interaction.channelId ?? '', interaction.attachmentSizeLimit);
    if (!this.taking) {
      // Shutting down: a click now could not be recorded (the store is fenced). Discord never
      // redelivers an interaction, so the person is told to click again once the bot is back;
      // the card's buttons keep working then. (A message is refused by the session layer with
      // the same advice.)
      if (interaction.isRepliable())
        await interaction.reply({
          content: 'The bot is restarting; try again in a moment.',
          flags: MessageFlags.Ephemeral,
        });
      return;
    }
    if (interaction.isChatInputCommand()) {
      const { manager } = this.options.core;
      return runSlashCommand(interaction, {
        manager,
        outbound: this.outbound,
        logger: this.options.logger,
        keyOf: (command) => sessionKeyOfCommand(command, this.channels),
        isOutsider: (userId, guildId) => this.isOutsider(userId, guildId),
        feedback: this.options.core.feedback,
        ...(this.options.core.spend ? { spend: this.options.core.spend } : {}),
        ...(this.options.core.schedules ? { schedules: this.options.core.schedules } : {}),
        scheduleTimezone: this.options.core.scheduleTimezone,
      });
    }
    if (
      await answerFeedbackInteraction(interaction, {
        core: this.options.core,
        logger: this.options.logger,
        isOutsider: (u, g) => this.isOutsider(u, g),
        messageKey: discordMessageKey,
      })
    )
      return;
    if (interaction.isButton()) await answerButtonClick(this.buttonClickDeps(), interaction);
  }

  private buttonClickDeps(): ButtonClickDeps {
    const { core, logger, config } = this.options;
    return {
      manager: core.manager,
      outbound: this.outbound,
      logger,
      grantScope: config.GRANT_SCOPE,
      presenterFor: (session) => this.threads.presenterFor(session),
      cardText: (sessionId, toolCallId) => this.threads.cardText(sessionId, toolCallId),
    };
  }

  /** The gateway's cached channels (a reaction or a command names only a channel id). */
  private readonly channels = (channelId: string) => this.client.channels.cache.get(channelId);

  /** An answer to a message or a reaction for one person (private-answers.ts). */
  private whisper(userId: string, channelId: string, replyTo: string, text: string): Promise<void> {
    return whisperToPerson(this.outbound, this.options.logger, { userId, channelId, replyTo }, text);
  }
}

/** The token as REST wants it: discord.js's login() strips a "Bot " prefix too. */
function botToken(token: string | undefined): string {
  return (token ?? '').replace(/^(Bot|Bearer)\s*/i, '');
}
