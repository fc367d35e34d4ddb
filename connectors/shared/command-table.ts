// The thread commands, listed once: every help text (Slack's thread help and `/agent`, Discord's
// slash commands and `/help`, the playground's) is rendered from this table, and the command
// runner (thread-commands.ts) dispatches on its names, so a command cannot be offered on one
// platform and forgotten in another's help. What each command does is the runner's; here is
// only what a person is told: how to write it, what it does, who may run it, where.
//
// A description is one plain line: it is Discord's slash command description too (1 to 100
// characters, no markup), so it reads the same in mrkdwn, Discord markdown and the page's Markdown.

export type CommandPlatform = 'slack' | 'discord' | 'web';

interface ThreadCommandSpec {
  /** What follows the slash. */
  readonly name: string;
  /** How its arguments are written (`<required> [optional]`), '' when it takes none. */
  readonly args: string;
  /** A platform that reads the arguments otherwise (the playground has no one else to name). */
  readonly argsOn?: Partial<Record<CommandPlatform, string>>;
  /** One plain line, capitalised, no full stop. */
  readonly description: string;
  /** Who may run it: `admins` is ADMINS (the session layer enforces it; this only says so). */
  readonly who: 'everyone' | 'admins';
  /** The platforms that offer it; every one when absent. */
  readonly platforms?: readonly CommandPlatform[];
  /** Other names the runner takes for it, never listed (`/continue`, the Continue button's word, is `/retry`). */
  readonly aliases?: readonly string[];
}

const TABLE = [
  { name: 'status', args: '', description: 'The model and what is always allowed in this thread', who: 'everyone' },
  { name: 'model', args: '<provider:model>', description: 'Switch this thread to another model', who: 'everyone' },
  { name: 'grants', args: '', description: 'What is always allowed here, and who allowed it', who: 'everyone' },
  { name: 'revoke', args: '<tool> [command]', description: 'Take back an "always allow"', who: 'everyone' },
  {
    name: 'retry',
    args: '',
    description: "Run the thread's last request again",
    who: 'everyone',
    aliases: ['continue'],
  },
  { name: 'stop', args: '', description: 'Stop what I am doing in this thread', who: 'everyone' },
  { name: 'forget', args: '', description: 'Delete everything stored for this thread', who: 'everyone' },
  { name: 'feedback', args: '', description: 'The 👍 / 👎 people gave my answers, with their reasons', who: 'admins' },
  {
    name: 'usage',
    args: '[@person | #channel]',
    argsOn: { web: '' },
    description: "What was spent today and this month: yours, this channel's, everyone's (admins may name others)",
    who: 'everyone',
  },
  {
    name: 'profile',
    args: '[name]',
    description: 'The profile this thread runs under, or move it to another',
    who: 'admins',
  },
  {
    name: 'schedule',
    args: '<when> <task>',
    description: 'Run a task in this thread later or regularly',
    who: 'everyone',
  },
  {
    name: 'schedules',
    args: '',
    description: 'Your schedules (admins: every one in this channel) with their next run',
    who: 'everyone',
  },
  { name: 'unschedule', args: '<id>', description: 'End a schedule', who: 'everyone' },
  { name: 'help', args: '', description: 'How to use me', who: 'everyone' },
] as const satisfies readonly ThreadCommandSpec[];

export type ThreadCommandName = (typeof TABLE)[number]['name'];
export type ThreadCommand = ThreadCommandSpec & { readonly name: ThreadCommandName };

/**
 * Every thread command, in the order helps list them.
 * @internal
 */
export const THREAD_COMMANDS: readonly ThreadCommand[] = TABLE;

/** The command a name (or one of its aliases) means, or undefined for a name nobody knows. Platforms lower-case what was typed. */
export function threadCommandNamed(name: string): ThreadCommand | undefined {
  return THREAD_COMMANDS.find((command) => command.name === name || (command.aliases ?? []).includes(name));
}

/** The commands a platform offers, in the table's order. */
export function commandsOn(platform: CommandPlatform): ThreadCommand[] {
  return THREAD_COMMANDS.filter((command) => !command.platforms || command.platforms.includes(platform));
}

/**
 * How the command is written on this platform: `/revoke <tool> [command]`.
 * @internal
 */
export function commandUsage(command: ThreadCommand, platform?: CommandPlatform): string {
  const args = (platform ? command.argsOn?.[platform] : undefined) ?? command.args;
  return args ? `/${command.name} ${args}` : `/${command.name}`;
}

/**
 * What it does, said to someone who may not be an admin: an admins' command says so first
 * ("Admins: the profile…"). `readerIsAdmin`: the playground's one person runs the bot, and is one.
 */
export function commandDescription(command: ThreadCommand, readerIsAdmin = false): string {
  if (command.who === 'everyone' || readerIsAdmin) return command.description;
  return `Admins: ${command.description.charAt(0).toLowerCase()}${command.description.slice(1)}`;
}

export interface HelpLineOptions {
  /** What starts each line: Slack's mrkdwn has no lists, so the bullet is the text's own. */
  bullet: string;
  readerIsAdmin?: boolean;
}

/**
 * The platform's commands, one a line: "• `/model <provider:model>` — Switch this thread…". A code
 * span and plain words read the same in mrkdwn and in Markdown, so no platform marks them otherwise.
 */
export function commandHelpLines(platform: CommandPlatform, options: HelpLineOptions): string[] {
  return commandsOn(platform).map(
    (command) =>
      `${options.bullet} \`${commandUsage(command, platform)}\` — ${commandDescription(command, options.readerIsAdmin)}`,
  );
}

/**
 * The table as Markdown, for the README: every command, and where it is offered when not everywhere.
 * @internal
 */
export function commandTableMarkdown(): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const rows = THREAD_COMMANDS.map((command) => {
    const where = command.platforms ? ` (${command.platforms.map(platformName).join(', ')} only)` : '';
    return `| \`${cell(commandUsage(command))}\` | ${cell(commandDescription(command))}${where} |`;
  });
  return ['| command | what it does |', '| --- | --- |', ...rows].join('\n');
}

function platformName(platform: CommandPlatform): string {
  switch (platform) {
    case 'slack':
      return 'Slack';
    case 'discord':
      return 'Discord';
    case 'web':
      return 'the playground';
  }
}
