// What the page draws for a tool card and a note, decided on the server: the page gets plain
// data (texts, argument parts, buttons with the choice each one sends) and puts every string
// in with textContent. Words and choices are the other platforms' (card-words.ts, tool-card.ts),
// so a card reads the same in Slack, Discord and here.
//
// See what you approve: what is shown, flagged and offered is the shared rule's
// (shared/approval-view.ts), as in Slack and Discord. A card holds as much as its argument box
// shows without scrolling (`webCardHoldsAll`); a longer call shows its start and end, and its
// approve buttons are in the expanded view "Show all to decide" opens (`fullViewModel`, asked
// of the server, which then takes an approval of that call from that view only).
import { z } from 'zod';
import type { InboxItem } from '../../src/engine/index.js';
import {
  approvalView,
  approvesInFullView,
  offeredChoices,
  type ApprovalView,
  type ShownPart,
} from '../shared/approval-view.js';
import type { CallText } from '../shared/call-arguments.js';
import {
  alwaysLabel,
  decisionText,
  DROPPED_AT_STOP_NOTE,
  filesNoteText,
  RESTARTING_NOTE,
  schedulePausedText,
  TAKEN_OVER_NOTE,
} from '../shared/card-words.js';
import { displayNote, formatDuration, phaseIcon, phaseLabel, restartNote } from '../shared/tool-card.js';
import type { CardPrompt, CardView, NoteAction, ThreadNote } from '../shared/thread-surface.js';
import { truncateForDisplay } from '../shared/truncate.js';
import { glimpse, revealInvisible } from '../shared/visible-text.js';
import { readableResult } from './result-view.js';
import { thousands } from '../../src/text/thousands.js';

/** A result preview longer than this is cut (the model got the whole result; the card is a glimpse). */
const RESULT_PREVIEW_LIMIT = 1_000;
/** What a card's argument box shows without scrolling (style.css: wrapped, 360 px high). */
const CARD_CHARACTERS = 1_500;
const CARD_LINES = 18;
/** A glimpse of a longer part: this much of its start and of its end. */
const GLIMPSE_HEAD = 600;
const GLIMPSE_TAIL = 300;

const ButtonSchema = z.object({
  label: z.string(),
  choice: z.string(),
  style: z.enum(['primary', 'danger', 'default']),
});
type CardButton = z.infer<typeof ButtonSchema>;

export const CardModelSchema = z.object({
  name: z.string(),
  /** The call's phase (tool-card.ts), for the card's colour. */
  phase: z.string().optional(),
  icon: z.string(),
  /** The arguments on one line, when they are not shown in full below. */
  summary: z.string(),
  /** "Awaiting approval · 1.2 s · Approved by @you". */
  status: z.string(),
  /** Why the policy asks, where the call runs, a warning about hidden characters. */
  notes: z.array(z.string()),
  question: z.string().optional(),
  plan: z.string().optional(),
  /**
   * What the approval covers: every character, or (`omitted` set) the start in `text` and the
   * end in `tail` of a part too long for the card, with how many characters lie between.
   */
  parts: z.array(
    z.object({ label: z.string(), text: z.string(), omitted: z.number().optional(), tail: z.string().optional() }),
  ),
  /** The card does not hold every character: its approve buttons are in the view Show all opens. */
  showAll: z.boolean().optional(),
  /** The result's start, readable (result-view.ts); the whole of it is asked for by the card's "Full result". */
  result: z.string().optional(),
  /** The inbox item the buttons answer, while it waits. */
  itemId: z.string().optional(),
  buttons: z.array(ButtonSchema),
});
export type CardModel = z.infer<typeof CardModelSchema>;

/** How a person's id reads on the page: `<@local>` → "@you". */
export type NameOf = (userId: string) => string;

/** Platform mentions (`<@id>`, as the shared words write them) as names. */
export function withNames(text: string, nameOf: NameOf): string {
  return text.replace(/<@([A-Za-z0-9._:@-]+)>/g, (_whole, id: string) => `@${nameOf(id)}`);
}

