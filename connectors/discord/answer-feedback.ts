// 👍 / 👎 under a turn's final answer on Discord: the two small buttons (answer-message.ts puts
// them on the answer's last message), a click on them, and the optional reason a 👎 asks for
// in a modal.
//
// Decisions a reader must hold:
// - Which answer is voted on is the CLICKED message's (its store key, as the surface records
//   it), never anything the button carries: a forged custom id cannot vote on another answer.
//   The modal submit names the message its 👎 was clicked on the same way (Discord sends that
//   message with the submit).
// - Only people who may use the bot vote (the session manager's door, as for a message); the
//   others are refused privately. One vote per person per answer is the book's rule
//   (src/feedback/feedback-book.ts).
// - Every answer is private (ephemeral). A 👍 is acknowledged at once with a deferred private
//   reply; a 👎 must answer with the modal itself (a modal can only be a first response), so
//   its vote is checked and recorded first, well within Discord's 3 seconds (a store write).
import { MessageFlags, type ButtonInteraction, type Interaction, type ModalSubmitInteraction } from 'discord.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { REASON_MAX, type FeedbackValue } from '../../src/feedback/feedback-book.js';
import { FEEDBACK_CUSTOM_ID, FEEDBACK_REASON_INPUT_ID, FEEDBACK_REASON_MODAL_ID, readCustomId } from './custom-ids.js';
import { safeContent, type ApiActionRow } from './outbound.js';

/** The row of 👍 / 👎 under a final answer: small (secondary) buttons. */
export function feedbackRow(): ApiActionRow {
  return {
    type: 1,
    components: [
      { type: 2, style: 2, label: '👍', custom_id: FEEDBACK_CUSTOM_ID.up },
      { type: 2, style: 2, label: '👎', custom_id: FEEDBACK_CUSTOM_ID.down },
    ],
  };
}

export interface AnswerFeedbackDeps {
  core: Pick<Core, 'feedback' | 'manager'>;
  logger: EngineLogger;
  /** Whether the person is from outside the bot's server(s) (home-guilds.ts). */
  isOutsider: (userId: string, guildId: string | null) => Promise<boolean>;
  /** The store key of a message, as the surface records the answers (discord-surface.ts). */
  messageKey: (channelId: string, messageId: string) => string;
}

const TEXT_PARAGRAPH = 2;
const UNKNOWN_ANSWER = 'That answer can no longer take feedback (its thread was forgotten).';

/** Handle a 👍 / 👎 click or a 👎's reason; false when the interaction is not one of these. */
export async function answerFeedbackInteraction(interaction: Interaction, deps: AnswerFeedbackDeps): Promise<boolean> {
  if (interaction.isButton()) {
    const action = readCustomId(interaction.customId);
    if (action?.kind !== 'feedback') return false;
    await guarded(deps, 'a feedback click', () =>
      action.value === 'up' ? thumbsUp(interaction, deps) : thumbsDown(interaction, deps),
    );
    return true;
  }
  if (interaction.isModalSubmit() && interaction.customId === FEEDBACK_REASON_MODAL_ID) {
    await guarded(deps, 'a feedback reason', () => reasonGiven(interaction, deps));
    return true;
  }
  return false;
}

async function thumbsUp(interaction: ButtonInteraction, deps: AnswerFeedbackDeps): Promise<void> {
  await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  const say = (text: string): Promise<unknown> =>
    interaction.editReply({ content: safeContent(text), allowedMentions: { parse: [] } });
  const refusal = await refused(interaction, deps);
  if (refusal) return void (await say(refusal));
  const result = await deps.core.feedback.vote(
    deps.messageKey(interaction.channelId, interaction.message.id),
    interaction.user.id,
    'up',
  );
  if (result.status === 'unknown_answer') return void (await say(UNKNOWN_ANSWER));
  await say(voteWords(result.status, 'up'));
}

async function thumbsDown(interaction: ButtonInteraction, deps: AnswerFeedbackDeps): Promise<void> {
  const say = (text: string): Promise<unknown> =>
    interaction.reply({ content: safeContent(text), flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  const refusal = await refused(interaction, deps);
  if (refusal) return void (await say(refusal));
  const result = await deps.core.feedback.vote(
    deps.messageKey(interaction.channelId, interaction.message.id),
    interaction.user.id,
    'down',
  );
  if (result.status === 'unknown_answer') return void (await say(UNKNOWN_ANSWER));
  await interaction.showModal({
    custom_id: FEEDBACK_REASON_MODAL_ID,
    title: 'Your 👎 is recorded. What went wrong?',
    components: [
      {
        type: 1,
        components: [
          {
            type: 4,
            custom_id: FEEDBACK_REASON_INPUT_ID,
            label: 'Why (optional)',
            style: TEXT_PARAGRAPH,
            required: false,
            max_length: REASON_MAX,
            placeholder: 'What was wrong or missing in the answer?',
          },
        ],
      },
    ],
  });
}

async function reasonGiven(interaction: ModalSubmitInteraction, deps: AnswerFeedbackDeps): Promise<void> {
  await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  const say = (text: string): Promise<unknown> =>
    interaction.editReply({ content: safeContent(text), allowedMentions: { parse: [] } });
  const refusal = await refused(interaction, deps);
  if (refusal) return void (await say(refusal));
  const messageId = interaction.message?.id;
  if (!messageId) return void (await say('I could not tell which answer that was about.'));
  const reason = readReason(interaction);
  if (!reason) return void (await say('Your 👎 is recorded.'));
  const kept = await deps.core.feedback.giveReason(
    deps.messageKey(interaction.channelId ?? '', messageId),
    interaction.user.id,
    reason,
  );
  await say(
    kept
      ? 'Thanks: your 👎 and its reason are recorded.'
      : 'Your 👎 is no longer there (it was changed or forgotten), so the reason was not kept.',
  );
}

/** The typed reason, or '' (the field is optional; a missing one is no error). */
function readReason(interaction: ModalSubmitInteraction): string {
  try {
    return interaction.fields.getTextInputValue(FEEDBACK_REASON_INPUT_ID).trim();
  } catch {
    return '';
  }
}

/** Why this person may not vote, or undefined when they may. */
async function refused(
  interaction: ButtonInteraction | ModalSubmitInteraction,
  deps: AnswerFeedbackDeps,
): Promise<string | undefined> {
  const external = await deps.isOutsider(interaction.user.id, interaction.guildId);
  const door = deps.core.manager.admits(interaction.user.id, { external });
  return door.allowed ? undefined : door.reason;
}

function voteWords(status: 'recorded' | 'changed' | 'unchanged', value: FeedbackValue): string {
  const mark = value === 'up' ? '👍' : '👎';
  if (status === 'unchanged') return `Your ${mark} was already recorded.`;
  return status === 'changed' ? `Changed to ${mark}. Thanks.` : `Thanks for the ${mark}.`;
}

async function guarded(deps: AnswerFeedbackDeps, what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    deps.logger.warn({ err: error }, `could not answer ${what}`);
  }
}
