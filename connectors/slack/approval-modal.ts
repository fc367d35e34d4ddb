// The "Show all" modal: every character of a tool call's arguments, for an approver whose
// card could only show a glimpse. While the call waits, the approve buttons are here, under
// the text, and not on the card (shared/approval-view.ts): a click from this modal arrives
// from a view whose private metadata names the call, and the click handler takes an approval
// of a long call only from there.
//
// Limits (docs.slack.dev modal view): at most 100 blocks, a title of 24 characters, and each
// section 3,000 characters, so one modal holds about 290,000 characters of plain text (fewer
// when `&`, `<` and `>` need escaping). A call longer than that is not split over further
// pages: the modal shows what fits and says how much it leaves out, and the card offers no
// Approve for it (approval-card.ts). A model writes such a payload rarely, and approving
// something nobody could read in Slack is the failure this file exists to prevent.
import { z } from 'zod';
import type { InboxItem } from '../../src/engine/index.js';
import { approvalView, offeredChoices } from '../shared/approval-view.js';
import { argumentsLength, type CallText } from '../shared/call-arguments.js';
import { alwaysLabel } from '../shared/card-words.js';
import { escapeSlackText } from '../shared/markdown-format.js';
import type { CardPrompt } from '../shared/thread-surface.js';
import { encodeValue, promptActionId } from './actions.js';
import type { ButtonClick } from './inbound-events.js';
import {
  codeBlock,
  context,
  LIMITS,
  plain,
  section,
  splitForCode,
  type PlainText,
  type SlackBlock,
} from './block-kit.js';
import { thousands } from '../../src/text/thousands.js';

const FULL_TEXT_CALLBACK = 'agent_full_text';

/** In sentences: about how much plain text one modal holds. */
export const MODAL_CAPACITY_WORDS = 'about 290,000 characters';

interface FullTextModal {
  type: 'modal';
  callback_id: string;
  title: PlainText;
  close: PlainText;
  blocks: SlackBlock[];
  /** JSON of `FullTextMetadata`: Slack hands it back, unchanged, with every click in the modal. */
  private_metadata: string;
}

/** Which call the modal shows and which card it was opened from (for a private answer to a click in it). */
const FullTextMetadataSchema = z.object({
  call: z.string().min(1),
  channel: z.string().min(1),
  thread: z.string().min(1),
});
export type FullTextMetadata = z.infer<typeof FullTextMetadataSchema>;

/** The prompt a modal may decide: the call's pending item and where its grants apply. */
export interface ModalPrompt {
  item: InboxItem;
  grantScope?: CardPrompt['grantScope'];
}

export interface FullTextView {
  view: FullTextModal;
  /** Characters (after revealing hidden ones) that did not fit; 0 when the modal holds them all. */
  notShown: number;
}

/** Blocks kept back for the closing lines (what is not shown; where to decide). */
const CLOSING_BLOCKS = 2;

/**
 * The modal for `call`: a line naming the call, the warnings (hidden characters, misleading
 * words, counted blanks), then each part under its label, split into as many code blocks as
 * it needs, in order; and, for a pending `prompt` the modal holds in full, its buttons.
 */
export function fullTextView(call: CallText, where: FullTextMetadata, prompt?: ModalPrompt): FullTextView {
  const shown = approvalView(call.parts, prompt?.item.command);
  const blocks: SlackBlock[] = [
    section(
      `*${escapeSlackText(call.name)}*: every character of this call (${count(argumentsLength(call.parts))}), as the tool would receive it.`,
    ),
  ];
  for (const warning of shown.warnings) blocks.push(context(`:warning: ${escapeSlackText(warning)}`));
  const room = LIMITS.modalBlocks - CLOSING_BLOCKS;
  let notShown = 0;
  for (const part of shown.full) {
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
  const buttons = notShown === 0 && prompt?.item.state === 'pending' ? decideButtons(call.name, prompt, shown) : [];
  blocks.push(
    buttons.length > 0
      ? { type: 'actions', block_id: `decide:${prompt!.item.id}`.slice(0, 255), elements: buttons }
      : context('Approve or deny on the card in the thread. This window only shows.'),
  );
  return {
    view: {
      type: 'modal',
      callback_id: FULL_TEXT_CALLBACK,
      title: plain('Full text of the call', LIMITS.viewTitle),
      close: plain('Close', LIMITS.viewTitle),
      blocks,
      private_metadata: JSON.stringify(where),
    },
    notShown,
  };
}

/** The buttons a full view offers: every choice the shared rule allows there (approval-view.ts). */
function decideButtons(name: string, prompt: ModalPrompt, shown: ReturnType<typeof approvalView>): unknown[] {
  const { item, grantScope } = prompt;
  const offered = new Set(offeredChoices(item, shown, { cardHoldsAll: false, fullView: true }));
  const words: Record<string, [string, ('primary' | 'danger')?]> = {
    once: ['Approve', 'primary'],
    always_tool: [alwaysLabel(name, 'me', grantScope, LIMITS.buttonText)],
    always_tool_all: [alwaysLabel(name, 'everyone', grantScope, LIMITS.buttonText)],
    always_command: [alwaysLabel('this command', 'me', grantScope, LIMITS.buttonText)],
    always_command_all: [alwaysLabel('this command', 'everyone', grantScope, LIMITS.buttonText)],
    approve: ['Approve plan', 'primary'],
    grant: ['Grant access', 'primary'],
    deny: ['Deny', 'danger'],
    reject: ['Reject', 'danger'],
  };
  return item.choices
    .filter((choice) => offered.has(choice) && words[choice] !== undefined)
    .map((choice) => {
      const [text, style] = words[choice]!;
      return {
        type: 'button',
        text: plain(text),
        action_id: promptActionId(choice),
        value: encodeValue({ item: item.id, choice }),
        ...(style ? { style } : {}),
      };
    });
}

/** Whether one modal holds every character of `call` (else it cannot be approved from Slack). */
export function fitsInModal(call: CallText): boolean {
  // Every character costs at least one: a text longer than all the room there is cannot fit.
  if (argumentsLength(call.parts) > LIMITS.modalBlocks * LIMITS.sectionText) return false;
  return fullTextView(call, { call: 'x', channel: 'x', thread: 'x' }).notShown === 0;
}

function count(characters: number): string {
  return `${thousands(characters)} character${characters === 1 ? '' : 's'}`;
}

/**
 * The Show all modal a click was made in, from what Slack says of the click's container and
 * view (the metadata is the bot's own, handed back unchanged), or undefined for a card's click.
 */
export function fullTextModalOf(click: ButtonClick): FullTextMetadata | undefined {
  if (click.container?.type !== 'view' || click.view?.callback_id !== FULL_TEXT_CALLBACK) return undefined;
  try {
    const parsed = FullTextMetadataSchema.safeParse(JSON.parse(click.view.private_metadata ?? ''));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
