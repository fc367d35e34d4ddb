// Part of the Slack suite (slack.bench.ts): what one working turn costs in Slack Web API calls
// with TOOL_DISPLAY=compact against the same turn with cards. The turn is about 2,000 tokens of
// text over four model calls with six tool calls between them (list_dir, which asks nobody),
// streamed one four-character delta per SSE event, 1 ms apart, against FakeSlack with Slack's
// published rate tiers enforced; the whole bot runs as in the end-to-end tests. Counted: every
// Web API call from the mention to the end of the turn. Reports only, never judges.
import { FakeOpenAI } from '../test/fakes/openai-server.js';
import { SLACK_IDS } from '../test/fakes/slack-payloads.js';
import { FakeSlack, type SlackCall } from '../test/fakes/slack-server.js';
import { waitFor } from '../test/support/engine-kit.js';
import { bootSlackBot } from '../test/slack/slack-harness.js';
import { median } from './stats.js';
import type { BenchRow } from './suite.js';

const RUNS = 3;
const CHARS_PER_TOKEN = 4;
/** Tokens of text before each round of calls and after the last: 2,000 in all. */
const ROUNDS = [
  { tokens: 600, calls: 2 },
  { tokens: 500, calls: 2 },
  { tokens: 500, calls: 2 },
  { tokens: 400, calls: 0 },
];

function prose(tokens: number, round: number): string {
  const sentence = `Round ${round}: the listing shows what the folder holds, nothing surprising so far. `;
  let text = '';
  for (let i = 0; text.length < tokens * CHARS_PER_TOKEN; i++)
    text += i % 5 === 4 ? `${sentence.trim()}\n\n` : sentence;
  return text.slice(0, tokens * CHARS_PER_TOKEN);
}

interface Turn {
  calls: SlackCall[];
  rateLimited: number;
}

async function oneTurn(display: 'cards' | 'compact'): Promise<Turn> {
  const slack = await new FakeSlack().start();
  slack.enforceRateTiers();
  const llm = await new FakeOpenAI().start();
  const bot = await bootSlackBot({ slack, llm, env: { TOOL_DISPLAY: display } });
  try {
    ROUNDS.forEach((round, r) => {
      const toolCalls = Array.from({ length: round.calls }, () => ({ name: 'list_dir', arguments: { path: '.' } }));
      llm.replyAnswer(
        { text: prose(round.tokens, r), chunkSize: CHARS_PER_TOKEN, ...(toolCalls.length > 0 ? { toolCalls } : {}) },
        { delayMs: 1 },
      );
    });
    const before = slack.calls.length;
    const root = await bot.mention('look through the folder and tell me what is there');
    await waitFor(() => llm.requests.length === ROUNDS.length, 60_000);
    await bot.idle();
    const calls = slack.calls.slice(before);
    const mine = slack.thread(SLACK_IDS.channelId, root).filter((m) => m.user === SLACK_IDS.botUserId);
    const cards = mine.filter((m) => JSON.stringify(m.blocks ?? []).includes('*list_dir*')).length;
    if ((display === 'cards') !== (cards === 6))
      throw new Error(`slack compact bench: ${display} mode posted ${cards} cards`);
    return { calls, rateLimited: calls.filter((call) => call.status === 429).length };
  } finally {
    await bot.stop();
    await slack.stop();
    await llm.stop();
  }
}

function byMethod(calls: SlackCall[]): string {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
  return [...counts].map(([method, n]) => `${method} ${n}`).join(', ');
}

/** The compact turn's count, and the same turn's with cards beside it. */
export async function compactRows(): Promise<BenchRow[]> {
  await oneTurn('compact'); // warm-up
  const compact: Turn[] = [];
  const cards: Turn[] = [];
  for (let i = 0; i < RUNS; i++) {
    compact.push(await oneTurn('compact'));
    cards.push(await oneTurn('cards'));
  }
  const total = (turn: Turn) => turn.calls.length;
  const middle = (turns: Turn[]) => turns.find((turn) => total(turn) === median(turns.map(total))) ?? turns[0]!;
  const limited = [...compact, ...cards].reduce((sum, turn) => sum + turn.rateLimited, 0);
  const shape = `2,000 tokens over 4 model calls, 6 list_dir calls, rate tiers on; median of ${RUNS}; ${limited} 429s in all`;
  return [
    {
      key: 'slack.compact_2000_tokens_6_tools_api_calls',
      value: median(compact.map(total)),
      unit: 'calls',
      note: `TOOL_DISPLAY=compact, every Web API call from the mention to the end of the turn (${byMethod(middle(compact).calls)}); cards mode: ${median(cards.map(total))}; ${shape}`,
    },
    {
      key: 'slack.cards_2000_tokens_6_tools_api_calls',
      value: median(cards.map(total)),
      unit: 'calls',
      note: `the same turn with TOOL_DISPLAY=cards (${byMethod(middle(cards).calls)})`,
    },
  ];
}
