// Block Kit for what the bot posts in a thread: a card per tool call (updated in place as
// it moves from proposed to done), the buttons of a prompt on that same card, and the
// notes that end a turn (stopped, failed with Retry, out of steps with Continue). The thread
// presenter says what to show (shared/thread-surface.ts: CardView, ThreadNote); this file
// says it in Slack's words and markup.
// Limits that bite here (Block Kit docs, block-kit.ts): 50 blocks a message, 3,000 characters
// of section text, 75 characters of button text. What an approval card shows of the call it
// approves, and which approve buttons that allows, is approval-card.ts's.
import {
  displayNote,
  escapeSlackText,
  formatDuration,
  phaseLabel,
  restartNote,
  truncateForDisplay,
  type ToolCardState,
} from '../shared/index.js';
import type { CardPrompt, NoteAction, ThreadNote } from '../shared/thread-surface.js';
import {
  alwaysLabel,
  decisionText,
  DROPPED_AT_STOP_NOTE,
  filesNoteText,
  RESTARTING_NOTE,
  schedulePausedText,
  TAKEN_OVER_NOTE,
} from '../shared/card-words.js';
import { revealInvisible } from '../shared/visible-text.js';
import { encodeValue, promptActionId, RETRY_ACTION } from './actions.js';
import { offeredChoices } from '../shared/approval-view.js';
import { approvalText, type ApprovalText } from './approval-card.js';
import { mrkdwn, plain, type SlackBlock } from './block-kit.js';

export type { SlackBlock } from './block-kit.js';
export type { CardPrompt } from '../shared/thread-surface.js';

const PREVIEW_LIMIT = 600;

const PHASE_ICON: Record<ToolCardState['phase'], string> = {
  proposed: ':hourglass_flowing_sand:',
  awaiting_approval: ':raised_hand:',
  awaiting_answer: ':speech_balloon:',
  running: ':gear:',
  done: ':white_check_mark:',
  failed: ':x:',
  denied: ':no_entry_sign:',
  interrupted: ':octagonal_sign:',
};

/** Slack mrkdwn needs &, < and > escaped in text we did not write. */
const escape = escapeSlackText;

function inlineCode(text: string): string {
  return `\`${escape(text).replace(/`/g, "'")}\``;
}

/** The message's notification text (Slack reads it as mrkdwn too: escaped, hidden characters shown). */
export function toolCardText(card: ToolCardState): string {
  const restart = restartNote(card);
  return escape(
    `${phaseLabel(card.phase)}: ${card.name} ${revealInvisible(card.argsSummary).text}${restart ? ` (${restart})` : ''}`.slice(
      0,
      300,
    ),
  );
}

