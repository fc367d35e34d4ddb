// What an approver reads of a call, and what they may answer from where: one rule for Slack,
// Discord and the playground ("see what you approve": a click approves exactly what was shown,
// every character of it). A platform draws it
// (a card, a Show all view) and says how much its card holds; this file decides the rest.
//
// The idea to hold: an approval covers exact text, so what is shown must not mislead and what
// is not shown must not be approved.
//   - Shown text reveals hidden characters (⟨U+202E⟩, visible-text.ts), names long runs of
//     blanks with their count (⟨1,200 spaces⟩, blank-runs.ts), and the card says in words what
//     reads as something else (mixed scripts, look-alike words, non-ASCII hosts with their
//     punycode: misleading-text.ts).
//   - A flagged call (misleading or hidden characters) is never offered "always", whose grant
//     would remember the disguise for good.
//   - When the card cannot hold every character, approving happens in the full view (Slack's
//     modal, Discord's private Show all message, the playground's expanded view), never on
//     the card. The click handler checks it on the server (`clickRefusal`): buttons a card
//     does not show can still be sent by a forged click.
import type { InboxItem } from '../../src/engine/index.js';
import type { ArgumentPart } from './call-arguments.js';
import { collapseBlankRuns } from './blank-runs.js';
import { misleadingFlags, type TextFlag } from './misleading-text.js';
import { invisibleWarning, revealInvisible } from './visible-text.js';

/** One part of a call as shown: its label, its length as the tool receives it, and the shown text. */
export interface ShownPart {
  label: string;
  /** Characters (UTF-16 code units) of the exact text. */
  length: number;
  text: string;
}

export interface ApprovalView {
  /** The parts as a card shows them: a long mixed run of blanks may be summarised (`lossy`). */
  card: ShownPart[];
  /** The parts as a full view shows them: every character, exactly (collapses are counts). */
  full: ShownPart[];
  /** Sentences the approver must read before deciding (the surface adds its warning icon). */
  warnings: string[];
  /** What reads as something else; any makes the call `flagged`. */
  flags: TextFlag[];
  /** No "always": the text misleads or hides characters. */
  flagged: boolean;
  /** The card's text summarises something: the card does not hold the call in full, whatever its size. */
  lossy: boolean;
  /** "Always allow this command" may be offered: the command is one part, shown exactly, nothing hidden or collapsed. */
  commandRememberable: boolean;
}

/** The view of a call's parts; `command` is what an "always allow this command" grant would remember. */
export function approvalView(parts: readonly ArgumentPart[], command?: string): ApprovalView {
  const hidden = new Set<string>();
  let collapsed = 0;
  let lossy = false;
  const show = (part: ArgumentPart, mode: 'card' | 'full'): ShownPart => {
    // ⟨ and ⟩ written in the text itself are shown as marks too: every ⟨…⟩ on a card is then
    // the card's own, and "⟨1,200 spaces⟩" typed by the model cannot pass for a count.
    const pieces = part.text.split(/([⟨⟩])/u).map((piece, i) => {
      if (i % 2 === 1) {
        hidden.add(piece === '⟨' ? 'U+27E8' : 'U+27E9');
        return piece === '⟨' ? '⟨U+27E8⟩' : '⟨U+27E9⟩';
      }
      const visible = revealInvisible(piece);
      for (const name of visible.hidden) hidden.add(name);
      const blanks = collapseBlankRuns(visible.text, mode);
      if (mode === 'full') collapsed += blanks.collapsed;
      lossy ||= blanks.lossy;
      return blanks.text;
    });
    return { label: part.label, length: part.text.length, text: pieces.join('') };
  };
  const full = parts.map((part) => show(part, 'full'));
  const card = parts.map((part) => show(part, 'card'));
  const flags = misleadingFlags(parts.map((part) => part.text));
  const warnings: string[] = [];
  if (hidden.size > 0) warnings.push(invisibleWarning([...hidden]));
  for (const flag of flags) warnings.push(`Check this: ${flag.message}.`);
  if (collapsed > 0) warnings.push('Long runs of blank characters are shown as their count, e.g. ⟨1,200 spaces⟩.');
  const flagged = flags.length > 0 || hidden.size > 0;
  const commandRememberable =
    command !== undefined &&
    !flagged &&
    parts.some((part) => part.text === command) &&
    collapseBlankRuns(command, 'full').collapsed === 0;
  return { card, full, warnings, flags, flagged, lossy, commandRememberable };
}

/** The refusal of an approval made on a card that does not hold the whole call. */
export const NOT_ALL_ON_CARD = 'Not all of this call is on its card. Open *Show all*, read it, and decide there.';

/** Choices that approve (run the call, grant the folder, approve the plan). */
const APPROVING: ReadonlySet<string> = new Set([
  'once',
  'always_tool',
  'always_command',
  'always_tool_all',
  'always_command_all',
  'approve',
  'grant',
]);
const ALWAYS: ReadonlySet<string> = new Set(['always_tool', 'always_command', 'always_tool_all', 'always_command_all']);
const ALWAYS_COMMAND: ReadonlySet<string> = new Set(['always_command', 'always_command_all']);

/** Where a choice is offered: on the card (which holds the call in full, or not), or in the full view. */
export interface ChoicePlace {
  /** The card shows every character (a platform's own measure, never true when `view.lossy`). */
  cardHoldsAll: boolean;
  /** The choice is offered (or was clicked) in the full view, not on the card. */
  fullView: boolean;
}

/**
 * Why `choice` may not be given from `place` for a call shown as `view`, or undefined when it
 * may. The same rule decides which buttons a surface draws and which clicks the server takes.
 */
export function choiceRefusal(choice: string, view: ApprovalView, place: ChoicePlace): string | undefined {
  if (!APPROVING.has(choice)) return undefined;
  if (ALWAYS.has(choice) && view.flagged) {
    return '"Always allow" is not offered for this call: its text may read as something else (see the warning on its card). Approve it once after reading it, or deny it.';
  }
  if (ALWAYS_COMMAND.has(choice) && !view.commandRememberable) {
    return '"Always allow this command" is not offered for this call: its command is not shown exactly as it would be remembered.';
  }
  if (!place.fullView && !place.cardHoldsAll) return NOT_ALL_ON_CARD;
  return undefined;
}

/** The item's choices that may be offered at `place`, in the item's order. */
export function offeredChoices(
  item: Pick<InboxItem, 'choices'>,
  view: ApprovalView | undefined,
  place: ChoicePlace,
): string[] {
  if (!view) return item.choices;
  return item.choices.filter((choice) => choiceRefusal(choice, view, place) === undefined);
}

/** Whether the item has something to approve that the card cannot offer: the card then offers Show all to decide. */
export function approvesInFullView(
  item: Pick<InboxItem, 'choices'>,
  view: ApprovalView | undefined,
  cardHoldsAll: boolean,
): boolean {
  if (!view || cardHoldsAll) return false;
  return offeredChoices(item, view, { cardHoldsAll, fullView: true }).some((choice) => APPROVING.has(choice));
}