/** Whether the page's card holds every character of the call shown as `view`: the click handler checks a card's click against it too. */
export function webCardHoldsAll(view: ApprovalView): boolean {
  if (view.lossy) return false;
  const text = view.card.map((part) => part.text).join('\n');
  return text.length <= CARD_CHARACTERS && text.split('\n').length <= CARD_LINES;
}

export function cardModel(view: CardView, nameOf: NameOf): CardModel {
  const { state, prompt } = view;
  const shown = state.fullArguments ? approvalView(state.fullArguments, state.command) : undefined;
  const holdsAll = shown ? webCardHoldsAll(shown) : true;
  const notes: string[] = [];
  for (const warning of shown?.warnings ?? []) notes.push(`⚠️ ${warning}`);
  if (state.phase === 'awaiting_approval' && state.approvalReason) notes.push(`Why I ask: ${state.approvalReason}`);
  if (state.phase === 'awaiting_approval' && state.confinement) notes.push(`Runs ${state.confinement}`);
  const display = displayNote(state.display);
  if (display) notes.push(`ℹ️ ${display}`);

  const restart = restartNote(state);
  const status = state.restart === 'not_rerun' && restart ? [`⚠️ ${restart}`] : [phaseLabel(state.phase)];
  if (state.durationMs !== undefined && state.restart !== 'not_rerun') status.push(formatDuration(state.durationMs));
  if (state.restart === 'rerun' && restart) status.push(restart);
  if (state.decision) status.push(withNames(decisionText(state.decision), nameOf));

  const finished = ['done', 'failed', 'denied', 'interrupted'].includes(state.phase);
  const pending = prompt?.item.state === 'pending';
  return {
    name: state.name,
    phase: state.phase,
    icon: phaseIcon(state.phase),
    summary: shown ? '' : revealInvisible(state.argsSummary).text,
    status: status.join(' · '),
    notes,
    ...(prompt?.question ? { question: prompt.question } : {}),
    ...(prompt?.plan && !shown ? { plan: prompt.plan } : {}),
    parts: (shown?.card ?? []).map((part) => (holdsAll ? { label: part.label, text: part.text } : glimpsed(part))),
    ...(shown && !holdsAll ? { showAll: true } : {}),
    ...(finished && state.resultPreview
      ? { result: readableResult(truncateForDisplay(state.resultPreview, RESULT_PREVIEW_LIMIT)) }
      : {}),
    ...(pending && prompt ? { itemId: prompt.item.id } : {}),
    buttons: pending && prompt ? promptButtons(view, prompt, shown, holdsAll) : [],
  };
}

function glimpsed(part: ShownPart): CardModel['parts'][number] {
  const seen = glimpse(part.text, GLIMPSE_HEAD, GLIMPSE_TAIL);
  return seen
    ? {
        label: `${part.label} · ${thousands(part.length)} characters`,
        text: seen.head,
        omitted: seen.omitted,
        tail: seen.tail,
      }
    : { label: part.label, text: part.text };
}

/** What the expanded view of a call shows: every character, the warnings, and the buttons the full view offers. */
export interface FullViewModel {
  name: string;
  notes: string[];
  parts: { label: string; text: string }[];
  itemId: string;
  buttons: CardButton[];
}

export function fullViewModel(call: CallText, item: InboxItem, grantScope?: CardPrompt['grantScope']): FullViewModel {
  const shown = approvalView(call.parts, item.command);
  const buttons =
    item.state === 'pending'
      ? choiceButtons(call.name, item, grantScope, offeredChoices(item, shown, { cardHoldsAll: false, fullView: true }))
      : [];
  return {
    name: call.name,
    notes: shown.warnings.map((warning) => `⚠️ ${warning}`),
    parts: shown.full.map((part) => ({
      label: `${part.label} · ${thousands(part.length)} characters`,
      text: part.text,
    })),
    itemId: item.id,
    buttons,
  };
}

