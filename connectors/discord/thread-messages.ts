// What the bot posts in a Discord thread, in Discord's words and markup: a card per tool call
// (content + button rows, edited in place), the notes that end a turn (with Retry or
// Continue), the decision words. The presenter says what to show (shared/thread-surface.ts);
// this file says it within Discord's limits: 2,000 characters of content, 5 buttons a row,
// 5 rows, 80 characters a label, 100 a custom id (custom-ids.ts).
//
// See what you approve (DESIGN.md §8b): a call's arguments are on the card in full, in code
// blocks with hidden characters revealed (visible-text.ts), when they fit in the message;
// otherwise in full in an attached text file (`fullArgumentsFile`) that is posted before the
// card shows its buttons. A part that holds ``` cannot sit in a code block without changing
// what is drawn, so it always goes to the file too.
import { displayNote, formatDuration, phaseIcon, phaseLabel, restartNote, truncateForDisplay, type ToolCardState } from '../shared/index.js';
import type { CardPrompt, NoteAction, ThreadNote } from '../shared/thread-surface.js';
import { alwaysLabel, decisionText, DROPPED_AT_STOP_NOTE, RESTARTING_NOTE, TAKEN_OVER_NOTE } from '../shared/card-words.js';
import { invisibleWarning, revealInvisible } from '../shared/visible-text.js';
import { promptCustomId, retryCustomId } from './custom-ids.js';
import { MESSAGE_LIMIT, type ApiActionRow, type ApiButton } from './outbound.js';

const PREVIEW_LIMIT = 500;
const LABEL_MAX = 80;
const ROW_SIZE = 5;
const MAX_ROWS = 5;

export interface CardMessage {
  content: string;
  components: ApiActionRow[];
}

export interface ArgumentsFile {
  name: string;
  text: string;
}

/** The call's arguments shown inline, or undefined when they go to a file (or there are none). */
function inlineArguments(card: ToolCardState): { text: string } | undefined {
  const parts = card.fullArguments;
  if (!parts) return undefined;
  const shown = parts.map((part) => ({ part, visible: revealInvisible(part.text) }));
  if (shown.some(({ visible }) => visible.text.includes('```'))) return undefined;
  const hidden = [...new Set(shown.flatMap(({ visible }) => visible.hidden))];
  const lines = shown.map(({ part, visible }) => `**${part.label}**\n\`\`\`\n${visible.text}\n\`\`\``);
  if (hidden.length > 0) lines.unshift(`⚠️ ${invisibleWarning(hidden)}`);
  return { text: lines.join('\n') };
}

/**
 * The full arguments as a text file, when the card cannot hold them: every character, hidden
 * ones revealed as ⟨U+…⟩ and listed at the top. Undefined when the card holds them itself.
 */
export function fullArgumentsFile(card: ToolCardState, prompt?: CardPrompt): ArgumentsFile | undefined {
  const parts = card.fullArguments;
  if (!parts) return undefined;
  const inline = inlineArguments(card);
  if (inline && cardContent(card, prompt, inline.text).length <= MESSAGE_LIMIT) return undefined;
  const shown = parts.map((part) => ({ part, visible: revealInvisible(part.text) }));
  const hidden = [...new Set(shown.flatMap(({ visible }) => visible.hidden))];
  const header = [`${card.name} — every character of the call's arguments`, ...(hidden.length > 0 ? [invisibleWarning(hidden)] : [])];
  const body = shown.map(({ part, visible }) => `===== ${part.label} (${part.text.length} characters) =====\n${visible.text}`);
  return { name: `${safeName(card.name)}-${safeName(card.toolCallId)}-arguments.txt`, text: `${[...header, '', ...body].join('\n')}\n` };
}

/** A tool call's card: its text and, while a prompt waits, its buttons. */
export function cardMessage(card: ToolCardState, prompt?: CardPrompt): CardMessage {
  const inline = inlineArguments(card);
  let content = inline ? cardContent(card, prompt, inline.text) : undefined;
  if (!content || content.length > MESSAGE_LIMIT) {
    content = cardContent(card, prompt, card.fullArguments ? '📎 The call is too long for this card: every character of it is in the attached file above. Read it before you decide.' : undefined);
  }
  const pending = prompt?.item.state === 'pending';
  return { content: fit(content), components: pending && prompt ? promptRows(card, prompt) : [] };
}

