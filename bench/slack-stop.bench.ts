// The Slack stop suite: how soon a stop reaches the thread, for the two ways a person stops the
// bot: a 🛑 reaction on the thread, and Slack's own Stop button on the thread's agent session
// (`agent_session_stopped`, which takes the 🛑 path plus a claim of its event id). The whole bot
// runs as in the end-to-end tests (test/slack/slack-harness.ts): the real Bolt app in HTTP
// mode, the real core and the real OpenAI SDK, FakeSlack and FakeOpenAI. Each trial is a new
// thread whose answer streams a few tokens and then stalls (the model never finishes); the
// figure is from the signed event leaving for the bot to FakeSlack receiving the
// chat.stopStream that closes that answer (its partial text kept). The two kinds of stop
// alternate on one bot, so both see the same machine. It reports only, never judges.
import { SLACK_IDS } from '../test/fakes/slack-payloads.js';
import { waitFor } from '../test/support/engine-kit.js';
import { bootSlackBot, type SlackBot } from '../test/slack/slack-harness.js';
import { median, percentile } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const TRIALS = 100;
const WARM_UP = 4;

type StopKind = 'reaction' | 'button';

/** One thread: its answer starts streaming and stalls, then one stop; milliseconds from the event to chat.stopStream. */
async function oneStop(bot: SlackBot, kind: StopKind, trial: number): Promise<number> {
  const { slack, llm } = bot;
  llm.replyStallAfter(4, { text: `Partial answer number ${trial}, and then the model goes quiet` });
  const root = await bot.mention(`stall ${kind} ${trial}`);
  const started = await slack.waitForCall('chat.startStream', (call) => call.args.thread_ts === root, 10_000);
  const ts = String((started.answer as { ts?: unknown }).ts);
  const stopped = slack.waitForCall('chat.stopStream', (call) => call.args.ts === ts, 10_000).then(() => performance.now());
  const sent = performance.now();
  if (kind === 'reaction') await bot.react(root, 'octagonal_sign');
  else await bot.stopButton(root, { streamingMessageTs: [ts] });
  const ms = (await stopped) - sent;
  await bot.idle();
  await waitFor(() => slack.thread(SLACK_IDS.channelId, root).some((m) => JSON.stringify(m.blocks ?? []).includes('Stopped by')), 10_000);
  return ms;
}

export const slackStopSuite: BenchSuite = {
  name: 'slack-stop',
  async run(): Promise<BenchRow[]> {
    // Many threads from one person in a short time: lift the per-person turn rate for the bench.
    const bot = await bootSlackBot({ env: { TURNS_PER_USER_PER_MINUTE: '1000', MAX_LIVE_SESSIONS: '1000' } });
    const times: Record<StopKind, number[]> = { reaction: [], button: [] };
    try {
      for (let i = 0; i < WARM_UP; i++) await oneStop(bot, i % 2 === 0 ? 'reaction' : 'button', -i - 1);
      for (let i = 0; i < TRIALS; i++) {
        // Alternate which goes first, so neither always runs right after the other's clean-up.
        const order: StopKind[] = i % 2 === 0 ? ['reaction', 'button'] : ['button', 'reaction'];
        for (const kind of order) times[kind].push(await oneStop(bot, kind, i));
      }
    } finally {
      await bot.stop();
    }
    const note = `signed event sent → chat.stopStream at FakeSlack, a stalled stream; ${TRIALS} trials each, interleaved on one bot`;
    return [
      { key: 'slack.stop_reaction_ms_p50', value: median(times.reaction), unit: 'ms', note: `🛑 reaction on the thread: ${note}` },
      { key: 'slack.stop_reaction_ms_p99', value: percentile(times.reaction, 99), unit: 'ms', note: 'same' },
      { key: 'slack.native_stop_ms_p50', value: median(times.button), unit: 'ms', note: `Slack's Stop button (agent_session_stopped): ${note}` },
      { key: 'slack.native_stop_ms_p99', value: percentile(times.button, 99), unit: 'ms', note: 'same; goal: ≤ the 🛑 figure + 5 ms' },
    ];
  },
};
