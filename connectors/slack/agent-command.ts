// Slack's one slash command, `/agent`: it answers, privately, how to use the bot. The thread
// commands themselves are mentions in the thread they act on (`@bot /model …`, thread-commands.ts).
import type { App } from '@slack/bolt';
import type { EngineLogger } from '../../src/engine/index.js';
import { readInbound } from './inbound-events.js';
import { slackCommandLines } from './thread-commands.js';

/** @internal */
export const HELP_TEXT = [
  '*How to use me*',
  '• Mention me in a channel with a task; I work in a thread under your message. Reply in that thread to steer me.',
  '• React with :octagonal_sign: to my thread to stop me at once.',
  '• In a thread, mention me with a command:',
  ...slackCommandLines('    ◦'),
  '• Under each answer, :+1: or :-1: says whether it helped (a :-1: lets you say why).',
].join('\n');

/** Acknowledged first; a payload that does not parse gets no answer (inbound-events.ts logged it). */
export function listenForAgentCommand(app: App, logger: EngineLogger): void {
  app.command('/agent', async ({ ack, body, respond }) => {
    await ack();
    if (!readInbound('slash_command', body, logger)) return;
    await respond({ response_type: 'ephemeral', text: HELP_TEXT });
  });
}
