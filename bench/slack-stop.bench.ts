// The Slack stop suite: how soon a stop reaches the thread, for the two ways a person stops the
// bot: a 🛑 reaction on the thread, and Slack's own Stop button on the thread's agent session
// (`agent_session_stopped`, which takes the 🛑 path plus a claim of its event id). The whole bot
// runs as in the end-to-end tests (test/slack/slack-harness.ts): the real Bolt app in HTTP
// mode, the real core and the real OpenAI SDK, FakeSlack and FakeOpenAI. Each trial is a new
// thread, busy in one of three ways: an answer that streams a few tokens and stalls (the
// headline figure: the signed event leaving for the bot → FakeSlack receiving the
// chat.stopStream that closes that answer, its partial text kept), a running shell command,
// or a card waiting for approval (→ the "Stopped by" note). The two kinds of stop alternate
// on one bot, so both see the same machine. It reports only, never judges.
import { PROMPT_ACTION } from '../connectors/slack/actions.js';
import { SLACK_IDS } from '../test/fakes/slack-payloads.js';
import type { SlackCall } from '../test/fakes/slack-server.js';
import { waitFor } from '../test/support/engine-kit.js';
import { bootSlackBot, type SlackBot } from '../test/slack/slack-harness.js';
import { median, percentile } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const TRIALS = 100;
/** The tool and approval scenarios: fewer, each trial is a shell command or a card. */
const OTHER_TRIALS = 40;
const WARM_UP = 4;

type StopKind = 'reaction' | 'button';
/** What the turn is doing when the stop lands. */
type Scenario = 'stream' | 'tool' | 'approval';

const stoppedNote = (call: SlackCall) => JSON.stringify(call.args.blocks ?? []).includes('Stopped by');

/**
 * One thread, busy as `scenario` says, then one stop: milliseconds from the event leaving to
 * FakeSlack receiving what shows the stop (a stream: its chat.stopStream; a running tool or a
 * pending approval: the "Stopped by" note).
 */
async function oneStop(bot: SlackBot, scenario: Scenario, kind: StopKind, trial: number): Promise<number> {
  const { slack, llm } = bot;
  let shown: Promise<number>;
  let root: string;
  if (scenario === 'stream') {
    llm.replyStallAfter(4, { text: `Partial answer number ${trial}, and then the model goes quiet` });
    root = await bot.mention(`stall ${kind} ${trial}`);
    const started = await slack.waitForCall('chat.startStream', (call) => call.args.thread_ts === root, 10_000);
    const ts = String((started.answer as { ts?: unknown }).ts);
    shown = slack.waitForCall('chat.stopStream', (call) => call.args.ts === ts, 10_000).then(() => performance.now());
  } else {
    llm.replyToolCalls([
      scenario === 'tool'
        ? { name: 'run_shell', arguments: { command: 'sleep 60' } }
        : { name: 'write_file', arguments: { path: `f${trial}.txt`, content: 'x' } },
    ]);
    root = await bot.mention(`${scenario} ${kind} ${trial}`);
    // The card shows the call running, or its buttons.
    const busy = scenario === 'tool' ? 'Running' : PROMPT_ACTION;
    await waitFor(
      () =>
        slack
          .thread(SLACK_IDS.channelId, root)
          .some((m) => m.user === SLACK_IDS.botUserId && JSON.stringify(m.blocks ?? []).includes(busy)),
      10_000,
    );
    shown = slack
      .waitForCall('chat.postMessage', (call) => call.args.thread_ts === root && stoppedNote(call), 10_000)
      .then(() => performance.now());
  }
  const sent = performance.now();
  if (kind === 'reaction') await bot.react(root, 'octagonal_sign');
  else await bot.stopButton(root);
  const ms = (await shown) - sent;
  await bot.idle();
  await waitFor(
    () => slack.thread(SLACK_IDS.channelId, root).some((m) => JSON.stringify(m.blocks ?? []).includes('Stopped by')),
    10_000,
  );
  return ms;
}

