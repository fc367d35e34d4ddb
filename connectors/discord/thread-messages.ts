// What the bot posts in a Discord thread, in Discord's words and markup: a card per tool call
// (content + button rows, edited in place), the notes that end a turn (with Retry or
// Continue), the decision words. The presenter says what to show (shared/thread-surface.ts);
// this file says it within Discord's limits: 2,000 characters of content, 5 buttons a row,
// 5 rows, 80 characters a label, 100 a custom id (custom-ids.ts).
//
// See what you approve: what is shown, flagged and offered is the shared rule's
// (shared/approval-view.ts). A call's arguments are on the card in full, in code blocks, when
// they fit its budget; otherwise in full in an attached text file (`fullArgumentsFile`) posted
// before the card, and the card's approve buttons are replaced by "Show all to decide", which
// answers privately (ephemeral) with every character and the approve buttons
// (`fullViewMessage`). A part that holds ``` cannot sit in a code block without changing what
// is drawn, so it always goes to the file too.
import {
  displayNote,
  formatDuration,
  phaseIcon,
  phaseLabel,
  restartNote,
  truncateForDisplay,
  type ToolCardState,
} from '../shared/index.js';
import type { InboxItem } from '../../src/engine/index.js';
import {
  approvalView,
  approvesInFullView,
  offeredChoices,
  type ApprovalView,
  type ShownPart,
} from '../shared/approval-view.js';
import type { CallText } from '../shared/call-arguments.js';
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
import { fullPromptCustomId, promptCustomId, retryCustomId, showAllCustomId } from './custom-ids.js';
import { MESSAGE_LIMIT, type ApiActionRow, type ApiButton } from './outbound.js';

const PREVIEW_LIMIT = 500;
const LABEL_MAX = 80;
const ROW_SIZE = 5;
const MAX_ROWS = 5;
/**
 * The most a card's argument text (warnings, labels and code blocks) may take: the rest of the
 * card (name, why I ask, where it runs, status) fits in the 2,000 characters beside it.
 */
const ARGUMENTS_BUDGET = 1_400;
/** The most the warnings take on a card whose arguments are in a file. */
const WARNINGS_BUDGET = 900;

export interface CardMessage {
  content: string;
  components: ApiActionRow[];
}

export interface ArgumentsFile {
  name: string;
  text: string;
}

/** The warnings of a view, one line each, as Discord shows them. */
function warningLines(view: ApprovalView): string[] {
  return view.warnings.map((warning) => `⚠️ ${warning}`);
}

/** The warnings within a share of a message (the file beside it repeats them in full). */
function cappedWarnings(view: ApprovalView): string[] {
  const lines = warningLines(view);
  return lines.length === 0 ? [] : [truncateForDisplay(lines.join('\n'), WARNINGS_BUDGET)];
}

function codeParts(parts: readonly ShownPart[]): string[] {
  return parts.map((part) => `**${part.label}**\n\`\`\`\n${part.text}\n\`\`\``);
}

/** Whether a Discord card holds every character of the call shown as `view`: the click handler checks a card's click against it too. */
export function discordCardHoldsAll(view: ApprovalView): boolean {
  if (view.lossy || view.card.some((part) => part.text.includes('```'))) return false;
  return [...warningLines(view), ...codeParts(view.card)].join('\n').length <= ARGUMENTS_BUDGET;
}

/** The call's arguments shown inline (with their warnings), or only the warnings when they go to a file; undefined for a call with none. */
function inlineArguments(card: ToolCardState): { text: string; view: ApprovalView; inFull: boolean } | undefined {
  const parts = card.fullArguments;
  if (!parts) return undefined;
  const view = approvalView(parts, card.command);
  const inFull = discordCardHoldsAll(view);
  const lines = inFull
    ? [...warningLines(view), ...codeParts(view.card)]
    : [
        ...cappedWarnings(view),
        '📎 The call is too long for this card: every character of it is in the attached file above. Read it before you decide.',
      ];
  return { text: lines.join('\n'), view, inFull };
}

/** Every character of a call as text: hidden ones revealed, blank runs counted, warnings at the top. */
function fullText(name: string, view: ApprovalView): string {
  const header = [`${name} — every character of the call's arguments`, ...view.warnings];
  const body = view.full.map((part) => `===== ${part.label} (${part.length} characters) =====\n${part.text}`);
  return `${[...header, '', ...body].join('\n')}\n`;
}

/**
 * The full arguments as a text file, when the card cannot hold them: every character, hidden
 * ones revealed as ⟨U+…⟩ and listed at the top. Undefined when the card holds them itself.
 */
export function fullArgumentsFile(card: ToolCardState): ArgumentsFile | undefined {
  const inline = inlineArguments(card);
  if (!inline || inline.inFull) return undefined;
  return { name: argumentsFileName(card.name, card.toolCallId), text: fullText(card.name, inline.view) };
}

