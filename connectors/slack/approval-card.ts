// What an approval card shows of the call it approves ("see what you approve"):
// every character, inline in code blocks when the call is short; otherwise its start and its
// end, and a "Show all" button that opens all of it in a modal (approval-modal.ts), where the
// approve buttons are.
//
// The idea to hold: a button that approves must never cover text nobody could see. What is
// shown, flagged and offered is the shared rule's (shared/approval-view.ts): hidden characters
// revealed, long blank runs counted, misleading words and hosts named in a warning, no "always"
// for a flagged call. This file says how much a Slack card holds (`slackCardHoldsAll`, also
// what the click handler checks a card's click against) and draws it within Slack's limits:
// the inline text is capped well under the 3,000-character section limit, and a glimpse of
// each part fits one section. A call too long for even the modal cannot be approved from
// Slack: Deny stays.
import type { ToolCardState } from '../shared/tool-card.js';
import { argumentsLength } from '../shared/call-arguments.js';
import { approvalView, approvesInFullView, type ApprovalView, type ShownPart } from '../shared/approval-view.js';
import { escapeSlackText } from '../shared/markdown-format.js';
import { glimpse } from '../shared/visible-text.js';
import { encodeValue, SHOW_ALL_ACTION } from './actions.js';
import { fitsInModal, MODAL_CAPACITY_WORDS } from './approval-modal.js';
import { codeBlock, context, LIMITS, plain, type SlackBlock } from './block-kit.js';
import type { CardPrompt } from '../shared/thread-surface.js';
import { thousands } from '../../src/text/thousands.js';

/**
 * Inline means every part, as rendered code blocks, within this many characters together and
 * at most `INLINE_LINES` lines: enough for any command a person reads at a glance, short of a
 * card that Slack folds behind "Show more".
 */
const INLINE_LIMIT = 2_500;
const INLINE_LINES = 40;
/** A glimpse of a long part: this much of its start and of its end (escaped, at most 2,000 characters). */
const GLIMPSE_HEAD = 240;
const GLIMPSE_TAIL = 160;

export interface ApprovalText {
  /** The blocks that show the call's arguments (and, when needed, the Show all button). */
  blocks: SlackBlock[];
  /** The shared view of the call: what is flagged, which choices may be offered. */
  view: ApprovalView;
  /** Every character is on the card itself. */
  inFull: boolean;
  /** One modal holds every character, so the call may be approved from Slack (in the modal, when not `inFull`). */
  approvable: boolean;
}

/** Each part as the card's inline text: its label and its shown text in a code block. */
function inlineParts(parts: readonly ShownPart[]): string[] {
  return parts.map((part) => `*${escapeSlackText(part.label)}*\n${codeBlock(part.text)}`);
}

/** Whether a Slack card holds every character of the call shown as `view` (nothing summarised, within the inline bounds). */
export function slackCardHoldsAll(view: ApprovalView): boolean {
  if (view.lossy) return false;
  const inline = inlineParts(view.card);
  const lines = view.card.reduce((sum, part) => sum + part.text.split('\n').length, 0);
  return inline.reduce((sum, text) => sum + text.length, 0) <= INLINE_LIMIT && lines <= INLINE_LINES;
}

/**
 * What the card shows of `card.fullArguments`, or undefined when the card has none (a call
 * that asks no approval). `prompt`: the card's prompt, when one waits, so the card says where
 * it can be approved.
 */
export function approvalText(card: ToolCardState, prompt: CardPrompt | undefined): ApprovalText | undefined {
  const parts = card.fullArguments;
  if (!parts) return undefined;
  const pending = prompt?.item.state === 'pending';
  const view = approvalView(parts, card.command);
  const blocks: SlackBlock[] = view.warnings.map((warning) => context(`:warning: ${escapeSlackText(warning)}`));
  const inFull = slackCardHoldsAll(view);
  let approvable = true;
  if (inFull) {
    for (const text of inlineParts(view.card)) blocks.push(codeSection(text));
  } else {
    for (const part of view.card) blocks.push(codeSection(glimpsed(part)));
    approvable = fitsInModal({ name: card.name, parts });
    const decideInModal = pending && prompt !== undefined && approvable && approvesInFullView(prompt.item, view, false);
    blocks.push(context(showAllNote(approvable, pending, decideInModal, argumentsLength(parts))));
    blocks.push({
      type: 'actions',
      block_id: 'show_all',
      elements: [
        {
          type: 'button',
          text: plain(decideInModal ? 'Show all to decide' : 'Show all'),
          action_id: SHOW_ALL_ACTION,
          value: encodeValue({ call: card.toolCallId }),
          ...(decideInModal ? { style: 'primary' } : {}),
        },
      ],
    });
  }
  return { blocks, view, inFull, approvable };
}

/** A part's label and, when it is long, its start and end with how much lies between. */
function glimpsed(part: ShownPart): string {
  const label = `*${escapeSlackText(part.label)}* · ${count(part.length)}`;
  const seen = glimpse(part.text, GLIMPSE_HEAD, GLIMPSE_TAIL);
  if (!seen) return `${label}\n${codeBlock(part.text)}`;
  return `${label}, its start and end shown\n${codeBlock(seen.head)}\n_… ${count(seen.omitted)} not shown here …_\n${codeBlock(seen.tail)}`;
}

function showAllNote(approvable: boolean, pending: boolean, decideInModal: boolean, length: number): string {
  if (approvable && decideInModal)
    return ':mag: Not all of it fits on this card: *Show all to decide* opens every character, with the approve buttons under it.';
  if (approvable) return ':mag: *Show all* opens every character.';
  const size = `This call is ${count(length)}: more than a Slack window can show (${MODAL_CAPACITY_WORDS})`;
  return pending
    ? `:no_entry: ${size}, so it cannot be approved from Slack. Deny it, or reply in the thread to ask for something smaller. *Show all* opens as much as fits.`
    : `:no_entry: ${size}. *Show all* opens as much as fits.`;
}

/** A section whose text we built to fit (code blocks are never cut: a cut would hide characters). */
function codeSection(text: string): SlackBlock {
  if (text.length > LIMITS.sectionText) throw new RangeError(`approval card section of ${text.length} characters`);
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

function count(characters: number): string {
  return `${thousands(characters)} character${characters === 1 ? '' : 's'}`;
}
