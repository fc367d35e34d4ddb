// Discord's slash commands: the command table's (shared/command-table.ts: names and
// descriptions; the options each takes are Discord's, below), registered for the application
// (for each server DISCORD_GUILD_ID lists, so they appear at once; globally otherwise, which
// Discord may take an hour to show),
// and run by the shared command runner (shared/thread-commands.ts) with the same roles as in
// Slack. A command acts on the thread (or DM) it is run in.
//
// Every command is acknowledged first with a deferred ephemeral reply (Discord's 3 seconds);
// its private answer then fills that reply, so only the person who ran it sees it. A model
// switch is also said in the thread, as in Slack.
//
// A command runs once per interaction: the gateway replays INTERACTION_CREATE after a Resume,
// and a restart may see the same interaction again, so its id is claimed
// (`discord:interaction:<id>`, persisted) before anything else. A second delivery is not
// acknowledged either: the first one was, and a second acknowledgement gets 40060.
import {
  MessageFlags,
  type ApplicationCommandDataResolvable,
  type ApplicationCommandOptionData,
  type ChatInputCommandInteraction,
  type Client,
} from 'discord.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { FeedbackBook } from '../../src/feedback/feedback-book.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import type { SpendReader } from '../../src/ops/spend-report.js';
import type { ScheduleDesk } from '../../src/schedules/schedule-types.js';
import { commandDescription, commandHelpLines, commandsOn, type ThreadCommandName } from '../shared/command-table.js';
import { runThreadCommand, type CommandContext, type CommandMarkup } from '../shared/thread-commands.js';
import { safeContent, type DiscordOutbound } from './outbound.js';

/** @internal */
export const DISCORD_COMMAND_HELP = [
  'Commands, run in a thread where I work (or in a DM with me):',
  ...commandHelpLines('discord', { bullet: '•' }),
  'A schedule\'s when, e.g. "every weekday at 9:00" or "in 2 hours", is read in the bot\'s time zone (SCHEDULE_TZ).',
  'Mention me in a channel to start a thread; react with 🛑 to stop me.',
].join('\n');

const DISCORD_MARKUP: CommandMarkup = {
  bold: (text) => `**${text}**`,
  // What is sent passes outbound.ts (no mass mentions); markdown in a model name is harmless.
  escape: (text) => text,
  switched: '🔄',
  help: DISCORD_COMMAND_HELP,
};

const STRING = 3;
const USER = 6;
const CHANNEL = 7;

/** What each command's arguments are in Discord's form; commandArgs turns them back into the runner's words. */
const SLASH_OPTIONS: Partial<Record<ThreadCommandName, ApplicationCommandOptionData[]>> = {
  model: [{ type: STRING, name: 'model', description: 'provider:model, e.g. openai:gpt-4.1', required: false }],
  revoke: [
    { type: STRING, name: 'tool', description: 'The tool, e.g. write_file or run_shell', required: true },
    { type: STRING, name: 'command', description: 'For run_shell: the exact command', required: false },
  ],
  usage: [
    { type: USER, name: 'user', description: "Admins: this person's spend", required: false },
    { type: CHANNEL, name: 'channel', description: "Admins: this channel's spend", required: false },
  ],
  profile: [{ type: STRING, name: 'name', description: 'The profile to move this thread to', required: false }],
  schedule: [
    {
      type: STRING,
      name: 'when',
      description: 'e.g. "every weekday at 9:00", "in 2 hours", "0 9 * * 1-5"',
      required: true,
    },
    {
      type: STRING,
      name: 'task',
      description: 'What to do at each run, e.g. "summarise the open incidents"',
      required: true,
    },
  ],
  unschedule: [
    {
      type: STRING,
      name: 'id',
      description: "The schedule's id, e.g. s-abc123 (/schedules lists them)",
      required: true,
    },
  ],
};

/**
 * The commands as Discord registers them (names, descriptions and options only; the roles are the session layer's).
 * @internal
 */
export const SLASH_COMMANDS: ApplicationCommandDataResolvable[] = commandsOn('discord').map((command) => {
  const options = SLASH_OPTIONS[command.name];
  return { name: command.name, description: commandDescription(command), ...(options ? { options } : {}) };
});

/**
 * Register the commands: for each home server (they appear at once), or globally when none is
 * listed. A server that refuses (the bot is not in it: 50001 Missing Access) is logged and
 * does not keep the others from theirs.
 */