function argumentsFileName(name: string, toolCallId: string): string {
  return `${safeName(name)}-${safeName(toolCallId)}-arguments.txt`;
}

/** A tool call's card: its text and, while a prompt waits, its buttons. */
export function cardMessage(card: ToolCardState, prompt?: CardPrompt): CardMessage {
  const inline = inlineArguments(card);
  const content = cardContent(card, prompt, inline?.text);
  const pending = prompt?.item.state === 'pending';
  return { content: fit(content), components: pending && prompt ? promptRows(card, prompt, inline) : [] };
}

/**
 * The private answer to "Show all to decide": every character of the call (in the message when
 * it fits, else in an attached file), its warnings, and the buttons the full view offers.
 */
export function fullViewMessage(
  call: CallText,
  item: InboxItem,
  grantScope?: CardPrompt['grantScope'],
): CardMessage & { files?: ArgumentsFile[] } {
  const view = approvalView(call.parts, item.command);
  const head = `🔍 **${call.name}**: every character of this call, as the tool would receive it.`;
  const inline = [head, ...warningLines(view), ...codeParts(view.full)].join('\n');
  const fits = inline.length <= MESSAGE_LIMIT && !view.full.some((part) => part.text.includes('```'));
  const buttons: ApiButton[] = [];
  if (item.state === 'pending') {
    const offered = new Set(offeredChoices(item, view, { cardHoldsAll: false, fullView: true }));
    for (const [choice, label, style] of decideWords(call.name, grantScope)) {
      const customId = fullPromptCustomId(item.id, choice);
      if (offered.has(choice) && item.choices.includes(choice) && customId)
        buttons.push({ type: 2, style, label: label.slice(0, LABEL_MAX), custom_id: customId });
    }
  }
  if (fits) return { content: inline, components: rows(buttons) };
  const content = [
    head,
    ...cappedWarnings(view),
    '📎 Every character is in the attached file. Read it before you decide.',
  ].join('\n');
  return {
    content: fit(content),
    components: rows(buttons),
    files: [{ name: argumentsFileName(call.name, item.toolCallId), text: fullText(call.name, view) }],
  };
}

/** Every approving or refusing choice's words and style, in the order buttons are shown. */
function decideWords(name: string, scope: CardPrompt['grantScope']): [string, string, ApiButton['style']][] {
  return [
    ['once', 'Approve', 3],
    ['always_tool', alwaysLabel(name, 'me', scope, LABEL_MAX), 2],
    ['always_tool_all', alwaysLabel(name, 'everyone', scope, LABEL_MAX), 2],
    ['always_command', alwaysLabel('this command', 'me', scope, LABEL_MAX), 2],
    ['always_command_all', alwaysLabel('this command', 'everyone', scope, LABEL_MAX), 2],
    ['approve', 'Approve plan', 3],
    ['grant', 'Grant access', 3],
    ['deny', 'Deny', 4],
    ['reject', 'Reject', 4],
  ];
}

function cardContent(card: ToolCardState, prompt: CardPrompt | undefined, argumentsText: string | undefined): string {
  const lines: string[] = [];
  const summary =
    argumentsText || !card.argsSummary ? '' : ` \`${revealInvisible(card.argsSummary).text.replace(/`/g, "'")}\``;
  lines.push(`${phaseIcon(card.phase)} **${card.name}**${summary}`);
  if (card.phase === 'awaiting_approval' && card.approvalReason) lines.push(`-# Why I ask: ${card.approvalReason}`);
  if (card.phase === 'awaiting_approval' && card.confinement) lines.push(`-# Runs ${card.confinement}`);
  if (prompt?.question) lines.push(`**Question:** ${prompt.question}`);
  if (prompt?.plan && !card.fullArguments) lines.push(`**Plan:**\n${truncateForDisplay(prompt.plan, PREVIEW_LIMIT)}`);
  if (argumentsText) lines.push(argumentsText);
  const restart = restartNote(card);
  const status = card.restart === 'not_rerun' && restart ? [`⚠️ ${restart}`] : [phaseLabel(card.phase)];
  if (card.durationMs !== undefined && card.restart !== 'not_rerun') status.push(formatDuration(card.durationMs));
  if (card.restart === 'rerun' && restart) status.push(restart);
  if (card.decision) status.push(decisionText(card.decision));
  lines.push(`-# ${status.join(' · ')}`);
  if (card.resultPreview && ['done', 'failed', 'denied', 'interrupted'].includes(card.phase)) {
    lines.push(`\`\`\`\n${truncateForDisplay(card.resultPreview, PREVIEW_LIMIT).replace(/```/g, "'''")}\n\`\`\``);
  }
  const note = displayNote(card.display);
  if (note) lines.push(`ℹ️ ${note}`);
  return lines.join('\n');
}

