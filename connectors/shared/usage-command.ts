// `/usage`: what the person, this channel and the workspace spent today and this month, as a
// private answer. An admin may name a person or a channel (`/usage @someone`, `/usage #channel`,
// or `user:ID` / `channel:ID`); anyone else sees only their own figures beside the channel's and
// the workspace's, which every member of the channel may know (they share the limits).
import type { SpendReader, SpendTotals, UsageReport, UsageScope } from '../../src/ops/spend-report.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import { durationWords, formatUsd } from '../../src/ops/spend/budget-words.js';

export interface UsageMarkup {
  bold: (text: string) => string;
  escape: (text: string) => string;
}

export type UsageTarget =
  { kind: 'self' } | { kind: 'user' | 'channel'; id: string } | { kind: 'invalid'; words: string };

/** What `/usage` was asked for: nothing (oneself), a person or a channel, as a platform's mention or `user:ID` / `channel:ID`. */
export function usageTarget(args: readonly string[]): UsageTarget {
  const word = args.join(' ').trim();
  if (!word) return { kind: 'self' };
  // Slack: <@U123> or <@U123|name>, <#C123|name>; Discord: <@123>, <@!123>, <#123>.
  const mention = /^<([@#])!?([A-Za-z0-9]+)(?:\|[^>]*)?>$/.exec(word);
  if (mention) return { kind: mention[1] === '@' ? 'user' : 'channel', id: mention[2]! };
  const named = /^(user|channel):([A-Za-z0-9._-]+)$/i.exec(word);
  if (named) return { kind: named[1]!.toLowerCase() as 'user' | 'channel', id: named[2]! };
  return { kind: 'invalid', words: word };
}

/** The scopes a `/usage` answer shows for this target, in order. */
export function usageScopes(
  key: SessionKey,
  userId: string,
  target: Exclude<UsageTarget, { kind: 'invalid' }>,
): { label: string; scope: UsageScope }[] {
  const on = { platform: key.platform, workspace: key.workspace };
  switch (target.kind) {
    case 'self':
      return [
        { label: 'You', scope: { ...on, kind: 'user', id: userId } },
        { label: 'This channel', scope: { ...on, kind: 'channel', id: key.channel } },
        { label: 'This workspace', scope: { ...on, kind: 'workspace', id: key.workspace } },
      ];
    case 'user':
      return [{ label: `<@${target.id}>`, scope: { ...on, kind: 'user', id: target.id } }];
    case 'channel':
      return [{ label: `<#${target.id}>`, scope: { ...on, kind: 'channel', id: target.id } }];
  }
}

export async function usageText(
  reader: SpendReader,
  rows: { label: string; scope: UsageScope }[],
  markup: UsageMarkup,
  now = Date.now(),
): Promise<string> {
  const lines = [`${markup.bold('Spend')} (today · this month)`];
  const unpriced = new Set<string>();
  let estimated = false;
  for (const row of rows) {
    const report = await reader.usage(row.scope);
    for (const model of [...report.today.unpricedModels, ...report.month.unpricedModels]) unpriced.add(model);
    if (report.today.estimatedCalls > 0 || report.month.estimatedCalls > 0) estimated = true;
    lines.push(
      `${markup.bold(`${row.label}:`)} ${totalsText(report.today)} · ${totalsText(report.month)}${limitText(report, now)}`,
    );
  }
  if (estimated)
    lines.push(
      'Estimated: the model server reported no usage for those calls, so they count what the bot sent and what came back (about four characters a token).',
    );
  if (unpriced.size > 0)
    lines.push(
      `No price known for ${[...unpriced].map((model) => markup.escape(model)).join(', ')}: counted in tokens only (set MODEL_PRICES).`,
    );
  return lines.join('\n');
}

function totalsText(totals: SpendTotals): string {
  const tokens = totals.tokens.input + totals.tokens.cachedInput + totals.tokens.cacheWrite + totals.tokens.output;
  const estimated = totals.estimatedCalls > 0 ? `, ${totals.estimatedCalls} estimated` : '';
  return `${formatUsd(totals.usd)} (${compact(tokens)} tokens, ${totals.calls} call${totals.calls === 1 ? '' : 's'}${estimated})`;
}

function limitText(report: UsageReport, now: number): string {
  const limit = report.limit;
  if (!limit) return '';
  const amounts = [
    limit.usd !== undefined ? formatUsd(limit.usd) : '',
    limit.tokens !== undefined ? `${compact(limit.tokens)} tokens` : '',
  ]
    .filter(Boolean)
    .join(' or ');
  return ` — daily limit ${amounts}, resets in ${durationWords(limit.resetsAt - now)}`;
}

function compact(count: number): string {
  if (count >= 1_000_000) return `${(count / 1_000_000).toFixed(count >= 10_000_000 ? 0 : 1)}M`;
  if (count >= 1_000) return `${(count / 1_000).toFixed(count >= 10_000 ? 0 : 1)}k`;
  return String(count);
}
