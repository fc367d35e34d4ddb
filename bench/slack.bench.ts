// The Slack suite: what one streamed answer costs in Slack Web API calls, and how soon the
// user sees it. The whole bot runs as in the end-to-end tests (test/slack/slack-harness.ts):
// the real Bolt app in HTTP mode, the real core and the real OpenAI SDK, against FakeSlack with
// Slack's published rate tiers enforced and FakeOpenAI streaming a 2,000-token answer (one
// small content delta per SSE event, 1 ms apart, so the stream takes seconds as a real one
// does). A user mentions the bot; the suite counts every Web API call the bot made from that
// mention until the turn ended, and times the first token leaving the model server against the
// first text reaching Slack (chat.startStream, or chat.postMessage without native streaming).
// It reports only, never judges; a run that hits a 429 is reported, not failed.
import type { FakeReply, RecordedRequest, SseEvent } from '../test/fakes/http-fake.js';
import { answerEvents, FakeOpenAI } from '../test/fakes/openai-server.js';
import { SLACK_IDS } from '../test/fakes/slack-payloads.js';
import { FakeSlack, type SlackCall } from '../test/fakes/slack-server.js';
import { waitFor } from '../test/support/engine-kit.js';
import { bootSlackBot } from '../test/slack/slack-harness.js';
import { compactRows } from './slack-compact.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const TOKENS = 2_000;
const CHARS_PER_TOKEN = 4;
const DELAY_MS = 1;
const NATIVE_RUNS = 5;
const POST_RUNS = 3;
const STREAMING_METHODS = new Set(['chat.startStream', 'chat.appendStream', 'chat.stopStream']);

/** A plain answer of `tokens` four-character deltas, with a paragraph break now and then. */
function answerText(tokens: number): string {
  const sentence = 'The deploy finished and every check passed on the first try. ';
  let text = '';
  for (let i = 0; text.length < tokens * CHARS_PER_TOKEN; i++)
    text += i % 6 === 5 ? `${sentence.trim()}\n\n` : sentence;
  return text.slice(0, tokens * CHARS_PER_TOKEN);
}

interface Run {
  /** Every Web API call from the mention to the end of the turn. */
  calls: SlackCall[];
  firstVisibleMs: number;
  rateLimited: number;
}

/**
 * One mention and its answer, on a fresh bot and fresh fakes (fresh rate buckets, and a
 * connector that has not yet learned whether native streaming exists).
 */
async function oneAnswer(tokens: number, nativeStreaming: boolean): Promise<Run> {
  const slack = await new FakeSlack().start();
  slack.enforceRateTiers();
  const llm = await new FakeOpenAI().start();
  const bot = await bootSlackBot({ slack, llm });
  try {
    const text = answerText(tokens);
    let firstTokenAt = Number.NaN;
    llm.reply((request: RecordedRequest): FakeReply => {
      // The role-only opening event is dropped, so the first event written is the first
      // token, and it leaves as this function returns.
      const events: SseEvent[] = answerEvents(request, { text, chunkSize: CHARS_PER_TOKEN }).slice(1);
      firstTokenAt = Date.now();
      return { kind: 'sse', events, delayMs: DELAY_MS };
    });
    if (!nativeStreaming) slack.failNext('chat.startStream', 'unknown_method');
    const before = slack.calls.length;
    const root = await bot.mention('write the release notes');
    await waitFor(() => llm.requests.length === 1, 10_000);
    await bot.idle();
    await waitFor(() => slack.thread(SLACK_IDS.channelId, root).some((m) => m.user === SLACK_IDS.botUserId), 10_000);

    const calls = slack.calls.slice(before);
    const shown = slack
      .thread(SLACK_IDS.channelId, root)
      .filter((m) => m.user === SLACK_IDS.botUserId)
      .map((m) => m.text)
      .join('');
    if (shown.replace(/\s+/g, '').length < text.replace(/\s+/g, '').length * 0.95) {
      throw new Error(`slack bench: the thread shows ${shown.length} of ${text.length} characters`);
    }
    const firstVisible = calls.find(
      (call) =>
        call.status === 200 &&
        (call.answer as { ok?: boolean }).ok === true &&
        (call.method === 'chat.startStream' || call.method === 'chat.postMessage') &&
        hasText(call),
    );
    if (!firstVisible) throw new Error('slack bench: no text ever reached Slack');
    return {
      calls,
      firstVisibleMs: firstVisible.at - firstTokenAt,
      rateLimited: slack.calls.filter((call) => call.status === 429).length,
    };
  } finally {
    await bot.stop();
    await slack.stop();
    await llm.stop();
  }
}

function hasText(call: SlackCall): boolean {
  const text = call.method === 'chat.startStream' ? call.args.markdown_text : call.args.text;
  return typeof text === 'string' && text.length > 0;
}

function byMethod(calls: SlackCall[]): string {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
  return [...counts].map(([method, n]) => `${method} ${n}`).join(', ');
}

export const slackSuite: BenchSuite = {
  name: 'slack',
  async run(): Promise<BenchRow[]> {
    // Warm-up: a short answer through both paths, so the first measured run is not also the
    // one that compiles Bolt's and the SDK's code.
    await oneAnswer(100, true);
    await oneAnswer(100, false);

    const native: Run[] = [];
    for (let i = 0; i < NATIVE_RUNS; i++) native.push(await oneAnswer(TOKENS, true));
    const posted: Run[] = [];
    for (let i = 0; i < POST_RUNS; i++) posted.push(await oneAnswer(TOKENS, false));

    const total = (run: Run) => run.calls.length;
    const streaming = (run: Run) => run.calls.filter((call) => STREAMING_METHODS.has(call.method)).length;
    const middle = (runs: Run[], measure: (run: Run) => number) =>
      runs.find((run) => measure(run) === median(runs.map(measure))) ?? runs[0]!;
    const shape = `${TOKENS} tokens as ${TOKENS} deltas ${DELAY_MS} ms apart, rate tiers on`;
    return [
      {
        key: 'slack.stream_2000_tokens_api_calls',
        value: median(native.map(total)),
        unit: 'calls',
        note: `every Web API call from the mention to the end of the turn, native streaming; median of ${NATIVE_RUNS} (${byMethod(middle(native, total).calls)}); ${shape}`,
      },
      {
        key: 'slack.stream_2000_tokens_streaming_calls',
        value: median(native.map(streaming)),
        unit: 'calls',
        note: `chat.startStream + appendStream + stopStream alone, same runs`,
      },
      {
        key: 'slack.stream_2000_tokens_api_calls_post_mode',
        value: median(posted.map(total)),
        unit: 'calls',
        note: `same answer without native streaming (post + edit); median of ${POST_RUNS} (${byMethod(middle(posted, total).calls)})`,
      },
      {
        key: 'slack.first_visible_ms',
        value: median(native.map((run) => run.firstVisibleMs)),
        unit: 'ms',
        note: `first token leaving FakeOpenAI → first chat.startStream with text at FakeSlack; median of ${NATIVE_RUNS} (post mode: ${median(posted.map((run) => run.firstVisibleMs)).toFixed(1)} ms to chat.postMessage)`,
      },
      {
        key: 'slack.rate_limited_answers',
        value: [...native, ...posted].reduce((sum, run) => sum + run.rateLimited, 0),
        unit: 'answers',
        note: `429s FakeSlack answered over all ${NATIVE_RUNS + POST_RUNS} measured runs (Slack's published tiers enforced)`,
      },
      ...(await compactRows()),
    ];
  },
};
