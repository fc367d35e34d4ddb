// The engine suite: what the owned agent loop costs and how fast it stops.
//   (a) overhead per model↔tool iteration, against a bare hand-written loop over the same
//       zero-latency provider: the price of events, persistence hooks, permission checks
//       and the stop races, when neither model nor tool takes any time;
//   (b) stop latency, from requestInterrupt() to the end of the event stream, in each state
//       a turn can be stopped in: a Stop button has to feel instant whatever is going on;
//   (c) one round of six 200 ms low-risk tools: concurrent, against the same six forced to
//       run one at a time, to show the parallel pass actually overlaps them;
//   (d) the same overhead with the session's operations wiring, metrics off and on
//       (ops-overhead.ts: a later sink adds its own variant there);
//   (e) the loop over HTTP against a fake OpenAI server, side by side with a bare loop on
//       the OpenAI SDK (http-overhead.ts).
// It reports only: goals are shown beside the figures, never enforced, so a slow machine never fails it.
import {
  DEFAULT_TOOL_STOP_GRACE_MS,
  TurnEngine,
  type AssistantTurn,
  type EngineEvent,
  type OutboundMessage,
  type Provider,
  type ToolDefinition,
  type ToolMetadata,
} from '../src/engine/index.js';
import { allowEverything, mediumRisk, lowRisk, noopTool, sleepingTool, ZeroLatencyProvider } from './fixtures.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';
import { stopLatencyRows } from './engine-stop.js';
import { httpOverheadRows } from './http-overhead.js';
import { opsOverheadRows } from './ops-overhead.js';

const ITERATIONS = 1_000;
const OVERHEAD_REPEATS = 5;
const WARMUP_RUNS = 8;
/** The goal: what the loop itself may cost per model↔tool iteration. */
const OVERHEAD_GOAL_MS = 0.04;

/** The loop the engine is compared with: no events, no checks, no stop handling. */
async function bareLoop(provider: Provider, tool: ToolDefinition): Promise<void> {
  const messages: OutboundMessage[] = [{ role: 'user', content: 'go' }];
  const signal = new AbortController().signal;
  for (;;) {
    let final: AssistantTurn | undefined;
    for await (const chunk of provider.stream({ model: 'bench', messages, tools: [] }, signal))
      if (chunk.type === 'final') final = chunk.turn;
    if (!final) throw new Error('bare loop: the stream ended without a final chunk');
    const calls = final.toolCalls.map((c, i) => ({
      id: c.id ?? `call_${i}`,
      type: 'function' as const,
      function: { name: c.name, arguments: c.arguments },
    }));
    messages.push({ role: 'assistant', content: final.text, tool_calls: calls });
    if (calls.length === 0) return;
    for (const c of calls) {
      const result = await tool.execute(JSON.parse(c.function.arguments), {
        signal,
        toolCallId: c.id,
        sessionId: 'bare',
      });
      messages.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify(result) });
    }
  }
}

async function engineLoop(provider: Provider, tool: ToolDefinition): Promise<void> {
  const engine = new TurnEngine({ provider, model: 'bench', tools: [tool], limits: { maxIterations: ITERATIONS + 1 } });
  let end: EngineEvent | undefined;
  for await (const event of engine.run('go')) if (event.type === 'turn_end') end = event;
  if (end?.type !== 'turn_end' || end.status !== 'completed' || end.iterations !== ITERATIONS + 1) {
    throw new Error(
      `engine loop: expected a completed turn of ${ITERATIONS + 1} model calls, got ${JSON.stringify(end)}`,
    );
  }
}

async function timeLoop(loop: (provider: Provider, tool: ToolDefinition) => Promise<void>): Promise<number> {
  const tool = noopTool('noop');
  const provider = new ZeroLatencyProvider(ITERATIONS, tool.name);
  const started = performance.now();
  await loop(provider, tool);
  return (performance.now() - started) / ITERATIONS;
}

async function overheadRows(): Promise<BenchRow[]> {
  // Warm-up: V8 needs several thousand engine iterations before its optimising tiers
  // settle (measured: one 1,000-iteration run is still 3-5x slower than steady state).
  for (let i = 0; i < WARMUP_RUNS; i++) {
    await timeLoop(engineLoop);
    await timeLoop(bareLoop);
  }
  const engine: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < OVERHEAD_REPEATS; i++) {
    engine.push(await timeLoop(engineLoop));
    bare.push(await timeLoop(bareLoop));
  }
  const engineMs = median(engine);
  const bareMs = median(bare);
  const runs = `median of ${OVERHEAD_REPEATS} runs of ${ITERATIONS} iterations, after ${WARMUP_RUNS} warm-up runs`;
  return [
    {
      key: 'engine.overhead_ms_per_iteration',
      value: engineMs,
      unit: 'ms',
      note: `TurnEngine, zero-latency provider + no-op tool; ${runs}`,
      goal: OVERHEAD_GOAL_MS,
    },
    {
      key: 'engine.bare_ms_per_iteration',
      value: bareMs,
      unit: 'ms',
      note: `bare 12-line loop, same provider and tool; ${runs}`,
    },
    { key: 'engine.overhead_ratio', value: engineMs / bareMs, unit: 'x', note: 'engine / bare, per iteration' },
  ];
}

/** Wall time of one six-call tool round: first tool_started to last tool_finished. */
async function sixToolRound(metadata: ToolMetadata): Promise<number> {
  const tool = sleepingTool('nap', metadata, 200);
  const provider = new ZeroLatencyProvider(1, tool.name, 6);
  const engine = new TurnEngine({ provider, model: 'bench', tools: [tool], ports: { policy: allowEverything } });
  let firstStart: number | undefined;
  let lastFinish: number | undefined;
  let finished = 0;
  for await (const event of engine.run('nap six times')) {
    if (event.type === 'tool_started') firstStart ??= performance.now();
    if (event.type === 'tool_finished' && event.status === 'ok') {
      lastFinish = performance.now();
      finished++;
    }
  }
  if (firstStart === undefined || lastFinish === undefined || finished !== 6)
    throw new Error(`six-tool round: ${finished} of 6 tools finished ok`);
  return lastFinish - firstStart;
}

async function parallelRows(): Promise<BenchRow[]> {
  const repeats = 3;
  const parallel: number[] = [];
  const sequential: number[] = [];
  for (let i = 0; i < repeats; i++) {
    parallel.push(await sixToolRound(lowRisk));
    sequential.push(await sixToolRound(mediumRisk));
  }
  return [
    {
      key: 'engine.parallel_6x200ms_wall_ms',
      value: median(parallel),
      unit: 'ms',
      note: `6 low-risk calls in one turn (concurrent); median of ${repeats}`,
    },
    {
      key: 'engine.sequential_6x200ms_wall_ms',
      value: median(sequential),
      unit: 'ms',
      note: `same 6 as medium-risk, allow-all policy (one at a time); median of ${repeats}`,
    },
  ];
}

export const engineSuite: BenchSuite = {
  name: 'engine',
  async run() {
    return [
      ...(await overheadRows()),
      ...(await opsOverheadRows()),
      ...(await httpOverheadRows()),
      ...(await parallelRows()),
      ...(await stopLatencyRows(DEFAULT_TOOL_STOP_GRACE_MS)),
    ];
  },
};
