// `/usage`: what it is asked for, and how an answer reads.
import { describe, expect, it } from 'vitest';
import type { SpendReader, SpendTotals, UsageReport, UsageScope } from '../../src/ops/spend-report.js';
import { usageScopes, usageTarget, usageText } from '../../connectors/shared/usage-command.js';

const KEY = { platform: 'slack', workspace: 'T1', channel: 'C1', thread: '1.0' };
const markup = { bold: (text: string) => `*${text}*`, escape: (text: string) => text.replace(/</g, '&lt;') };

function totals(usd: number, tokens: number, unpricedModels: string[] = [], estimatedCalls = 0): SpendTotals {
  return {
    usd,
    tokens: { input: tokens, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    calls: 2,
    estimatedCalls,
    unpricedModels,
  };
}

/** A ledger of our own interface, answering per scope kind; it records what it was asked. */
class TableReader implements SpendReader {
  readonly asked: UsageScope[] = [];
  constructor(private readonly rows: Partial<Record<UsageScope['kind'], Omit<UsageReport, 'scope'>>>) {}
  async usage(scope: UsageScope): Promise<UsageReport> {
    this.asked.push(scope);
    return { scope, ...(this.rows[scope.kind] ?? { today: totals(0, 0), month: totals(0, 0) }) };
  }
}

describe('/usage', () => {
  it('reads mentions on either platform, and user:/channel: ids; anything else is not understood', () => {
    expect(usageTarget([])).toEqual({ kind: 'self' });
    expect(usageTarget(['<@U123|ann>'])).toEqual({ kind: 'user', id: 'U123' });
    expect(usageTarget(['<@!4242>'])).toEqual({ kind: 'user', id: '4242' });
    expect(usageTarget(['<#C9|ops>'])).toEqual({ kind: 'channel', id: 'C9' });
    expect(usageTarget(['channel:C77'])).toEqual({ kind: 'channel', id: 'C77' });
    expect(usageTarget(['everyone', 'please'])).toEqual({ kind: 'invalid', words: 'everyone please' });
  });

  it("shows the person's, the channel's and the workspace's spend today and this month, the limit's reset, and the models with no price", async () => {
    const now = Date.UTC(2026, 11, 3, 21, 0);
    const reader = new TableReader({
      user: {
        today: totals(0.42, 12_300),
        month: totals(3.1, 98_000),
        limit: { setting: 'BUDGET_USER_DAILY', usd: 5, resetsAt: Date.UTC(2026, 11, 4) },
      },
      channel: { today: totals(1.5, 40_000, ['openai:my-local-model']), month: totals(12, 400_000) },
    });
    const text = await usageText(reader, usageScopes(KEY, 'U1', { kind: 'self' }), markup, now);
    expect(reader.asked).toEqual([
      { platform: 'slack', workspace: 'T1', kind: 'user', id: 'U1' },
      { platform: 'slack', workspace: 'T1', kind: 'channel', id: 'C1' },
      { platform: 'slack', workspace: 'T1', kind: 'workspace', id: 'T1' },
    ]);
    expect(text.split('\n')).toEqual([
      '*Spend* (today · this month)',
      '*You:* $0.42 (12k tokens, 2 calls) · $3.10 (98k tokens, 2 calls) — daily limit $5.00, resets in 3 h',
      '*This channel:* $1.50 (40k tokens, 2 calls) · $12.00 (400k tokens, 2 calls)',
      '*This workspace:* $0.00 (0 tokens, 2 calls) · $0.00 (0 tokens, 2 calls)',
      'No price known for openai:my-local-model: counted in tokens only (set MODEL_PRICES).',
    ]);
  });

  it('says how many calls were counted by estimate (their server reported no usage), and what that means', async () => {
    const reader = new TableReader({ user: { today: totals(0.01, 900, [], 1), month: totals(0.02, 1_900, [], 1) } });
    const text = await usageText(reader, usageScopes(KEY, 'U1', { kind: 'user', id: 'U1' }), markup);
    expect(text.split('\n')).toEqual([
      '*Spend* (today · this month)',
      '*<@U1>:* $0.01 (900 tokens, 2 calls, 1 estimated) · $0.02 (1.9k tokens, 2 calls, 1 estimated)',
      'Estimated: the model server reported no usage for those calls, so they count what the bot sent and what came back (about four characters a token).',
    ]);
  });

  it("an admin's target is one scope", () => {
    expect(usageScopes(KEY, 'U1', { kind: 'channel', id: 'C9' })).toEqual([
      { label: '<#C9>', scope: { platform: 'slack', workspace: 'T1', kind: 'channel', id: 'C9' } },
    ]);
  });
});
