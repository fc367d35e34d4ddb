// The answer to `/feedback` (admins only): the 👍 / 👎 on the bot's answers, overall, by model,
// and the latest reasons given with a 👎, in the platform's markup. A reason is a person's own
// words (already masked and capped by the feedback book): it is escaped for the platform and
// kept to one line, so it cannot mention anyone, link, or break the layout.
import type { FeedbackTotals } from '../../src/feedback/feedback-book.js';
import type { CommandMarkup } from './command-context.js';

/** The longest reason shown in the totals, in characters (the book keeps up to 500). */
const REASON_SHOWN = 200;

export function feedbackTotalsText(totals: FeedbackTotals, markup: Pick<CommandMarkup, 'bold' | 'escape'>): string {
  const { bold, escape } = markup;
  const votes = totals.up + totals.down;
  if (votes === 0) return 'No feedback on answers yet.';
  const lines = [
    `${bold('Feedback on answers:')} ${totals.up} 👍 · ${totals.down} 👎 (${sharePositive(totals.up, votes)} positive)`,
  ];
  if (totals.byModel.length > 0) {
    lines.push(bold('By model:'));
    for (const row of totals.byModel)
      lines.push(
        `• ${escape(row.model)}: ${row.up} 👍 · ${row.down} 👎 (${sharePositive(row.up, row.up + row.down)} positive)`,
      );
  }
  if (totals.reasons.length > 0) {
    lines.push(bold('Latest reasons given with 👎:'));
    for (const reason of totals.reasons)
      lines.push(
        `• ${new Date(reason.at).toISOString().slice(0, 16).replace('T', ' ')} UTC · ${escape(reason.model)}: “${escape(oneLine(reason.reason))}”`,
      );
  }
  return lines.join('\n');
}

function sharePositive(up: number, votes: number): string {
  return votes === 0 ? '0%' : `${Math.round((up / votes) * 100)}%`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length > REASON_SHOWN ? `${chars.slice(0, REASON_SHOWN - 1).join('')}…` : flat;
}
