// Thread commands in Slack: a mention whose text starts with `/word` (message-text.ts reads
// it), run by the shared command runner (shared/thread-commands.ts) in Slack's mrkdwn.
// Answers that concern only the asker are ephemeral; a model switch is said in the thread.
// The commands both Slack helps list (this one and `/agent`'s) are the command table's.
import { commandHelpLines } from '../shared/command-table.js';
import { escapeSlackText } from '../shared/markdown-format.js';
import { runThreadCommand as runCommand, type CommandContext, type CommandMarkup } from '../shared/thread-commands.js';

export type { CommandContext } from '../shared/thread-commands.js';

/** The thread commands, one a line in mrkdwn, each line starting with `bullet`. */
export function slackCommandLines(bullet: string): string[] {
  return commandHelpLines('slack', { bullet });
}

/** @internal */
export const COMMAND_HELP = [
  'Thread commands (mention me first):',
  ...slackCommandLines('•'),
  "A schedule's when is read in your Slack time zone: `/schedule every weekday at 9:00 summarise the open incidents`.",
].join('\n');

const SLACK_MARKUP: CommandMarkup = {
  bold: (text) => `*${text}*`,
  escape: escapeSlackText,
  switched: ':arrows_counterclockwise:',
  help: COMMAND_HELP,
};

export function runThreadCommand(command: { name: string; args: string[] }, context: CommandContext): Promise<void> {
  return runCommand(command, context, SLACK_MARKUP);
}
