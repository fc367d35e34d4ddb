// Builders for what Slack sends INTO a bot: Events API bodies (`event_callback` around an
// `app_mention`, a thread or DM `message`, a bot's own post, a `reaction_added`),
// `block_actions` interactivity payloads and slash-command form fields, in the exact wire
// shape Slack's Events API and interactivity documentation give. One fake workspace owns every id here (`SLACK_IDS`),
// and one process-wide clock (`nextTs`) hands out message timestamps, so the ts of a human
// message built here and the ts FakeSlack gives the bot's reply sort in the order they happened.
import { randomUUID } from 'node:crypto';
import type { SlackFileObject } from './slack-files.js';

/** The fake workspace. FakeSlack answers `auth.test` with these, so bolt's `ignoreSelf` knows the bot. */
export const SLACK_IDS = {
  teamId: 'T0FAKE0001',
  teamDomain: 'fake-team',
  teamName: 'Fake Team',
  appId: 'A0APP00001',
  /** The bot's user id (`auth.test` `user_id`): what `<@…>` mentions and `ignoreSelf` compare with. */
  botUserId: 'U0BOT00001',
  /** The bot's bot id (`auth.test` `bot_id`). */
  botId: 'B0BOT00001',
  botName: 'fakebot',
  /** A default human, known to FakeSlack's `users.info`. */
  humanUserId: 'U0HUMAN001',
  /** Another app's bot, to check that the bot ignores other bots too. */
  otherBotUserId: 'U0OTHERBT1',
  otherBotId: 'B0OTHERBT1',
  /** A public channel and a DM channel. */
  channelId: 'C0GENERAL1',
  channelName: 'general',
  dmChannelId: 'D0DIRECT01',
  /** The `token` field Slack still puts in bodies (deprecated verification token; bolt ignores it). */
  verificationToken: 'fakeVerificationToken0001',
} as const;

// ts strings look like Slack's: seconds, a dot, six digits. The seconds follow the wall
// clock, as Slack's do (a bot may ask for replies since a moment: `oldest`); a counter on
// the micro part keeps them unique and increasing within the process, whoever asks
// (builders or FakeSlack).
let tsSeconds = 0;
let tsMicro = 0;

/** The next message timestamp of the fake workspace: "<now>.000001", "<now>.000002", … */
export function nextTs(): string {
  const now = Math.floor(Date.now() / 1000);
  if (now > tsSeconds) {
    tsSeconds = now;
    tsMicro = 0;
  }
  tsMicro += 1;
  if (tsMicro >= 1_000_000) {
    tsSeconds += 1;
    tsMicro = 1;
  }
  return `${tsSeconds}.${String(tsMicro).padStart(6, '0')}`;
}

let eventCounter = 0;
function nextEventId(): string {
  eventCounter += 1;
  return `Ev0FAKE${String(eventCounter).padStart(6, '0')}`;
}

