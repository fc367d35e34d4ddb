// The 👍 / 👎 under a turn's final answer, in Slack's own words: a `context_actions` block
// holding one `feedback_buttons` element (Slack draws the thumbs; the texts are their labels).
// The buttons are stateless: the action id names the kind of click and each value says only
// which way the vote goes. The click's handler (feedback-clicks.ts) finds the answer from the
// message clicked, never from the value, so a forged value cannot vote on another answer.
//
// Limits (docs.slack.dev, feedback buttons element): button text and accessibility label at
// most 75 characters, value at most 2,000, action id at most 255; a context_actions block
// holds at most 5 elements. A 👎 opens a modal with one optional reason (a modal with an input
// needs a submit button; titles at most 24 characters).
import type { types } from '@slack/bolt';
import { z } from 'zod';
import { REASON_MAX } from '../../src/feedback/feedback-book.js';
import { FEEDBACK_ACTION } from './actions.js';
import { LIMITS, plain, section, type SlackBlock } from './block-kit.js';

export type FeedbackVote = 'up' | 'down';

/** The values the two buttons carry. */
const FEEDBACK_VALUES: Record<FeedbackVote, string> = { up: 'up', down: 'down' };

/** The block id, so a reader of the message can tell the block from others. */
const FEEDBACK_BLOCK_ID = 'agent_feedback';

/** The 👍 / 👎 block for a final answer. */
export function feedbackBlock(): SlackBlock {
  const block = {
    type: 'context_actions',
    block_id: FEEDBACK_BLOCK_ID,
    elements: [
      {
        type: 'feedback_buttons',
        action_id: FEEDBACK_ACTION,
        positive_button: {
          text: { type: 'plain_text', text: 'Good answer', emoji: true },
          accessibility_label: 'Mark this answer as good',
          value: FEEDBACK_VALUES.up,
        },
        negative_button: {
          text: { type: 'plain_text', text: 'Bad answer', emoji: true },
          accessibility_label: 'Mark this answer as bad (you can say why)',
          value: FEEDBACK_VALUES.down,
        },
      },
    ],
  } satisfies types.ContextActionsBlock;
  return block;
}

/** Which way a click went, from the clicked button's value (undefined for anything else). */
export function voteOf(value: string | undefined): FeedbackVote | undefined {
  if (value === FEEDBACK_VALUES.up) return 'up';
  if (value === FEEDBACK_VALUES.down) return 'down';
  return undefined;
}

/** The modal a 👎 opens: one optional reason. Its submission comes back under this callback id. */
export const FEEDBACK_REASON_CALLBACK = 'agent_feedback_reason';
/** The input's block and action ids: where the submission's `state.values` holds the reason. */
export const REASON_BLOCK_ID = 'reason';
export const REASON_ACTION_ID = 'reason';

/** Which answer the modal is about: Slack hands it back, unchanged, with the submission. */
export const ReasonMetadataSchema = z.object({
  channel: z.string().min(1),
  ts: z.string().min(1),
  thread: z.string().min(1),
});
export type ReasonMetadata = z.infer<typeof ReasonMetadataSchema>;

/** The "what was wrong?" modal for a 👎 on the answer `where` names. */
export function reasonModal(where: ReasonMetadata): types.ModalView {
  return {
    type: 'modal',
    callback_id: FEEDBACK_REASON_CALLBACK,
    title: plain('Feedback', LIMITS.viewTitle),
    submit: plain('Send', LIMITS.viewTitle),
    close: plain('Skip', LIMITS.viewTitle),
    private_metadata: JSON.stringify(where),
    blocks: [
      section('Thanks: your :-1: is counted. If you like, say what was wrong with the answer; the bot admins read it.'),
      {
        type: 'input',
        block_id: REASON_BLOCK_ID,
        optional: true,
        label: plain('What was wrong?', 2_000),
        element: {
          type: 'plain_text_input',
          action_id: REASON_ACTION_ID,
          multiline: true,
          max_length: REASON_MAX,
          placeholder: plain('Optional', 150),
        },
      },
    ],
  };
}
