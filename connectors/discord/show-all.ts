// A click on a card's "Show all to decide": the call's every character, answered privately
// (an ephemeral follow-up only the clicker sees) with the approve buttons under it
// (thread-messages.ts `fullViewMessage`). What the buttons of that message may decide, and
// that an approval of a long call comes from it and not from its card, is the shared rule's
// (shared/approval-view.ts, checked by shared/prompt-click.ts).
//
// The button carries the prompt's item id; the call is found from the item (its session and
// tool call), its text from the thread's live presenter or else the stored transcript.
import { MessageFlags, type ButtonInteraction } from 'discord.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { ThreadRecords } from '../../src/sessions/thread-records.js';
import type { CallText } from '../shared/call-arguments.js';
import { storedCallText } from '../shared/stored-call-text.js';
import { safeContent } from './outbound.js';
import { fullViewMessage } from './thread-messages.js';

export interface ShowAllDeps {
  records: Pick<ThreadRecords, 'prompt' | 'transcript'>;
  logger: EngineLogger;
  /** The full text a live thread presenter holds for a call, if it has it. */
  cardText(sessionId: string, toolCallId: string): CallText | undefined;
  grantScope?: 'thread' | 'channel';
}

/** Answer a Show all click (already acknowledged) with the call's full view; anything that prevents it is told privately. */
export async function showAllPrivately(
  deps: ShowAllDeps,
  interaction: ButtonInteraction,
  itemId: string,
  say: (text: string) => Promise<void>,
): Promise<void> {
  const item = await deps.records.prompt(itemId);
  const call = item
    ? (deps.cardText(item.sessionId, item.toolCallId) ??
      (await storedCallText(deps.records, item.sessionId, item.toolCallId)))
    : undefined;
  if (!item || !call) return say('I no longer have this call (the thread may have been forgotten).');
  const message = fullViewMessage(call, item, deps.grantScope);
  try {
    await interaction.followUp({
      content: safeContent(message.content),
      components: message.components,
      flags: MessageFlags.Ephemeral,
      allowedMentions: { parse: [] },
      ...(message.files
        ? { files: message.files.map((file) => ({ name: file.name, attachment: Buffer.from(file.text, 'utf8') })) }
        : {}),
    });
  } catch (error) {
    deps.logger.warn(
      { err: error, sessionId: item.sessionId, toolCallId: item.toolCallId },
      'could not show a call in full',
    );
    await say('I could not show the full text. Click Show all again, and do not approve what you have not seen.');
  }
}

/** Whether a click was made on one of the bot's private (ephemeral) messages: Show all's, never a card. */
export function fromPrivateMessage(interaction: ButtonInteraction): boolean {
  return interaction.message.flags.has(MessageFlags.Ephemeral);
}