function triggerId(): string {
  return `1337.${Date.now()}.${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

type ChannelType = 'channel' | 'group' | 'im' | 'mpim';

// ---------------------------------------------------------------------------
// Events API
// ---------------------------------------------------------------------------

export interface AppMentionEventPayload {
  type: 'app_mention';
  user: string;
  text: string;
  ts: string;
  channel: string;
  event_ts: string;
  team: string;
  client_msg_id: string;
  thread_ts?: string;
  /** Slack Connect: the author's own team, when it is not the channel's. */
  user_team?: string;
  /** Files shared with the mention (`FakeSlack.files.add`); `upload` tells whether they were uploaded with it. */
  files?: SlackFileObject[];
  upload?: boolean;
}

/** A human's message (`subtype` absent, or `file_share` when it shares files), in a channel, a thread or a DM. */
export interface UserMessageEventPayload {
  type: 'message';
  subtype?: 'file_share';
  user: string;
  text: string;
  ts: string;
  channel: string;
  channel_type: ChannelType;
  event_ts: string;
  team: string;
  client_msg_id: string;
  thread_ts?: string;
  parent_user_id?: string;
  /** Slack Connect: the author's own team, when it is not the channel's. */
  user_team?: string;
  files?: SlackFileObject[];
  upload?: boolean;
  display_as_bot?: boolean;
}

/**
 * A message posted by an app. Modern apps (chat.postMessage with a bot token) arrive with no
 * `subtype` but with `user` (the bot's user id), `bot_id` and `app_id`; legacy integrations
 * arrive as `subtype: 'bot_message'` with `bot_id` and no `user`.
 */
export interface BotMessageEventPayload {
  type: 'message';
  subtype?: 'bot_message';
  user?: string;
  bot_id: string;
  app_id?: string;
  username?: string;
  bot_profile?: { id: string; app_id: string; name: string; team_id: string; deleted: boolean };
  text: string;
  ts: string;
  channel: string;
  channel_type: ChannelType;
  event_ts: string;
  team?: string;
  thread_ts?: string;
  parent_user_id?: string;
}

export interface ReactionEventPayload<
  T extends 'reaction_added' | 'reaction_removed' = 'reaction_added' | 'reaction_removed',
> {
  type: T;
  user: string;
  reaction: string;
  item_user: string;
  item: { type: 'message'; channel: string; ts: string };
  event_ts: string;
}

type SlackEventPayload =
  AppMentionEventPayload | UserMessageEventPayload | BotMessageEventPayload | ReactionEventPayload;

/** The Events API body (`type: 'event_callback'`) that wraps one event, as POSTed to the bot. */
export interface EventCallbackBody<E extends { type: string } = SlackEventPayload> {
  token: string;
  team_id: string;
  context_team_id: string;
  api_app_id: string;
  event: E;
  type: 'event_callback';
  event_id: string;
  event_time: number;
  authorizations: {
    enterprise_id: string | null;
    team_id: string;
    user_id: string;
    is_bot: boolean;
    is_enterprise_install: boolean;
  }[];
  is_ext_shared_channel: boolean;
  event_context: string;
}

export interface UrlVerificationBody {
  type: 'url_verification';
  token: string;
  challenge: string;
}

export interface EventCallbackOptions {
  /** Default: a fresh `Ev0FAKE…`. Reuse one to play a Slack retry of the same event. */
  eventId?: string;
  teamId?: string;
  /** Unix seconds; default now. */
  eventTime?: number;
}

/** Wrap an event the way the Events API delivers it (same body over HTTP and in a Socket Mode envelope). */
export function eventCallback<E extends { type: string }>(
  event: E,
  options: EventCallbackOptions = {},
): EventCallbackBody<E> {
  const teamId = options.teamId ?? SLACK_IDS.teamId;
  const eventId = options.eventId ?? nextEventId();
  return {
    token: SLACK_IDS.verificationToken,
    team_id: teamId,
    context_team_id: teamId,
    api_app_id: SLACK_IDS.appId,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: options.eventTime ?? Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: null,
        team_id: teamId,
        user_id: SLACK_IDS.botUserId,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    is_ext_shared_channel: false,
    event_context: `4-fake-${eventId}`,
  };
}

export function urlVerification(challenge: string): UrlVerificationBody {
  return { type: 'url_verification', token: SLACK_IDS.verificationToken, challenge };
}

export interface MessageInput {
  text: string;
  /** Default `SLACK_IDS.channelId` (or `dmChannelId` for `dmMessage`). */
  channel?: string;
  /** Default `SLACK_IDS.humanUserId`. */
  user?: string;
  /** Default `nextTs()`. */
  ts?: string;
  threadTs?: string;
  teamId?: string;
  /** Slack Connect: the author's own team (another organisation's T… id). */
  userTeam?: string;
  /**
   * Files shared with the message (objects from `FakeSlack.files.add`). A message that carries
   * files is a `file_share` (its text may be empty); a mention carries them without a subtype.
   */
  files?: SlackFileObject[];
}

const MENTION = `<@${SLACK_IDS.botUserId}>`;

/**
 * An `app_mention`. Slack puts the mention in the text as `<@U0BOT00001>`; when `text` does not
 * already contain it, it is prefixed (`"hello"` → `"<@U0BOT00001> hello"`).
 */
export function appMention(input: MessageInput): AppMentionEventPayload {
  const ts = input.ts ?? nextTs();
  return {
    type: 'app_mention',
    user: input.user ?? SLACK_IDS.humanUserId,
    text: input.text.includes(MENTION) ? input.text : `${MENTION} ${input.text}`,
    ts,
    channel: input.channel ?? SLACK_IDS.channelId,
    event_ts: ts,
    team: input.teamId ?? SLACK_IDS.teamId,
    client_msg_id: randomUUID(),
    ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
    ...(input.userTeam === undefined ? {} : { user_team: input.userTeam }),
    ...(input.files === undefined ? {} : { files: input.files, upload: true }),
  };
}

function userMessage(
  input: MessageInput & { parentUserId?: string },
  channelType: ChannelType,
  defaultChannel: string,
): UserMessageEventPayload {
  const ts = input.ts ?? nextTs();
  return {
    type: 'message',
    user: input.user ?? SLACK_IDS.humanUserId,
    text: input.text,
    ts,
    channel: input.channel ?? defaultChannel,
    channel_type: channelType,
    event_ts: ts,
    team: input.teamId ?? SLACK_IDS.teamId,
    client_msg_id: randomUUID(),
    ...(input.threadTs === undefined
      ? {}
      : { thread_ts: input.threadTs, parent_user_id: input.parentUserId ?? input.user ?? SLACK_IDS.humanUserId }),
    ...(input.userTeam === undefined ? {} : { user_team: input.userTeam }),
    ...(input.files === undefined
      ? {}
      : { subtype: 'file_share' as const, files: input.files, upload: true, display_as_bot: false }),
  };
}

/**
 * A top-level human message in a channel (`message.channels`). Real Slack sends this AND an
 * `app_mention` for the same mention, so a faithful test sends both and the bot deduplicates.
 */
export function channelMessage(input: MessageInput): UserMessageEventPayload {
  return userMessage({ ...input, threadTs: undefined }, 'channel', SLACK_IDS.channelId);
}

/** A human reply in a channel thread. `parentUserId`: who wrote the thread's root (default the bot). */
export function threadMessage(
  input: MessageInput & { threadTs: string; parentUserId?: string },
): UserMessageEventPayload {
  return userMessage(
    { ...input, parentUserId: input.parentUserId ?? SLACK_IDS.botUserId },
    'channel',
    SLACK_IDS.channelId,
  );
}

/** A direct message to the bot (`channel_type: 'im'`, channel `D…`), top-level or in a DM thread. */
export function dmMessage(input: MessageInput & { parentUserId?: string }): UserMessageEventPayload {
  return userMessage(input, 'im', SLACK_IDS.dmChannelId);
}

export interface BotMessageInput {
  text: string;
  channel?: string;
  channelType?: ChannelType;
  ts?: string;
  threadTs?: string;
  /** Default: another app's bot (`SLACK_IDS.otherBotId`). Use `'self'` for the bot's own post echoed back. */
  bot?: 'other' | 'self';
  /** A legacy integration (`subtype: 'bot_message'`, no `user`) instead of a modern app post. */
  legacy?: boolean;
}

/**
 * A message written by a bot, to check the bot ignores bots. `bot: 'self'` is the bot's own
 * post as Slack echoes it back: bolt's `ignoreSelf` drops it (its `user` is the bot user id).
 * `bot: 'other'` is NOT dropped by bolt: the connector must ignore it itself (`bot_id` set).
 */
export function botMessage(input: BotMessageInput): BotMessageEventPayload {
  const ts = input.ts ?? nextTs();
  const self = input.bot === 'self';
  const botId = self ? SLACK_IDS.botId : SLACK_IDS.otherBotId;
  const userId = self ? SLACK_IDS.botUserId : SLACK_IDS.otherBotUserId;
  const appId = self ? SLACK_IDS.appId : 'A0OTHERAP1';
  const thread =
    input.threadTs === undefined ? {} : { thread_ts: input.threadTs, parent_user_id: SLACK_IDS.humanUserId };
  const common = {
    type: 'message' as const,
    text: input.text,
    ts,
    channel: input.channel ?? SLACK_IDS.channelId,
    channel_type: input.channelType ?? 'channel',
    event_ts: ts,
    bot_id: botId,
    ...thread,
  };
  if (input.legacy) return { ...common, subtype: 'bot_message', username: self ? SLACK_IDS.botName : 'otherbot' };
  return {
    ...common,
    user: userId,
    app_id: appId,
    team: SLACK_IDS.teamId,
    bot_profile: {
      id: botId,
      app_id: appId,
      name: self ? SLACK_IDS.botName : 'otherbot',
      team_id: SLACK_IDS.teamId,
      deleted: false,
    },
  };
}

export interface ReactionInput {
  reaction: string;
  /** The reacted message's ts. */
  ts: string;
  channel?: string;
  /** Who reacted; default `SLACK_IDS.humanUserId`. */
  user?: string;
  /** Who wrote the reacted message; default the bot. */
  itemUser?: string;
}

/** A `reaction_added` on a message (the reaction name has no colons: `'octagonal_sign'`). */
export function reactionAdded(input: ReactionInput): ReactionEventPayload<'reaction_added'> {
  return reaction('reaction_added', input);
}

function reaction<T extends 'reaction_added' | 'reaction_removed'>(
  type: T,
  input: ReactionInput,
): ReactionEventPayload<T> {
  return {
    type,
    user: input.user ?? SLACK_IDS.humanUserId,
    reaction: input.reaction,
    item_user: input.itemUser ?? SLACK_IDS.botUserId,
    item: { type: 'message', channel: input.channel ?? SLACK_IDS.channelId, ts: input.ts },
    event_ts: nextTs(),
  };
}

/** Slack's Stop button on an agent session (@slack/types `AgentSessionStoppedEvent`). */
export interface AgentSessionStoppedPayload {
  type: 'agent_session_stopped';
  channel: string;
  user: string;
  thread_ts: string;
  /** The bot's messages that were streaming when the button was clicked. */
  streaming_message_ts: string[];
  event_ts: string;
}

export interface AgentSessionStoppedInput {
  /** The session's thread root. */
  threadTs: string;
  channel?: string;
  /** Who clicked Stop; default `SLACK_IDS.humanUserId`. */
  user?: string;
  streamingMessageTs?: string[];
  /** Default `nextTs()`; the same one on every delivery of one click. */
  eventTs?: string;
}

export function agentSessionStopped(input: AgentSessionStoppedInput): AgentSessionStoppedPayload {
  return {
    type: 'agent_session_stopped',
    channel: input.channel ?? SLACK_IDS.channelId,
    user: input.user ?? SLACK_IDS.humanUserId,
    thread_ts: input.threadTs,
    streaming_message_ts: input.streamingMessageTs ?? [],
    event_ts: input.eventTs ?? nextTs(),
  };
}

// ---------------------------------------------------------------------------
// Interactivity
// ---------------------------------------------------------------------------

interface ButtonActionPayload {
  /** A plain button, or the 👍 / 👎 of a `feedback_buttons` element (its value is the clicked side's). */
  type: 'button' | 'feedback_buttons';
  action_id: string;
  block_id: string;
  value: string;
  text: { type: 'plain_text'; text: string; emoji: boolean };
  action_ts: string;
}

export interface BlockActionsPayload {
  type: 'block_actions';
  user: { id: string; username: string; name: string; team_id: string };
  api_app_id: string;
  token: string;
  container: { type: 'message'; message_ts: string; channel_id: string; is_ephemeral: boolean; thread_ts?: string };
  trigger_id: string;
  team: { id: string; domain: string };
  enterprise: null;
  is_enterprise_install: boolean;
  channel: { id: string; name: string };
  message: {
    type: 'message';
    user: string;
    bot_id: string;
    app_id: string;
    team: string;
    ts: string;
    text: string;
    thread_ts?: string;
    blocks?: unknown[];
  };
  state: { values: Record<string, Record<string, unknown>> };
  response_url: string;
  actions: ButtonActionPayload[];
}

export interface BlockActionsInput {
  actionId: string;
  value: string;
  /** The ts of the bot message that carries the button. */
  messageTs: string;
  /** Where bolt's `respond()` posts: use `fakeSlack.responseUrl(id)`. */
  responseUrl: string;
  channel?: string;
  /** Who clicked; default `SLACK_IDS.humanUserId`. */
  user?: string;
  blockId?: string;
  /** When the button's message is a thread reply. */
  threadTs?: string;
  /** The text and blocks of the clicked message, as Slack echoes them back. */
  messageText?: string;
  messageBlocks?: unknown[];
  buttonText?: string;
  /** Default `'button'`; `'feedback_buttons'` for a click on a thumb of a feedback_buttons element. */
  actionType?: ButtonActionPayload['type'];
}

/** A click on a button in a bot message (`block_actions`). Send it with `sendInteraction`. */
export function blockActions(input: BlockActionsInput): BlockActionsPayload {
  const channel = input.channel ?? SLACK_IDS.channelId;
  const user = input.user ?? SLACK_IDS.humanUserId;
  const thread = input.threadTs === undefined ? {} : { thread_ts: input.threadTs };
  return {
    type: 'block_actions',
    user: { id: user, username: 'ada', name: 'ada', team_id: SLACK_IDS.teamId },
    api_app_id: SLACK_IDS.appId,
    token: SLACK_IDS.verificationToken,
    container: { type: 'message', message_ts: input.messageTs, channel_id: channel, is_ephemeral: false, ...thread },
    trigger_id: triggerId(),
    team: { id: SLACK_IDS.teamId, domain: SLACK_IDS.teamDomain },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: channel, name: channel === SLACK_IDS.channelId ? SLACK_IDS.channelName : 'privategroup' },
    message: {
      type: 'message',
      user: SLACK_IDS.botUserId,
      bot_id: SLACK_IDS.botId,
      app_id: SLACK_IDS.appId,
      team: SLACK_IDS.teamId,
      ts: input.messageTs,
      text: input.messageText ?? '',
      ...thread,
      ...(input.messageBlocks === undefined ? {} : { blocks: input.messageBlocks }),
    },
    state: { values: {} },
    response_url: input.responseUrl,
    actions: [
      {
        type: input.actionType ?? 'button',
        action_id: input.actionId,
        block_id: input.blockId ?? 'actions',
        value: input.value,
        text: { type: 'plain_text', text: input.buttonText ?? input.value, emoji: true },
        action_ts: `${Math.floor(Date.now() / 1000)}.${String(Date.now() % 1000).padStart(3, '0')}123`,
      },
    ],
  };
}

/** The form fields of a slash command (all strings: Slack sends them form-encoded, not as JSON). */
export interface SlashCommandFields {
  token: string;
  team_id: string;
  team_domain: string;
  channel_id: string;
  channel_name: string;
  user_id: string;
  user_name: string;
  command: string;
  text: string;
  api_app_id: string;
  is_enterprise_install: string;
  response_url: string;
  trigger_id: string;
  [field: string]: string;
}

export interface SlashCommandInput {
  /** With the slash: `'/agent'`. */
  command: string;
  text: string;
  responseUrl: string;
  channel?: string;
  user?: string;
}

export function slashCommand(input: SlashCommandInput): SlashCommandFields {
  const channel = input.channel ?? SLACK_IDS.channelId;
  return {
    token: SLACK_IDS.verificationToken,
    team_id: SLACK_IDS.teamId,
    team_domain: SLACK_IDS.teamDomain,
    channel_id: channel,
    channel_name:
      channel === SLACK_IDS.channelId
        ? SLACK_IDS.channelName
        : channel.startsWith('D')
          ? 'directmessage'
          : 'privategroup',
    user_id: input.user ?? SLACK_IDS.humanUserId,
    user_name: 'ada',
    command: input.command,
    text: input.text,
    api_app_id: SLACK_IDS.appId,
    is_enterprise_install: 'false',
    response_url: input.responseUrl,
    trigger_id: triggerId(),
  };
}

export interface ModalBlockActionsInput {
  actionId: string;
  value: string;
  /** The modal as `views.open` answered it (its `id`, `callback_id`, `private_metadata`, blocks). */
  view: Record<string, unknown>;
  user?: string;
  blockId?: string;
}

/**
 * A click on a button inside a modal the app opened (`block_actions` whose container is the
 * view): Slack sends the view as it is (callback id and private metadata the app set), and no
 * channel, message or response_url.
 */
export function modalBlockActions(input: ModalBlockActionsInput): { type: string } & Record<string, unknown> {
  const user = input.user ?? SLACK_IDS.humanUserId;
  return {
    type: 'block_actions',
    user: { id: user, username: 'ada', name: 'ada', team_id: SLACK_IDS.teamId },
    api_app_id: SLACK_IDS.appId,
    token: SLACK_IDS.verificationToken,
    container: { type: 'view', view_id: input.view.id },
    trigger_id: triggerId(),
    team: { id: SLACK_IDS.teamId, domain: SLACK_IDS.teamDomain },
    enterprise: null,
    is_enterprise_install: false,
    view: { ...input.view, state: { values: {} } },
    actions: [
      {
        type: 'button',
        action_id: input.actionId,
        block_id: input.blockId ?? 'actions',
        value: input.value,
        text: { type: 'plain_text', text: input.value, emoji: true },
        action_ts: `${Math.floor(Date.now() / 1000)}.${String(Date.now() % 1000).padStart(3, '0')}123`,
      },
    ],
  };
}

export interface ViewSubmissionInput {
  /** The modal as `views.open` answered it (`FakeSlack.views()`: its `id` and the view the app sent). */
  view: Record<string, unknown>;
  viewId: string;
  /** What the person typed: `{ [block_id]: { [action_id]: value } }` (plain-text inputs; null for left empty). */
  values: Record<string, Record<string, string | null>>;
  user?: string;
}

/**
 * A person submits a modal the app opened (`view_submission`): Slack sends the view as the app
 * set it (callback id, private metadata) with `state.values` holding each input's value, and
 * no channel, message or response_url (none was asked for with `response_url_enabled`).
 */
export function viewSubmission(input: ViewSubmissionInput): { type: 'view_submission' } & Record<string, unknown> {
  const user = input.user ?? SLACK_IDS.humanUserId;
  const values = Object.fromEntries(
    Object.entries(input.values).map(([block, actions]) => [
      block,
      Object.fromEntries(
        Object.entries(actions).map(([action, value]) => [action, { type: 'plain_text_input', value }]),
      ),
    ]),
  );
  return {
    type: 'view_submission',
    team: { id: SLACK_IDS.teamId, domain: SLACK_IDS.teamDomain },
    user: { id: user, username: 'ada', name: 'ada', team_id: SLACK_IDS.teamId },
    api_app_id: SLACK_IDS.appId,
    token: SLACK_IDS.verificationToken,
    trigger_id: triggerId(),
    view: {
      ...input.view,
      id: input.viewId,
      team_id: SLACK_IDS.teamId,
      app_id: SLACK_IDS.appId,
      bot_id: SLACK_IDS.botId,
      hash: `${Date.now()}.hash`,
      private_metadata: input.view.private_metadata ?? '',
      callback_id: input.view.callback_id ?? '',
      state: { values },
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}
