// The "Show all" modal: every character of a tool call's arguments, for an approver whose
// card could only show a glimpse. It only shows; Approve and Deny stay on the card.
//
// Limits (docs.slack.dev modal view): at most 100 blocks, a title of 24 characters, and each
// section 3,000 characters, so one modal holds about 290,000 characters of plain text (fewer
// when `&`, `<` and `>` need escaping). A call longer than that is not split over further
// pages: the modal shows what fits and says how much it leaves out, and the card offers no
// Approve for it (approval-card.ts). A model writes such a payload rarely, and approving
// something nobody could read in Slack is the failure this file exists to prevent.
import { argumentsLength, type CallText } from '../shared/call-arguments.js';
import { escapeSlackText } from '../shared/markdown-format.js';
import { invisibleWarning, revealInvisible } from '../shared/visible-text.js';
import { codeBlock, context, LIMITS, plain, section, splitForCode, type PlainText, type SlackBlock } from './block-kit.js';

export const FULL_TEXT_CALLBACK = 'agent_full_text';

/** In sentences: about how much plain text one modal holds. */
export const MODAL_CAPACITY_WORDS = 'about 290,000 characters';

export interface FullTextModal {
  type: 'modal';
  callback_id: string;
  title: PlainText;
  close: PlainText;
  blocks: SlackBlock[];
}

export interface FullTextView {
  view: FullTextModal;
  /** Characters (after revealing hidden ones) that did not fit; 0 when the modal holds them all. */
  notShown: number;
}

/** Blocks kept back for the closing lines (what is not shown; where to decide). */
const CLOSING_BLOCKS = 2;

/**
 * The modal for `call`: a line naming the call, the hidden-character warning if any, then
 * each part under its label, split into as many code blocks as it needs, in order.
 */
export function fullTextView(call: CallText): FullTextView {
  const parts = call.parts.map((part) => ({ label: part.label, length: part.text.length, ...revealInvisible(part.text) }));
  const hidden = [...new Set(parts.flatMap((part) => part.hidden))];
  const blocks: SlackBlock[] = [
    section(`*${escapeSlackText(call.name)}*: every character of this call (${count(argumentsLength(call.parts))}), as the tool would receive it.`),
  ];
  if (hidden.length > 0) blocks.push(context(`:warning: ${escapeSlackText(invisibleWarning(hidden))}`));
  const room = LIMITS.modalBlocks - CLOSING_BLOCKS;
  let notShown = 0;
  for (const part of parts) {
    // A label needs at least one block of its text after it.
    if (notShown > 0 || blocks.length + 2 > room) {
      notShown += part.text.length;
      continue;
    }
    blocks.push(section(`*${escapeSlackText(part.label)}* · ${count(part.length)}`));
    const pieces = splitForCode(part.text, LIMITS.sectionText, room - blocks.length);
    if (pieces.length === 0) pieces.push('');
    for (const piece of pieces) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: codeBlock(piece) } });
    notShown += part.text.length - pieces.reduce((sum, piece) => sum + piece.length, 0);
  }
  if (notShown > 0) {
    blocks.push(
      context(
        `:no_entry: The last ${count(notShown)} are not shown: a Slack window holds ${MODAL_CAPACITY_WORDS}. ` +
          'This call cannot be approved from Slack: deny it, or reply in the thread to ask for something smaller.',
      ),
    );
  }
  blocks.push(context('Approve or deny on the card in the thread. This window only shows.'));
  return {
    view: { type: 'modal', callback_id: FULL_TEXT_CALLBACK, title: plain('Full text of the call', LIMITS.viewTitle), close: plain('Close', LIMITS.viewTitle), blocks },
    notShown,
  };
}

/** Whether one modal holds every character of `call` (else it cannot be approved from Slack). */
export function fitsInModal(call: CallText): boolean {
  // Every character costs at least one: a text longer than all the room there is cannot fit.
  if (argumentsLength(call.parts) > LIMITS.modalBlocks * LIMITS.sectionText) return false;
  return fullTextView(call).notShown === 0;
}

function count(characters: number): string {
  return `${characters.toLocaleString('en-US')} character${characters === 1 ? '' : 's'}`;
}
