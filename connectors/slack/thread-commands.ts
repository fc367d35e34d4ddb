// Thread commands in Slack: a mention whose text starts with `/word` (message-text.ts reads
// it), run by the shared command runner (shared/thread-commands.ts) in Slack's mrkdwn.
// Answers that concern only the asker are ephemeral; a model switch is said in the thread.
import { escapeSlackText } from '../shared/markdown-format.js';
import { runThreadCommand as runCommand, type CommandContext, type CommandMarkup } from '../shared/thread-commands.js';

export type { CommandContext } from '../shared/thread-commands.js';

export const COMMAND_HELP =
  'Thread commands (mention me first): `/status`, `/model <provider:model>`, `/grants`, `/revoke <tool> [command]`, `/retry`, `/stop`, `/forget`, `/feedback` (admins: the 👍 / 👎 on answers), `/usage [@person | #channel]` (spend; others\' for admins), `/profile [name]` (admins: the thread\'s profile), `/schedule <when> <task>` (e.g. `/schedule every weekday at 9:00 summarise the open incidents`, in your Slack time zone), `/schedules` (yours, with their next run), `/unschedule <id>`, `/help`.';

const SLACK_MARKUP: CommandMarkup = {
  bold: (text) => `*${text}*`,
  escape: escapeSlackText,
  switched: ':arrows_counterclockwise:',
  help: COMMAND_HELP,
};

export function runThreadCommand(command: { name: string; args: string[] }, context: CommandContext): Promise<void> {
  return runCommand(command, context, SLACK_MARKUP);
}
