// The buttons on the bot's cards and notes (the 👍 / 👎 under an answer are answer-feedback.ts's):
// a prompt's choice (the shared prompt click, shared/prompt-click.ts, held to what the card or
// Show all's private message showed), Retry (the session layer's `controls.retry`, then the
// button is taken off its note) and Show all (the call's full text, privately, show-all.ts).
// Acknowledged first (deferUpdate, within Discord's 3 seconds), work after; a refusal or a
// stale click is answered to the clicker alone, in an ephemeral follow-up.
import type { ButtonInteraction } from 'discord.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import type { SessionRecord } from '../../src/sessions/thread-records.js';
import type { CallText } from '../shared/call-arguments.js';
import { answerPromptClick } from '../shared/prompt-click.js';
import type { ThreadPresenter } from '../shared/thread-presenter.js';
import { readCustomId } from './custom-ids.js';
import type { DiscordOutbound } from './outbound.js';
import { whisperToClicker } from './private-answers.js';
import { fromPrivateMessage, showAllPrivately } from './show-all.js';
import { discordCardHoldsAll } from './thread-messages.js';

export interface ButtonClickDeps {
  manager: SessionManager;
  outbound: Pick<DiscordOutbound, 'edit'>;
  logger: EngineLogger;
  grantScope: 'thread' | 'channel';
  presenterFor: (session: SessionRecord) => ThreadPresenter;
  /** The full text a live thread presenter holds for a card's call, if it has it. */
  cardText: (sessionId: string, toolCallId: string) => CallText | undefined;
}

type Say = (text: string) => Promise<void>;

export async function answerButtonClick(deps: ButtonClickDeps, interaction: ButtonInteraction): Promise<void> {
  const action = readCustomId(interaction.customId);
  // Acknowledge first: Discord gives 3 seconds, and resolving may take longer.
  try {
    await interaction.deferUpdate();
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not acknowledge a Discord button in time');
    return;
  }
  const say: Say = (text) => whisperToClicker(interaction, text, deps.logger);
  const userId = interaction.user.id;
  const { manager } = deps;
  // (A feedback button never gets here: answer-feedback.ts took it before.)
  if (!action || action.kind === 'feedback') return say('That button is not one I recognise.');
  if (action.kind === 'retry') return onRetryClick(deps, interaction, action.session, say);
  if (action.kind === 'show_all')
    return showAllPrivately(
      { records: manager.records, logger: deps.logger, cardText: deps.cardText, grantScope: deps.grantScope },
      interaction,
      action.item,
      say,
    );
  let choice: string | undefined =
    action.kind === 'prompt' || action.kind === 'full_prompt' ? action.choice : undefined;
  if (action.kind === 'prompt_index') choice = (await manager.records.prompt(action.item))?.choices[action.index];
  if (choice === undefined) return say('That answer is not one this prompt offers.');
  // From Show all's private message (its custom id says so, and Discord says the message is ephemeral): the full view.
  const fullViewOf =
    action.kind === 'full_prompt' && fromPrivateMessage(interaction)
      ? (await manager.records.prompt(action.item))?.toolCallId
      : undefined;
  await answerPromptClick({ manager }, deps.presenterFor, { item: action.item, choice, userId }, say, {
    ...(fullViewOf ? { fullViewOf } : {}),
    cardHoldsAll: (_call, view) => discordCardHoldsAll(view),
  });
}

async function onRetryClick(
  deps: ButtonClickDeps,
  interaction: ButtonInteraction,
  sessionId: string,
  say: Say,
): Promise<void> {
  const userId = interaction.user.id;
  const result = await deps.manager.controls.retry(sessionId, userId);
  if (result.status === 'refused') return say(result.reason);
  if (result.status === 'busy') return say('I am already working in this thread.');
  if (result.status !== 'done') return say('There is nothing to retry here any more.');
  // The button has done its job: take it off the note, which says who used it.
  await deps.outbound
    .edit(interaction.channelId, interaction.message.id, {
      content: `${interaction.message.content} — retried by <@${userId}>`,
      components: [],
    })
    .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not update the retry note'));
}