export async function registerSlashCommands(
  client: Client<true>,
  guildIds: readonly string[],
  logger: EngineLogger,
): Promise<void> {
  if (guildIds.length === 0) {
    await client.application.commands.set(SLASH_COMMANDS);
    return;
  }
  for (const guildId of guildIds) {
    try {
      await client.application.commands.set(SLASH_COMMANDS, guildId);
    } catch (error) {
      logger.warn(
        { err: error, guildId },
        'could not register the Discord slash commands for a server in DISCORD_GUILD_ID',
      );
    }
  }
}

export interface SlashCommandDeps {
  manager: SessionManager;
  outbound: DiscordOutbound;
  logger: EngineLogger;
  /** The session key of the thread or DM a command was run in, or undefined outside one. */
  keyOf: (interaction: ChatInputCommandInteraction) => SessionKey | undefined;
  /** Whether the person is from outside the bot's server(s): `*` does not include them. */
  isOutsider: (userId: string, guildId: string | null) => Promise<boolean>;
  /** The 👍 / 👎 on answers, whose totals an admin's `/feedback` shows (core.feedback). */
  feedback?: Pick<FeedbackBook, 'totals'>;
  /** What was spent, for `/usage` (core.spend). */
  spend?: SpendReader;
  /** Scheduled work, for `/schedule`, `/schedules`, `/unschedule` (core.schedules). */
  schedules?: ScheduleDesk;
  /** SCHEDULE_TZ: Discord does not tell a person's time zone, so every schedule is read in this one. */
  scheduleTimezone: string;
}

export async function runSlashCommand(interaction: ChatInputCommandInteraction, deps: SlashCommandDeps): Promise<void> {
  if (!(await deps.manager.claimEvent(`discord:interaction:${interaction.id}`))) {
    deps.logger.debug({ interactionId: interaction.id }, 'a Discord slash command delivered again; it ran already');
    return;
  }
  try {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not acknowledge a Discord slash command in time');
    return;
  }
  let answered = false;
  const reply = async (text: string): Promise<void> => {
    answered = true;
    await interaction
      .editReply({ content: safeContent(text), allowedMentions: { parse: [] } })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not answer a slash command'));
  };
  const name = interaction.commandName;
  if (name === 'help') return reply(DISCORD_COMMAND_HELP);
  const key = deps.keyOf(interaction);
  if (!key) return reply('Run this in a thread where I work (or in a DM with me).');
  const args = commandArgs(interaction);
  // `feedback` is for `/feedback` (the shared runner's; a runner without that case ignores it).
  const context: CommandContext & { feedback?: Pick<FeedbackBook, 'totals'> } = {
    connector: {
      whisper: (_channel, _user, _thread, text) => reply(text),
      post: async (_channel, thread, text) => {
        await deps.outbound
          .post(thread, { content: text })
          .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not post in the thread'));
      },
    },
    key,
    userId: interaction.user.id,
    external: await deps.isOutsider(interaction.user.id, interaction.guildId),
    manager: deps.manager,
    logger: deps.logger,
    ...(deps.feedback ? { feedback: deps.feedback } : {}),
    ...(deps.spend ? { spend: deps.spend } : {}),
    ...(deps.schedules ? { schedules: deps.schedules } : {}),
    defaultTimezone: deps.scheduleTimezone,
  };
  await runThreadCommand({ name, args }, context, DISCORD_MARKUP);
  // `/stop` and `/retry` say nothing when they work: the thread shows it. Close the "thinking…".
  if (!answered) await reply('Done.');
}

function commandArgs(interaction: ChatInputCommandInteraction): string[] {
  const words = (text: string | null): string[] => (text?.trim() ? text.trim().split(/\s+/) : []);
  switch (interaction.commandName) {
    case 'model':
      return words(interaction.options.getString('model'));
    case 'revoke':
      return [...words(interaction.options.getString('tool')), ...words(interaction.options.getString('command'))];
    case 'profile':
      return words(interaction.options.getString('name'));
    case 'schedule':
      // The when, a separator the splitter drops, then the task: the shared runner splits the
      // words as it splits a typed command, and the separator keeps a task's first words out of the when.
      return [...words(interaction.options.getString('when')), '—', ...words(interaction.options.getString('task'))];
    case 'unschedule':
      return words(interaction.options.getString('id'));
    case 'usage': {
      const user = interaction.options.getUser('user');
      const channel = interaction.options.getChannel('channel');
      return user ? [`<@${user.id}>`] : channel ? [`<#${channel.id}>`] : [];
    }
    default:
      return [];
  }
}