function cardContent(card: ToolCardState, prompt: CardPrompt | undefined, argumentsText: string | undefined): string {
  const lines: string[] = [];
  const summary = argumentsText || !card.argsSummary ? '' : ` \`${revealInvisible(card.argsSummary).text.replace(/`/g, "'")}\``;
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



function promptRows(card: ToolCardState, prompt: CardPrompt): ApiActionRow[] {
  const { item } = prompt;
  const buttons: ApiButton[] = [];
  const button = (label: string, choice: string, style: ApiButton['style'] = 2): void => {
    const index = item.choices.indexOf(choice);
    const customId = promptCustomId(item.id, choice, index < 0 ? 0 : index);
    if (customId) buttons.push({ type: 2, style, label: label.slice(0, LABEL_MAX) || '…', custom_id: customId });
  };
  // Every character is visible (on the card or in the attached file), so every choice the
  // item offers may be offered; "always allow this command" only when the command is on the
  // card itself with nothing hidden, as in Slack.
  const commandInFull =
    card.command !== undefined && inlineArguments(card) !== undefined && fullArgumentsFile(card, prompt) === undefined && revealInvisible(card.command).hidden.length === 0;
  switch (item.kind) {
    case 'approval':
      button('Approve', 'once', 3);
      if (item.choices.includes('always_tool')) button(alwaysLabel(card.name, 'me', prompt.grantScope, LABEL_MAX), 'always_tool');
      if (item.choices.includes('always_tool_all')) button(alwaysLabel(card.name, 'everyone', prompt.grantScope, LABEL_MAX), 'always_tool_all');
      if (commandInFull && item.choices.includes('always_command')) button(alwaysLabel('this command', 'me', prompt.grantScope, LABEL_MAX), 'always_command');
      if (commandInFull && item.choices.includes('always_command_all')) button(alwaysLabel('this command', 'everyone', prompt.grantScope, LABEL_MAX), 'always_command_all');
      button('Deny', 'deny', 4);
      break;
    case 'question':
      for (const option of item.choices.slice(0, ROW_SIZE * MAX_ROWS)) button(option, option, 1);
      break;
    case 'plan':
      button('Approve plan', 'approve', 3);
      button('Reject', 'reject', 4);
      break;
    case 'directory':
      button('Grant access', 'grant', 3);
      button('Deny', 'deny', 4);
      break;
  }
  return rows(buttons);
}

function rows(buttons: ApiButton[]): ApiActionRow[] {
  const result: ApiActionRow[] = [];
  for (let i = 0; i < buttons.length && result.length < MAX_ROWS; i += ROW_SIZE) result.push({ type: 1, components: buttons.slice(i, i + ROW_SIZE) });
  return result;
}

const NOTE_ACTION_LABEL: Record<NoteAction['kind'], string> = { retry: 'Retry', continue: 'Continue' };

/** A note that ends a turn, in Discord's words, with its Retry / Continue button. */
export function noteMessage(note: ThreadNote): CardMessage {
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
      return { content: `⌛ I used the ${note.iterations} model calls allowed for one request. Continue?`, components: noteButton(note.action) };
    case 'taken_over':
      return { content: `🔄 ${TAKEN_OVER_NOTE}`, components: [] };
    case 'restarting':
      return { content: `🔄 ${RESTARTING_NOTE}`, components: [] };
    case 'dropped_at_stop':
      return { content: DROPPED_AT_STOP_NOTE, components: [] };
    default: {
      const never: never = note;
      throw new Error(`unknown note ${JSON.stringify(never)}`);
    }
  }
}

function noteButton(action: NoteAction): ApiActionRow[] {
  const customId = retryCustomId(action.sessionId);
  return customId ? [{ type: 1, components: [{ type: 2, style: 1, label: NOTE_ACTION_LABEL[action.kind], custom_id: customId }] }] : [];
}

function fit(text: string): string {
  return text.length <= MESSAGE_LIMIT ? text : `${text.slice(0, MESSAGE_LIMIT - 1)}…`;
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40) || 'call';
}