function promptRows(
  card: ToolCardState,
  prompt: CardPrompt,
  inline: ReturnType<typeof inlineArguments>,
): ApiActionRow[] {
  const { item } = prompt;
  const buttons: ApiButton[] = [];
  const button = (label: string, choice: string, style: ApiButton['style'] = 2): void => {
    const index = item.choices.indexOf(choice);
    const customId = promptCustomId(item.id, choice, index < 0 ? 0 : index);
    if (customId) buttons.push({ type: 2, style, label: label.slice(0, LABEL_MAX) || '…', custom_id: customId });
  };
  if (item.kind === 'question') {
    for (const option of item.choices.slice(0, ROW_SIZE * MAX_ROWS)) button(option, option, 1);
    return rows(buttons);
  }
  // What the shared rule lets a card offer (approval-view.ts); what it keeps for the full view
  // is reached through "Show all to decide".
  const offered = new Set(
    inline ? offeredChoices(item, inline.view, { cardHoldsAll: inline.inFull, fullView: false }) : item.choices,
  );
  const showAll =
    inline !== undefined && approvesInFullView(item, inline.view, inline.inFull) ? showAllCustomId(item.id) : undefined;
  if (showAll) buttons.push({ type: 2, style: 1, label: 'Show all to decide', custom_id: showAll });
  for (const [choice, label, style] of decideWords(card.name, prompt.grantScope)) {
    if (offered.has(choice) && item.choices.includes(choice)) button(label, choice, style);
  }
  return rows(buttons);
}

function rows(buttons: ApiButton[]): ApiActionRow[] {
  const result: ApiActionRow[] = [];
  for (let i = 0; i < buttons.length && result.length < MAX_ROWS; i += ROW_SIZE)
    result.push({ type: 1, components: buttons.slice(i, i + ROW_SIZE) });
  return result;
}

/** Discord user ids are snowflakes: digits. */
function isSnowflake(id: string): boolean {
  return /^\d{1,25}$/.test(id);
}

/** `<@id>` for a Discord user id; anything else as it is (allowed_mentions pings nobody unnamed anyway). */
function discordMention(id: string): string {
  return isSnowflake(id) ? `<@${id}>` : id;
}

const NOTE_ACTION_LABEL: Record<NoteAction['kind'], string> = {
  retry: 'Retry',
  continue: 'Continue',
  continue_past_limit: 'Continue (admins)',
};

/** A note that ends a turn, in Discord's words, with its Retry / Continue button. */
export function noteMessage(note: ThreadNote): CardMessage & { pingUsers?: string[] } {
  switch (note.kind) {
    case 'tool_calls_limited':
      return {
        content: `⚠️ The model asked for ${note.requested} tool calls at once; only the first ${note.allowed} run (MAX_TOOL_CALLS_PER_RESPONSE). It was told to send fewer.`,
        components: [],
      };
    case 'failed':
      return { content: fit(`⚠️ ${note.message}`), components: noteButton(note.action) };
    case 'stopped':
      return { content: note.by ? `🛑 Stopped by <@${note.by}>.` : '🛑 Stopped.', components: [] };
    case 'step_limit':
      return {
        content: `⌛ I used the ${note.iterations} model calls allowed for one request. Continue?`,
        components: noteButton(note.action),
      };
    case 'budget_paused':
      return { content: fit(`💸 ${note.message}`), components: noteButton(note.action) };
    case 'budget_warning':
      return { content: fit(`📈 ${note.text}`), components: [] };
    case 'schedule':
      return { content: fit(`⏰ ${note.text}`), components: [] };
    case 'schedule_paused':
      // The approvers are pinged (and only they: the outbound's allowed_mentions names them).
      return {
        content: fit(`⏸️ ${schedulePausedText(note, discordMention, (text) => text)}`),
        components: [],
        pingUsers: note.approvers.filter(isSnowflake),
      };
    case 'taken_over':
      return { content: `🔄 ${TAKEN_OVER_NOTE}`, components: [] };
    case 'restarting':
      return { content: `🔄 ${RESTARTING_NOTE}`, components: [] };
    case 'dropped_at_stop':
      return { content: DROPPED_AT_STOP_NOTE, components: [] };
    case 'files':
      return { content: fit(`📎 ${filesNoteText(note.problems)}`), components: [] };
    default: {
      const never: never = note;
      throw new Error(`unknown note ${JSON.stringify(never)}`);
    }
  }
}

function noteButton(action: NoteAction): ApiActionRow[] {
  const customId = retryCustomId(action.sessionId);
  return customId
    ? [{ type: 1, components: [{ type: 2, style: 1, label: NOTE_ACTION_LABEL[action.kind], custom_id: customId }] }]
    : [];
}

function fit(text: string): string {
  return text.length <= MESSAGE_LIMIT ? text : `${text.slice(0, MESSAGE_LIMIT - 1)}…`;
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40) || 'call';
}