export function toolCardBlocks(card: ToolCardState, prompt?: CardPrompt): SlackBlock[] {
  const pending = prompt?.item.state === 'pending';
  // A call that needs a decision shows its arguments in full below; the one-line summary would only repeat a part of them.
  const approval = approvalText(card, prompt);
  const summary = approval || !card.argsSummary ? '' : ` ${inlineCode(revealInvisible(card.argsSummary).text)}`;
  const blocks: SlackBlock[] = [
    { type: 'section', text: mrkdwn(`${PHASE_ICON[card.phase]} *${escape(card.name)}*${summary}`) },
  ];
  if (card.phase === 'awaiting_approval' && card.approvalReason)
    blocks.push({ type: 'context', elements: [mrkdwn(`Why I ask: ${escape(card.approvalReason)}`)] });
  if (card.phase === 'awaiting_approval' && card.confinement)
    blocks.push({ type: 'context', elements: [mrkdwn(`Runs ${escape(card.confinement)}`)] });
  if (prompt?.question) {
    blocks.push({ type: 'section', text: mrkdwn(`*Question:* ${escape(prompt.question)}`) });
    if (prompt.item.state === 'pending')
      blocks.push({
        type: 'context',
        elements: [mrkdwn('Pick an answer, or reply in this thread in your own words.')],
      });
  }
  // A plan is approved like a call: its text comes with the approval blocks (in full, or Show all).
  if (prompt?.plan && !approval)
    blocks.push({
      type: 'section',
      text: mrkdwn(`*Plan:*\n${escape(truncateForDisplay(prompt.plan, PREVIEW_LIMIT))}`),
    });
  if (approval) blocks.push(...approval.blocks);
  if (prompt?.item.kind === 'directory' && prompt.item.state === 'pending') {
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn(
          'Granting lets the file tools and the shell (inside its sandbox) read and write that folder for the rest of this thread.',
        ),
      ],
    });
  }
  const restart = restartNote(card);
  // A call cut by a restart has no meaningful duration: the note says what happened.
  const status = card.restart === 'not_rerun' && restart ? [`:warning: ${restart}`] : [phaseLabel(card.phase)];
  if (card.durationMs !== undefined && card.restart !== 'not_rerun') status.push(formatDuration(card.durationMs));
  if (card.restart === 'rerun' && restart) status.push(restart);
  if (card.decision) status.push(decisionText(card.decision));
  blocks.push({ type: 'context', elements: [mrkdwn(status.join(' · '))] });
  if (card.resultPreview && ['done', 'failed', 'denied', 'interrupted'].includes(card.phase)) {
    const preview = truncateForDisplay(card.resultPreview, PREVIEW_LIMIT);
    blocks.push({ type: 'section', text: mrkdwn(`\`\`\`${preview.replace(/```/g, "'''")}\`\`\``) });
  }
  const note = displayNote(card.display);
  if (note) blocks.push({ type: 'context', elements: [mrkdwn(`:information_source: ${escape(note)}`)] });
  if (prompt && pending) blocks.push(promptButtons(card, prompt, approval));
  return blocks;
}

/**
 * The prompt's buttons. Approve, the "always" grants and Grant access need the call's full text
 * on the card or behind Show all (`approval`); without it, or when even a modal cannot hold
 * it, only Deny is offered.
 */
/** Slack refuses a button label over 75 characters. */
const BUTTON_TEXT_MAX = 75;

/**
 * An "always" button says whose turns it covers: the giver's own ("for me") or, offered only
 * where admins approve, everyone's; and where (this thread, or this channel).
 */

function promptButtons(card: ToolCardState, prompt: CardPrompt, approval: ApprovalText | undefined): SlackBlock {
  const { item } = prompt;
  const button = (text: string, choice: string, style?: 'primary' | 'danger') => ({
    type: 'button',
    text: plain(text),
    action_id: promptActionId(choice),
    value: encodeValue({ item: item.id, choice }),
    ...(style ? { style } : {}),
  });
  const elements: unknown[] = [];
  // On the card: only what the shared rule lets a card offer (approval-view.ts). A call the card
  // cannot hold in full is approved in the Show all modal; a call too long for the modal, nowhere.
  const offered = new Set(
    approval ? offeredChoices(item, approval.view, { cardHoldsAll: approval.inFull, fullView: false }) : [],
  );
  const offer = (text: string, choice: string, style?: 'primary' | 'danger'): void => {
    if (offered.has(choice) && (approval?.approvable ?? false)) elements.push(button(text, choice, style));
  };
  switch (item.kind) {
    case 'approval':
      offer('Approve', 'once', 'primary');
      offer(alwaysLabel(card.name, 'me', prompt.grantScope, BUTTON_TEXT_MAX), 'always_tool');
      offer(alwaysLabel(card.name, 'everyone', prompt.grantScope, BUTTON_TEXT_MAX), 'always_tool_all');
      offer(alwaysLabel('this command', 'me', prompt.grantScope, BUTTON_TEXT_MAX), 'always_command');
      offer(alwaysLabel('this command', 'everyone', prompt.grantScope, BUTTON_TEXT_MAX), 'always_command_all');
      elements.push(button('Deny', 'deny', 'danger'));
      break;
    case 'question':
      for (const option of item.choices.slice(0, 24)) elements.push(button(option, option));
      break;
    case 'plan':
      offer('Approve plan', 'approve', 'primary');
      elements.push(button('Reject', 'reject', 'danger'));
      break;
    case 'directory':
      offer('Grant access', 'grant', 'primary');
      elements.push(button('Deny', 'deny', 'danger'));
      break;
  }
  return { type: 'actions', block_id: `prompt:${item.id}`.slice(0, 255), elements };
}

