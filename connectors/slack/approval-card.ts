// What an approval card shows of the call it approves (DESIGN.md §8b, "see what you approve"):
// every character, inline in code blocks when the call is short; otherwise its start and its
// end, and a "Show all" button that opens all of it in a modal (approval-modal.ts).
//
// The idea to hold: a button that approves must never cover text nobody could see.
//   - Hidden characters are revealed (⟨U+202E⟩) with a warning line, on the card and in the modal.
//   - "Always allow this command" remembers one exact string for good, so it is offered only
//     when that string is on the card in full, with nothing hidden in it.
//   - A call too long for even the modal cannot be approved from Slack: Deny stays.
// The card is one message within Slack's limits: the inline text is capped well under the
// 3,000-character section limit, and a glimpse of each part fits one section.
import type { ToolCardState } from '../shared/tool-card.js';
import { argumentsLength, type ArgumentPart } from '../shared/call-arguments.js';
import { escapeSlackText } from '../shared/markdown-format.js';
import { glimpse, invisibleWarning, revealInvisible } from '../shared/visible-text.js';
import { encodeValue, SHOW_ALL_ACTION } from './actions.js';
import { fitsInModal, MODAL_CAPACITY_WORDS } from './approval-modal.js';
import { codeBlock, context, LIMITS, plain, type SlackBlock } from './block-kit.js';

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
  /** Every character is on the card itself. */
  inFull: boolean;
  /** One modal holds every character, so the call may be approved from Slack. */
  approvable: boolean;
  /** The card may offer "Always allow this command": the command is on it in full, nothing hidden. */
  commandInFull: boolean;
}

/**
 * What the card shows of `card.fullArguments`, or undefined when the card has none (a call
 * that asks no approval). `pending`: the prompt still waits, so the card says whether it can
 * be approved here.
 */
export function approvalText(card: ToolCardState, pending: boolean): ApprovalText | undefined {
  const parts = card.fullArguments;
  if (!parts) return undefined;
  const shown = parts.map((part) => ({ part, visible: revealInvisible(part.text) }));
  const hidden = [...new Set(shown.flatMap(({ visible }) => visible.hidden))];
  const blocks: SlackBlock[] = [];
  if (hidden.length > 0) blocks.push(context(`:warning: ${escapeSlackText(invisibleWarning(hidden))}`));

  const inline = shown.map(({ part, visible }) => `*${escapeSlackText(part.label)}*\n${codeBlock(visible.text)}`);
  const lines = shown.reduce((sum, { visible }) => sum + visible.text.split('\n').length, 0);
  const inFull = inline.reduce((sum, text) => sum + text.length, 0) <= INLINE_LIMIT && lines <= INLINE_LINES;
  let approvable = true;
  if (inFull) {
    for (const text of inline) blocks.push(codeSection(text));
  } else {
    for (const { part, visible } of shown) blocks.push(codeSection(glimpsed(part, visible.text)));
    approvable = fitsInModal({ name: card.name, parts });
    blocks.push(context(showAllNote(approvable, pending, argumentsLength(parts))));
    blocks.push({
      type: 'actions',
      block_id: 'show_all',
      elements: [{ type: 'button', text: plain('Show all'), action_id: SHOW_ALL_ACTION, value: encodeValue({ call: card.toolCallId }) }],
    });
  }
  const command = card.command;
  const commandInFull =
    inFull && command !== undefined && parts.some((part) => part.text === command) && revealInvisible(command).hidden.length === 0;
  return { blocks, inFull, approvable, commandInFull };
}

/** A part's label and, when it is long, its start and end with how much lies between. */
function glimpsed(part: ArgumentPart, visible: string): string {
  const label = `*${escapeSlackText(part.label)}* · ${count(part.text.length)}`;
  const seen = glimpse(visible, GLIMPSE_HEAD, GLIMPSE_TAIL);
  if (!seen) return `${label}\n${codeBlock(visible)}`;
  return `${label}, its start and end shown\n${codeBlock(seen.head)}\n_… ${count(seen.omitted)} not shown here …_\n${codeBlock(seen.tail)}`;
}

function showAllNote(approvable: boolean, pending: boolean, length: number): string {
  if (approvable) return pending ? ':mag: Not all of it fits on this card: *Show all* opens every character. Read it before you decide.' : ':mag: *Show all* opens every character.';
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
  return `${characters.toLocaleString('en-US')} character${characters === 1 ? '' : 's'}`;
}