/** `trials` stops of each kind, interleaved on one bot (after a short warm-up). */
async function stops(
  env: Record<string, string>,
  scenarios: Scenario[],
  trials: number,
): Promise<Map<string, number[]>> {
  // Many threads from one person in a short time: lift the per-person turn rate for the bench.
  const bot = await bootSlackBot({ env: { TURNS_PER_USER_PER_MINUTE: '1000', MAX_LIVE_SESSIONS: '1000', ...env } });
  const times = new Map<string, number[]>();
  try {
    for (const scenario of scenarios) {
      for (let i = 0; i < WARM_UP; i++) await oneStop(bot, scenario, i % 2 === 0 ? 'reaction' : 'button', -i - 1);
      for (let i = 0; i < trials; i++) {
        // Alternate which goes first, so neither always runs right after the other's clean-up.
        const order: StopKind[] = i % 2 === 0 ? ['reaction', 'button'] : ['button', 'reaction'];
        for (const kind of order) {
          const key = `${scenario}:${kind}`;
          times.set(key, [...(times.get(key) ?? []), await oneStop(bot, scenario, kind, i)]);
        }
      }
    }
  } finally {
    await bot.stop();
  }
  return times;
}

export const slackStopSuite: BenchSuite = {
  name: 'slack-stop',
  async run(): Promise<BenchRow[]> {
    const streamed = await stops({}, ['stream'], TRIALS);
    const approval = await stops({}, ['approval'], OTHER_TRIALS);
    const tool = await stops({ PERMISSION_MODE: 'auto', SHELL_SANDBOX: 'off' }, ['tool'], OTHER_TRIALS);
    const all = new Map([...streamed, ...approval, ...tool]);
    const of = (scenario: Scenario, kind: StopKind) => all.get(`${scenario}:${kind}`) ?? [];
    const note = `signed event sent → chat.stopStream at FakeSlack, a stalled stream; ${TRIALS} trials each, interleaved on one bot`;
    const p99 = (scenario: Scenario, kind: StopKind) => percentile(of(scenario, kind), 99).toFixed(1);
    const others = `a running tool (sleep 60, no sandbox) 🛑 ${p99('tool', 'reaction')} / button ${p99('tool', 'button')} ms; a pending approval 🛑 ${p99('approval', 'reaction')} / button ${p99('approval', 'button')} ms (event → the "Stopped by" note; p99 of ${OTHER_TRIALS} each)`;
    return [
      {
        key: 'slack.stop_reaction_ms_p50',
        value: median(of('stream', 'reaction')),
        unit: 'ms',
        note: `🛑 reaction on the thread: ${note}`,
      },
      { key: 'slack.stop_reaction_ms_p99', value: percentile(of('stream', 'reaction'), 99), unit: 'ms', note: 'same' },
      {
        key: 'slack.native_stop_ms_p50',
        value: median(of('stream', 'button')),
        unit: 'ms',
        note: `Slack's Stop button (agent_session_stopped): ${note}`,
      },
      {
        key: 'slack.native_stop_ms_p99',
        value: percentile(of('stream', 'button'), 99),
        unit: 'ms',
        note: `same; goal: ≤ the 🛑 figure + 5 ms. Also: ${others}`,
      },
      {
        key: 'slack.native_stop_tool_ms_p99',
        value: percentile(of('tool', 'button'), 99),
        unit: 'ms',
        note: `Stop button on a running tool → the "Stopped by" note (🛑: ${p99('tool', 'reaction')} ms)`,
      },
      {
        key: 'slack.native_stop_approval_ms_p99',
        value: percentile(of('approval', 'button'), 99),
        unit: 'ms',
        note: `Stop button on a pending approval → the "Stopped by" note (🛑: ${p99('approval', 'reaction')} ms)`,
      },
    ];
  },
};
