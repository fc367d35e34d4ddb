// What the page draws for a tool card and a note, decided on the server: the page gets plain
// data (texts, argument parts, buttons with the choice each one sends) and puts every string
// in with textContent. Words and choices are the other platforms' (card-words.ts, tool-card.ts),
// so a card reads the same in Slack, Discord and here.
//
// See what you approve (DESIGN.md §8b): a web page has no message limit, so every character of
// a call an approval covers is on the card, hidden characters revealed (⟨U+202E⟩) with a
// warning; "Always allow this command" is offered only when the command holds nothing hidden,
// as in Slack.
import { z } from 'zod';
import { alwaysLabel, decisionText, DROPPED_AT_STOP_NOTE, RESTARTING_NOTE, TAKEN_OVER_NOTE } from '../shared/card-words.js';
import { displayNote, formatDuration, phaseIcon, phaseLabel, restartNote } from '../shared/tool-card.js';
import type { CardPrompt, CardView, NoteAction, ThreadNote } from '../shared/thread-surface.js';
import { truncateForDisplay } from '../shared/truncate.js';
import { invisibleWarning, revealInvisible } from '../shared/visible-text.js';

/** A result preview longer than this is cut (the model got the whole result; the card is a glimpse). */
const RESULT_PREVIEW_LIMIT = 1_000;

const ButtonSchema = z.object({ label: z.string(), choice: z.string(), style: z.enum(['primary', 'danger', 'default']) });
export type CardButton = z.infer<typeof ButtonSchema>;

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
  /** Every character the approval covers. */
  parts: z.array(z.object({ label: z.string(), text: z.string() })),
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

export function cardModel(view: CardView, nameOf: NameOf): CardModel {
  const { state, prompt } = view;
  const shown = (state.fullArguments ?? []).map((part) => ({ label: part.label, visible: revealInvisible(part.text) }));
  const hidden = [...new Set(shown.flatMap(({ visible }) => visible.hidden))];
  const notes: string[] = [];
  if (hidden.length > 0) notes.push(`⚠️ ${invisibleWarning(hidden)}`);
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
    summary: shown.length > 0 ? '' : revealInvisible(state.argsSummary).text,
    status: status.join(' · '),
    notes,
    ...(prompt?.question ? { question: prompt.question } : {}),
    ...(prompt?.plan && shown.length === 0 ? { plan: prompt.plan } : {}),
    parts: shown.map(({ label, visible }) => ({ label, text: visible.text })),
    ...(finished && state.resultPreview ? { result: truncateForDisplay(state.resultPreview, RESULT_PREVIEW_LIMIT) } : {}),
    ...(pending && prompt ? { itemId: prompt.item.id } : {}),
    buttons: pending && prompt ? promptButtons(view, prompt) : [],
  };
}

/** The buttons of a waiting prompt: exactly the choices the inbox item offers, in the other platforms' words. */
function promptButtons(view: CardView, prompt: CardPrompt): CardButton[] {
  const { item } = prompt;
  const { state } = view;
  const buttons: CardButton[] = [];
  const offer = (label: string, choice: string, style: CardButton['style'] = 'default'): void => {
    if (item.choices.includes(choice)) buttons.push({ label, choice, style });
  };
  const commandInFull = state.command !== undefined && revealInvisible(state.command).hidden.length === 0;
  switch (item.kind) {
    case 'approval':
      offer('Approve', 'once', 'primary');
      offer(alwaysLabel(state.name, 'me', prompt.grantScope, 200), 'always_tool');
      offer(alwaysLabel(state.name, 'everyone', prompt.grantScope, 200), 'always_tool_all');
      if (commandInFull) offer(alwaysLabel('this command', 'me', prompt.grantScope, 200), 'always_command');
      if (commandInFull) offer(alwaysLabel('this command', 'everyone', prompt.grantScope, 200), 'always_command_all');
      offer('Deny', 'deny', 'danger');
      break;
    case 'question':
      for (const option of item.choices) buttons.push({ label: option, choice: option, style: 'default' });
      break;
    case 'plan':
      offer('Approve plan', 'approve', 'primary');
      offer('Reject', 'reject', 'danger');
      break;
    case 'directory':
      offer('Grant access', 'grant', 'primary');
      offer('Deny', 'deny', 'danger');
      break;
  }
  return buttons;
}

const NOTE_ACTION_LABEL: Record<NoteAction['kind'], string> = { retry: 'Retry', continue: 'Continue' };

/** A note's words and its button, if it has one. */
export function noteModel(note: ThreadNote, nameOf: NameOf): { text: string; action?: { kind: NoteAction['kind']; label: string } } {
  switch (note.kind) {
    case 'tool_calls_limited':
      return {
        text: `⚠️ The model asked for ${note.requested} tool calls at once; only the first ${note.allowed} run (MAX_TOOL_CALLS_PER_RESPONSE). It was told to send fewer.`,
      };
    case 'failed':
      return { text: `⚠️ ${note.message}`, action: { kind: note.action.kind, label: NOTE_ACTION_LABEL[note.action.kind] } };
    case 'stopped':
      return { text: note.by ? `🛑 Stopped by @${nameOf(note.by)}.` : '🛑 Stopped.' };
    case 'step_limit':
      return { text: `⌛ I used the ${note.iterations} model calls allowed for one request. Continue?`, action: { kind: note.action.kind, label: NOTE_ACTION_LABEL[note.action.kind] } };
    case 'taken_over':
      return { text: `🔄 ${TAKEN_OVER_NOTE}` };
    case 'restarting':
      return { text: `🔄 ${RESTARTING_NOTE}` };
    case 'dropped_at_stop':
      return { text: DROPPED_AT_STOP_NOTE };
    default: {
      const never: never = note;
      throw new Error(`unknown note ${JSON.stringify(never)}`);
    }
  }
}
