// The Discord suite: what one streamed answer costs in Discord REST calls, and how soon the
// user sees it. The whole bot runs as in the end-to-end tests (test/discord/discord-harness.ts):
// the real discord.js client against FakeDiscord, the real core and the real OpenAI SDK against
// FakeOpenAI streaming a 2,000-token answer (one small content delta per SSE event, 1 ms apart).
// The answer is posted and edited at the connector's real pace (one edit a second at most,
// answer-message.ts), rolling over before 2,000 characters. A person mentions the bot; the suite
// counts every REST call from that mention until the turn ended, and times the first token
// leaving the model server against the first answer text reaching Discord. It reports only.
import type { FakeReply, RecordedRequest, SseEvent } from '../test/fakes/http-fake.js';
import { answerEvents, FakeOpenAI } from '../test/fakes/openai-server.js';
import { FakeDiscord } from '../test/fakes/discord-server.js';
import type { RestCall } from '../test/fakes/discord-rest.js';
import { waitFor } from '../test/support/engine-kit.js';
import { botMessages, bootDiscordBot } from '../test/discord/discord-harness.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const TOKENS = 2_000;
const CHARS_PER_TOKEN = 4;
const DELAY_MS = 1;
const RUNS = 3;

function answerText(tokens: number): string {
  const sentence = 'The deploy finished and every check passed on the first try. ';
  let text = '';
  for (let i = 0; text.length < tokens * CHARS_PER_TOKEN; i++)
    text += i % 6 === 5 ? `${sentence.trim()}\n\n` : sentence;
  return text.slice(0, tokens * CHARS_PER_TOKEN);
}

interface Run {
  calls: RestCall[];
  firstVisibleMs: number;
  messages: number;
}

async function oneAnswer(tokens: number): Promise<Run> {
  const fake = await new FakeDiscord().start();
  const llm = await new FakeOpenAI().start();
  // 0: the connector's own edit interval, not the tests' shortened one.
  const bot = await bootDiscordBot({ fake, llm, answerIntervalMs: 0 });
  try {
    const text = answerText(tokens);
    let firstTokenAt = Number.NaN;
    llm.reply((request: RecordedRequest): FakeReply => {
      const events: SseEvent[] = answerEvents(request, { text, chunkSize: CHARS_PER_TOKEN }).slice(1);
      firstTokenAt = Date.now();
      return { kind: 'sse', events, delayMs: DELAY_MS };
    });
    const before = fake.rest.calls.length;
    const asked = bot.mention('write the release notes');
    await waitFor(() => llm.requests.length === 1, 10_000);
    await waitFor(() => botMessages(bot, asked.id).length > 0, 10_000);
    await bot.idle();
    const calls = fake.rest.calls.slice(before);
    const shown = botMessages(bot, asked.id)
      .map((m) => m.content)
      .join('');
    if (shown.replace(/\s+/g, '').length < text.replace(/\s+/g, '').length * 0.95)
      throw new Error(`discord bench: the thread shows ${shown.length} of ${text.length} characters`);
    const firstVisible = calls.find(
      (call) =>
        call.route === 'POST /channels/:channel/messages' && call.status === 200 && call.params.channel === asked.id,
    );
    if (!firstVisible) throw new Error('discord bench: no text ever reached Discord');
    return { calls, firstVisibleMs: firstVisible.at - firstTokenAt, messages: botMessages(bot, asked.id).length };
  } finally {
    await bot.stop();
    await fake.stop();
    await llm.stop();
  }
}

function byRoute(calls: RestCall[]): string {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.route, (counts.get(call.route) ?? 0) + 1);
  return [...counts].map(([route, n]) => `${route} ${n}`).join(', ');
}

export const discordSuite: BenchSuite = {
  name: 'discord',
  async run(): Promise<BenchRow[]> {
    await oneAnswer(100); // warm-up
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await oneAnswer(TOKENS));
    const total = (run: Run) => run.calls.length;
    const middle = runs.find((run) => total(run) === median(runs.map(total))) ?? runs[0]!;
    return [
      {
        key: 'discord.stream_2000_tokens_api_calls',
        value: median(runs.map(total)),
        unit: 'calls',
        note: `every REST call from the mention to the end of the turn, post + edit at most once a second, ${middle.messages} messages; median of ${RUNS} (${byRoute(middle.calls)}); ${TOKENS} tokens as ${TOKENS} deltas ${DELAY_MS} ms apart`,
      },
      {
        key: 'discord.first_visible_ms',
        value: median(runs.map((run) => run.firstVisibleMs)),
        unit: 'ms',
        note: `first token leaving FakeOpenAI → first answer message posted at FakeDiscord; median of ${RUNS}`,
      },
    ];
  },
};