/** A note that ends a turn, in Slack's words: its blocks, and the notification text. */
export function noteMessage(note: ThreadNote): { text: string; blocks: SlackBlock[] } {
  switch (note.kind) {
    case 'tool_calls_limited':
      return {
        text: `Only ${note.allowed} of ${note.requested} tool calls run`,
        blocks: noteBlocks(
          `:warning: The model asked for ${note.requested} tool calls at once; only the first ${note.allowed} run (MAX_TOOL_CALLS_PER_RESPONSE). It was told to send fewer.`,
        ),
      };
    case 'failed':
      return { text: `Error: ${note.message}`, blocks: noteBlocks(`:warning: ${escape(note.message)}`, note.action) };
    case 'stopped':
      return {
        text: 'Stopped',
        blocks: noteBlocks(note.by ? `:octagonal_sign: Stopped by <@${note.by}>.` : ':octagonal_sign: Stopped.'),
      };
    case 'step_limit':
      return {
        text: 'Reached the step limit',
        blocks: noteBlocks(
          `:hourglass: I used the ${note.iterations} model calls allowed for one request. Continue?`,
          note.action,
        ),
      };
    case 'budget_paused':
      return { text: note.message, blocks: noteBlocks(`:money_with_wings: ${escape(note.message)}`, note.action) };
    case 'budget_warning':
      return { text: note.text, blocks: noteBlocks(`:chart_with_upwards_trend: ${escape(note.text)}`) };
    case 'schedule':
      return { text: note.text, blocks: noteBlocks(`:alarm_clock: ${escape(note.text)}`) };
    case 'schedule_paused': {
      // The approvers are mentioned for real (a ping): they are the ones who can act on it.
      const text = schedulePausedText(note, slackMention, escape);
      return { text, blocks: noteBlocks(`:double_vertical_bar: ${text}`) };
    }
    case 'taken_over':
      return { text: TAKEN_OVER_NOTE, blocks: noteBlocks(`:arrows_counterclockwise: ${TAKEN_OVER_NOTE}`) };
    case 'restarting':
      return { text: RESTARTING_NOTE, blocks: noteBlocks(`:arrows_counterclockwise: ${RESTARTING_NOTE}`) };
    case 'dropped_at_stop':
      return { text: DROPPED_AT_STOP_NOTE, blocks: noteBlocks(DROPPED_AT_STOP_NOTE) };
    case 'files': {
      const text = filesNoteText(note.problems);
      return { text, blocks: noteBlocks(`:paperclip: ${escape(text)}`) };
    }
    default: {
      const never: never = note;
      throw new Error(`unknown note ${JSON.stringify(never)}`);
    }
  }
}

/** `<@U…>` for a Slack user id; anything else is shown as escaped text, never as markup. */
function slackMention(id: string): string {
  return /^[A-Z0-9]+$/i.test(id) ? `<@${id}>` : escape(id);
}

const NOTE_ACTION_LABEL: Record<NoteAction['kind'], string> = {
  retry: 'Retry',
  continue: 'Continue',
  continue_past_limit: 'Continue (admins)',
};

/** A note's text, with its button (Retry, Continue: both retry the session's last request). */
function noteBlocks(text: string, action?: NoteAction): SlackBlock[] {
  const blocks: SlackBlock[] = [{ type: 'section', text: mrkdwn(text) }];
  if (action) {
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: plain(NOTE_ACTION_LABEL[action.kind]),
          action_id: RETRY_ACTION,
          value: encodeValue({ session: action.sessionId }),
        },
      ],
    });
  }
  return blocks;
}

export function footerBlock(text: string): SlackBlock {
  return { type: 'context', elements: [mrkdwn(text)] };
}
