// A person's message in Slack (a mention, a DM, a reply in a thread the bot works in), once
// inbound-events.ts has read it: a thread command (`@bot /model …`) runs; anything else is
// delivered to the thread's session, with the files it shares described, not fetched.
//
// The door comes first: someone who may not use the bot is refused before anything the
// message holds is looked up (their name, the people it mentions, its files).
import type { Core } from '../../src/core.js';
import type { EngineLogger, MessageSource } from '../../src/engine/index.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import { isForTheBot, mentionsBotInText } from '../shared/inbound-checks.js';
import type { HumanMessage } from './inbound-events.js';
import { incomingFilesOf } from './inbound-files.js';
import { mentionedUsers, readableText, threadCommand } from './message-text.js';
import { carryViewing } from './messages-tab.js';
import { runThreadCommand, type CommandContext } from './thread-commands.js';
import type { UserNames } from './user-names.js';

export interface HumanMessageDeps {
  core: Core;
  logger: EngineLogger;
  names: UserNames;
  /** The bot as auth.test named it: its user id, its own team, the workspace's URL (for permalinks). */
  bot: { userId: string; teamId: string; teamUrl: string };
  /** Where answers go: privately to one person, or in the thread (the connector). */
  replies: CommandContext['connector'];
}

/** Where the message came: its team, and whether it was an app_mention event. */
export interface MessagePlace {
  teamId: string;
  mentioned: boolean;
}

/** Mentions left as ids: enough to tell a command or an empty message, before any lookup. */
const NO_NAMES: ReadonlyMap<string, string> = new Map();

export async function receiveHumanMessage(
  message: HumanMessage,
  { teamId, mentioned }: MessagePlace,
  deps: HumanMessageDeps,
): Promise<void> {
  const { core, logger, names, bot, replies } = deps;
  const isDm = message.channel_type === 'im' || message.channel.startsWith('D');
  const threadTs = message.thread_ts ?? message.ts;
  const key: SessionKey = { platform: 'slack', workspace: teamId, channel: message.channel, thread: threadTs };
  // A plain channel message reaches the bot only as a reply in a thread it works in. A reply
  // that mentions the bot also arrives as app_mention, with the same ts: that event carries it.
  const threadReply = Boolean(message.thread_ts) && message.thread_ts !== message.ts;
  const place = {
    directMessage: isDm,
    mentioned,
    threadReply,
    duplicateOfMention: mentionsBotInText(message.text, bot.userId),
  };
  if (!(await isForTheBot(place, () => core.manager.records.isOurs(key)))) return;
  // One id per Slack message: Slack's retries of an event claim the same id, so a message
  // starts one turn, or runs one command, once.
  const eventId = `slack:${teamId}:${message.channel}:${message.ts}`;
  // Slack Connect: someone from another organisation, who `*` does not include.
  const external = Boolean(message.user_team && bot.teamId && message.user_team !== bot.teamId);
  const { manager } = core;
  // Read with mentions left as ids: a thread command needs no names, and judges its caller
  // by its own rule (thread-commands.ts).
  const bare = readableText(message.text, bot.userId, NO_NAMES);
  const command = mentioned || isDm ? threadCommand(bare) : undefined;
  if (command) {
    if (!(await manager.claimEvent(eventId))) return;
    await runThreadCommand(command, {
      connector: replies,
      key,
      userId: message.user,
      external,
      manager,
      logger,
      feedback: core.feedback,
      ...(core.spend ? { spend: core.spend } : {}),
      ...(core.schedules ? { schedules: core.schedules } : {}),
      // Their Slack time zone (users.info `tz`, kept with their name), asked only by /schedule.
      timezone: () => names.timezoneOf(message.user),
      defaultTimezone: core.scheduleTimezone,
    });
    return;
  }
  // A message made only of files (a screenshot dropped in the thread) is a message too.
  const attachments = incomingFilesOf(message.files, logger);
  if (!bare && attachments.length === 0) return;
  // The door first: someone who may not use the bot is refused before anything the message
  // holds is looked up (`deliver` judges the same again).
  const door = manager.admits(message.user, { external });
  if (!door.allowed) return replies.whisper(message.channel, message.user, threadTs, door.reason);
  // The author first: their name goes into the source; the mentions share the rest of the budget.
  const known = await names.namesOf([message.user, ...mentionedUsers(message.text).filter((id) => id !== bot.userId)]);
  const text = readableText(message.text, bot.userId, known);
  const source = sourceOf(message, teamId, threadTs, known.get(message.user) ?? message.user, bot.teamUrl);
  // Their DM: what Slack last said they are viewing becomes this thread's context (messages-tab.ts).
  if (isDm) await carryViewing(core.viewing, key, message.user, logger);
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
  if (result.status === 'refused') await replies.whisper(message.channel, message.user, threadTs, result.reason);
  else if ('filesRefused' in result && result.filesRefused)
    await replies.whisper(message.channel, message.user, threadTs, result.filesRefused);
}

function sourceOf(
  message: HumanMessage,
  teamId: string,
  threadTs: string,
  userName: string,
  teamUrl: string,
): MessageSource {
  const source: MessageSource = {
    platform: 'slack',
    workspace: teamId,
    channel: message.channel,
    thread: threadTs,
    userId: message.user,
    userName,
    messageId: message.ts,
  };
  if (teamUrl) source.permalink = `${teamUrl}/archives/${message.channel}/p${message.ts.replace('.', '')}`;
  return source;
}
