// Discord's slash commands: `/status`, `/model`, `/profile`, `/grants`, `/revoke`, `/retry`, `/stop`,
// `/forget`, `/feedback` (admins: the 👍 / 👎 totals), `/usage`, `/schedule`, `/schedules`,
// `/unschedule`, `/help`, registered for the application (for each server DISCORD_GUILD_ID lists,
// so they appear at once; globally otherwise, which Discord may take an hour to show),
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
import { MessageFlags, type ApplicationCommandDataResolvable, type ChatInputCommandInteraction, type Client } from 'discord.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { FeedbackBook } from '../../src/feedback/feedback-book.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import type { SpendReader } from '../../src/ops/spend-report.js';
import type { ScheduleDesk } from '../../src/schedules/schedule-types.js';
import { runThreadCommand, type CommandContext, type CommandMarkup } from '../shared/thread-commands.js';
import { safeContent, type DiscordOutbound } from './outbound.js';

export const DISCORD_COMMAND_HELP =
  'Commands, run in a thread where I work (or in a DM with me): `/status`, `/model <provider:model>`, `/grants`, `/revoke <tool> [command]`, `/retry`, `/stop`, `/forget` (delete this thread\'s stored data), `/feedback` (admins: the 👍 / 👎 on my answers), `/usage` (what was spent; admins may name a person or a channel), `/profile [name]` (admins: the thread\'s profile), `/schedule` (when, e.g. "every weekday at 9:00" or "in 2 hours", and the task; read in the bot\'s time zone, SCHEDULE_TZ), `/schedules` (yours, with their next run), `/unschedule <id>`, `/help`. Mention me in a channel to start a thread; react with 🛑 to stop me.';

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

/** The commands as Discord registers them (names and options only; the roles are the session layer's). */
export const SLASH_COMMANDS: ApplicationCommandDataResolvable[] = [
  { name: 'status', description: 'The model and what is always allowed in this thread' },
  { name: 'model', description: 'Switch this thread to another model', options: [{ type: STRING, name: 'model', description: 'provider:model, e.g. openai:gpt-4.1', required: false }] },
  { name: 'grants', description: 'What is always allowed here, and who allowed it' },
  {
    name: 'revoke',
    description: 'Take back an "always allow"',
    options: [
      { type: STRING, name: 'tool', description: 'The tool, e.g. write_file or run_shell', required: true },
      { type: STRING, name: 'command', description: 'For run_shell: the exact command', required: false },
    ],
  },
  { name: 'retry', description: 'Run the thread\'s last request again' },
  { name: 'stop', description: 'Stop what I am doing in this thread' },
  { name: 'forget', description: 'Delete everything stored for this thread' },
  { name: 'feedback', description: 'Admins: the 👍 / 👎 people gave my answers, with their reasons' },
  {
    name: 'usage',
    description: 'What was spent today and this month: yours, this channel\'s, the server\'s',
    options: [
      { type: USER, name: 'user', description: 'Admins: this person\'s spend', required: false },
      { type: CHANNEL, name: 'channel', description: 'Admins: this channel\'s spend', required: false },
    ],
  },
  { name: 'profile', description: 'Admins: the profile this thread runs under, or move it to another', options: [{ type: STRING, name: 'name', description: 'The profile to move this thread to', required: false }] },
  {
    name: 'schedule',
    description: 'Run a task in this thread later or regularly',
    options: [
      { type: STRING, name: 'when', description: 'e.g. "every weekday at 9:00", "in 2 hours", "0 9 * * 1-5"', required: true },
      { type: STRING, name: 'task', description: 'What to do at each run, e.g. "summarise the open incidents"', required: true },
    ],
  },
  { name: 'schedules', description: 'Your schedules (admins: every one in this channel) with their next run' },
  { name: 'unschedule', description: 'End a schedule', options: [{ type: STRING, name: 'id', description: 'The schedule\'s id, e.g. s-abc123 (/schedules lists them)', required: true }] },
  { name: 'help', description: 'How to use me' },
];

/**
 * Register the commands: for each home server (they appear at once), or globally when none is
 * listed. A server that refuses (the bot is not in it: 50001 Missing Access) is logged and
 * does not keep the others from theirs.
 */
export async function registerSlashCommands(client: Client<true>, guildIds: readonly string[], logger: EngineLogger): Promise<void> {
  if (guildIds.length === 0) {
    await client.application.commands.set(SLASH_COMMANDS);
    return;
  }
  for (const guildId of guildIds) {
    try {
      await client.application.commands.set(SLASH_COMMANDS, guildId);
    } catch (error) {
      logger.warn({ err: error, guildId }, 'could not register the Discord slash commands for a server in DISCORD_GUILD_ID');
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
        await deps.outbound.post(thread, { content: text }).catch((error: unknown) => deps.logger.warn({ err: error }, 'could not post in the thread'));
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