/** The buttons of a waiting prompt: the choices the inbox item offers that the card may (approval-view.ts), in the other platforms' words. */
function promptButtons(
  view: CardView,
  prompt: CardPrompt,
  shown: ApprovalView | undefined,
  holdsAll: boolean,
): CardButton[] {
  const { item } = prompt;
  if (item.kind === 'question')
    return item.choices.map((option) => ({ label: option, choice: option, style: 'default' }));
  const offered = shown ? offeredChoices(item, shown, { cardHoldsAll: holdsAll, fullView: false }) : item.choices;
  const buttons = choiceButtons(view.state.name, item, prompt.grantScope, offered);
  // Its approve buttons are in the expanded view: the card says where.
  if (approvesInFullView(item, shown, holdsAll))
    buttons.unshift({ label: 'Show all to decide', choice: SHOW_ALL_CHOICE, style: 'primary' });
  return buttons;
}

/** The pseudo-choice of the card's Show all button: the page opens the expanded view instead of sending it. */
const SHOW_ALL_CHOICE = 'show_all';

function choiceButtons(
  name: string,
  item: InboxItem,
  scope: CardPrompt['grantScope'],
  offered: readonly string[],
): CardButton[] {
  const words: [string, string, CardButton['style']][] = [
    ['once', 'Approve', 'primary'],
    ['always_tool', alwaysLabel(name, 'me', scope, 200), 'default'],
    ['always_tool_all', alwaysLabel(name, 'everyone', scope, 200), 'default'],
    ['always_command', alwaysLabel('this command', 'me', scope, 200), 'default'],
    ['always_command_all', alwaysLabel('this command', 'everyone', scope, 200), 'default'],
    ['approve', 'Approve plan', 'primary'],
    ['grant', 'Grant access', 'primary'],
    ['deny', 'Deny', 'danger'],
    ['reject', 'Reject', 'danger'],
  ];
  return words
    .filter(([choice]) => item.choices.includes(choice) && offered.includes(choice))
    .map(([choice, label, style]) => ({ label, choice, style }));
}

const NOTE_ACTION_LABEL: Record<NoteAction['kind'], string> = {
  retry: 'Retry',
  continue: 'Continue',
  continue_past_limit: 'Continue (admins)',
};

/** A note's words and its button, if it has one. */
export function noteModel(
  note: ThreadNote,
  nameOf: NameOf,
): { text: string; action?: { kind: NoteAction['kind']; label: string } } {
  switch (note.kind) {
    case 'tool_calls_limited':
      return {
        text: `⚠️ The model asked for ${note.requested} tool calls at once; only the first ${note.allowed} run (MAX_TOOL_CALLS_PER_RESPONSE). It was told to send fewer.`,
      };
    case 'failed':
      return {
        text: `⚠️ ${note.message}`,
        action: { kind: note.action.kind, label: NOTE_ACTION_LABEL[note.action.kind] },
      };
    case 'stopped':
      return { text: note.by ? `🛑 Stopped by @${nameOf(note.by)}.` : '🛑 Stopped.' };
    case 'step_limit':
      return {
        text: `⌛ I used the ${note.iterations} model calls allowed for one request. Continue?`,
        action: { kind: note.action.kind, label: NOTE_ACTION_LABEL[note.action.kind] },
      };
    case 'budget_paused':
      return {
        text: `💸 ${note.message}`,
        action: { kind: note.action.kind, label: NOTE_ACTION_LABEL[note.action.kind] },
      };
    case 'budget_warning':
      return { text: `📈 ${note.text}` };
    case 'schedule':
      return { text: `⏰ ${note.text}` };
    case 'schedule_paused':
      return {
        text: `⏸️ ${schedulePausedText(
          note,
          (id) => `@${nameOf(id)}`,
          (text) => text,
        )}`,
      };
    case 'taken_over':
      return { text: `🔄 ${TAKEN_OVER_NOTE}` };
    case 'restarting':
      return { text: `🔄 ${RESTARTING_NOTE}` };
    case 'dropped_at_stop':
      return { text: DROPPED_AT_STOP_NOTE };
    case 'files':
      return { text: `📎 ${filesNoteText(note.problems)}` };
    default: {
      const never: never = note;
      throw new Error(`unknown note ${JSON.stringify(never)}`);
    }
  }
}
