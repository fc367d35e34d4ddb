// Block Kit for what the bot posts in a thread: a card per tool call (updated in place as
// it moves from proposed to done), the buttons of a prompt on that same card, and the
// notes that end a turn (stopped, failed with Retry, out of steps with Continue).
// Limits that bite here (Block Kit docs): 50 blocks a message, 3,000 characters of section
// text, 75 characters of button text.
import type { InboxItem } from '../../src/engine/index.js';
import { displayNote, escapeSlackText, formatDuration, phaseLabel, restartNote, truncateForDisplay, type ToolCardState } from '../shared/index.js';
import { encodeValue, promptActionId, RETRY_ACTION } from './actions.js';

export interface SlackBlock {
  type: string;
  [field: string]: unknown;
}

const SECTION_LIMIT = 3000;
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

function mrkdwn(text: string): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text: truncateForDisplay(text, SECTION_LIMIT) };
}

function plain(text: string): { type: 'plain_text'; text: string; emoji: true } {
  return { type: 'plain_text', text: text.length > 75 ? `${text.slice(0, 74)}…` : text, emoji: true };
}

/** Slack mrkdwn needs &, < and > escaped in text we did not write. */
export const escape = escapeSlackText;

function inlineCode(text: string): string {
  return `\`${escape(text).replace(/`/g, "'")}\``;
}

export function toolCardText(card: ToolCardState): string {
  const restart = restartNote(card);
  return `${phaseLabel(card.phase)}: ${card.name} ${card.argsSummary}${restart ? ` (${restart})` : ''}`.slice(0, 300);
}

export function toolCardBlocks(card: ToolCardState, prompt?: { item: InboxItem; question?: string; plan?: string }): SlackBlock[] {
  const headline = `${PHASE_ICON[card.phase]} *${escape(card.name)}*${card.argsSummary ? ` ${inlineCode(card.argsSummary)}` : ''}`;
  const blocks: SlackBlock[] = [{ type: 'section', text: mrkdwn(headline) }];
  if (card.phase === 'awaiting_approval' && card.approvalReason) blocks.push({ type: 'context', elements: [mrkdwn(`Why I ask: ${escape(card.approvalReason)}`)] });
  if (card.phase === 'awaiting_approval' && card.confinement) blocks.push({ type: 'context', elements: [mrkdwn(`Runs ${escape(card.confinement)}`)] });
  if (prompt?.question) {
    blocks.push({ type: 'section', text: mrkdwn(`*Question:* ${escape(prompt.question)}`) });
    if (prompt.item.state === 'pending') blocks.push({ type: 'context', elements: [mrkdwn('Pick an answer, or reply in this thread in your own words.')] });
  }
  if (prompt?.plan) blocks.push({ type: 'section', text: mrkdwn(`*Plan:*\n${escape(prompt.plan)}`) });
  if (prompt?.item.kind === 'directory' && prompt.item.state === 'pending') {
    blocks.push({ type: 'context', elements: [mrkdwn('Granting lets the file tools and the shell (inside its sandbox) read and write that folder for the rest of this thread.')] });
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
  if (prompt && prompt.item.state === 'pending') blocks.push(promptButtons(card, prompt.item));
  return blocks;
}

function decisionText(decision: { by: string; choice: string }): string {
  const words: Record<string, string> = {
    once: 'Approved',
    always_tool: 'Always allowed in this thread',
    always_command: 'This command always allowed',
    deny: 'Denied',
    approve: 'Plan approved',
    reject: 'Plan rejected',
    grant: 'Access granted',
    interrupted: 'Closed: the turn was stopped',
    replied: 'Declined: answered by a reply',
  };
  const what = words[decision.choice] ?? `Answered "${decision.choice}"`;
  return decision.by ? `${what} by <@${decision.by}>` : what;
}

function promptButtons(card: ToolCardState, item: InboxItem): SlackBlock {
  const button = (text: string, choice: string, style?: 'primary' | 'danger') => ({
    type: 'button',
    text: plain(text),
    action_id: promptActionId(choice),
    value: encodeValue({ item: item.id, choice }),
    ...(style ? { style } : {}),
  });
  const elements: unknown[] = [];
  switch (item.kind) {
    case 'approval':
      elements.push(button('Approve', 'once', 'primary'), button(`Always allow ${card.name} here`, 'always_tool'));
      if (item.choices.includes('always_command')) elements.push(button('Always allow this command', 'always_command'));
      elements.push(button('Deny', 'deny', 'danger'));
      break;
    case 'question':
      for (const option of item.choices.slice(0, 24)) elements.push(button(option, option));
      break;
    case 'plan':
      elements.push(button('Approve plan', 'approve', 'primary'), button('Reject', 'reject', 'danger'));
      break;
    case 'directory':
      elements.push(button('Grant access', 'grant', 'primary'), button('Deny', 'deny', 'danger'));
      break;
  }
  return { type: 'actions', block_id: `prompt:${item.id}`.slice(0, 255), elements };
}

export function noteBlocks(text: string, action?: { label: string; sessionId: string }): SlackBlock[] {
  const blocks: SlackBlock[] = [{ type: 'section', text: mrkdwn(text) }];
  if (action) {
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', text: plain(action.label), action_id: RETRY_ACTION, value: encodeValue({ session: action.sessionId }) }],
    });
  }
  return blocks;
}

export function footerBlock(text: string): SlackBlock {
  return { type: 'context', elements: [mrkdwn(text)] };
}
