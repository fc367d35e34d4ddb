// The engine over HTTP, side by side with a bare loop: what the owned agent loop costs where a
// model is a server away. Both loops run the same 20-call turns against the same fake
// (sse-openai-server.ts, in a process of its own): 19 model calls that each ask for one call of
// a trivial low-risk tool, then one that answers in text. One loop is TurnEngine with
// OpenAIProvider, as a library user runs it; the other is a loop written directly on the
// OpenAI SDK, doing the same requests (same messages, same tool, same stream options) and the
// same tool calls, with nothing else: no events, no checks, no stop handling, no masks.
//
// They run in pairs, in alternating order (a busy machine slows neighbours alike); the figure
// is the median of the pairs' ratios. Each side of a pair is a batch of turns, not one: a
// single 40 ms turn caught by a collection or the fake's scheduling swung a pair's ratio
// from 0.3 to 2.5, and batches of five keep it within about 0.9-1.6. Wall time is what a person waits; the process's CPU time
// per turn (the fake's is not in it) is the steadier figure on a shared machine, given beside.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { defineTool, toolSchemaOf, TurnEngine, type EngineEvent } from '../src/engine/index.js';
import { OpenAIProvider } from '../src/providers/openai.js';
import { toChatTools } from '../src/providers/openai-convert.js';
import { median } from './stats.js';
import type { BenchRow } from './suite.js';

const MODEL = 'gpt-4.1';
const MODEL_CALLS = 20;
const TOOL_ROUNDS = MODEL_CALLS - 1;
const PAIRS = 21;
const WARMUP_PAIRS = 3;
const TURNS_PER_BATCH = 5;
/** The goal: the engine's turn takes at most this many times the bare loop's. */
const HTTP_OVERHEAD_GOAL = 1.1;

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing and says which round it was called in.',
  schema: z.object({ round: z.number() }),
  metadata: { risk: 'low', category: 'read' },
  async execute({ round }) {
    return { ok: true, round };
  },
});

/** The tool as the bare loop sends it: the same JSON the provider sends. */
const bareTools: ChatCompletionFunctionTool[] = toChatTools([toolSchemaOf(noop)]);

/** One side of a pair: a batch of turns, its wall and CPU time. */
interface Sample {
  wallMs: number;
  cpuMs: number;
}

async function timed(turn: () => Promise<void>): Promise<Sample> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await turn();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/** One turn on the SDK alone: stream, gather the tool call, run the tool, send its result, again. */
async function bareTurn(client: OpenAI): Promise<void> {
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }];
  const signal = new AbortController().signal;
  for (let made = 1; ; made++) {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      tools: bareTools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) text += delta.content;
      for (const piece of delta.tool_calls ?? []) {
        const slot = (calls[piece.index] ??= { id: '', name: '', arguments: '' });
        if (piece.id) slot.id = piece.id;
        if (piece.function?.name) slot.name += piece.function.name;
        if (piece.function?.arguments) slot.arguments += piece.function.arguments;
      }
    }
    if (calls.length === 0) {
      messages.push({ role: 'assistant', content: text });
      if (made !== MODEL_CALLS)
        throw new Error(`bare loop: answered after ${made} model calls, expected ${MODEL_CALLS}`);
      return;
    }
    messages.push({
      role: 'assistant',
      content: text || null,
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    });
    for (const call of calls) {
      const result = await noop.execute(JSON.parse(call.arguments), { signal, toolCallId: call.id, sessionId: 'bare' });
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
}

/** The same turn through TurnEngine and OpenAIProvider. */
async function engineTurn(provider: OpenAIProvider): Promise<void> {
  const engine = new TurnEngine({
    provider,
    model: `openai:${MODEL}`,
    tools: [noop],
    limits: { maxIterations: MODEL_CALLS },
  });
  let end: EngineEvent | undefined;
  for await (const event of engine.run('go')) if (event.type === 'turn_end') end = event;
  if (end?.type !== 'turn_end' || end.status !== 'completed' || end.iterations !== MODEL_CALLS) {
    throw new Error(`engine loop: expected a completed turn of ${MODEL_CALLS} model calls, got ${JSON.stringify(end)}`);
  }
}

/** The fake server in a process of its own; resolves with its base URL and how to stop it. */
async function startServer(): Promise<{ baseURL: string; stop: () => Promise<void> }> {
  const script = fileURLToPath(new URL('./sse-openai-server.ts', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, String(TOOL_ROUNDS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (piece: Buffer) => {
      out += piece.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    child.once('exit', (code) => reject(new Error(`the fake OpenAI server exited (${code}) before it listened`)));
  });
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function httpOverheadRows(): Promise<BenchRow[]> {
  const server = await startServer();
  try {
    // The same client settings on both sides (the provider's defaults).
    const client = new OpenAI({ apiKey: 'bench', baseURL: server.baseURL, maxRetries: 2, timeout: 60_000 });
    const provider = new OpenAIProvider({ apiKey: 'bench', baseURL: server.baseURL, maxRetries: 2 });
    const batch = (turn: () => Promise<void>) => async () => {
      for (let i = 0; i < TURNS_PER_BATCH; i++) await turn();
    };
    const runs = { engine: batch(() => engineTurn(provider)), bare: batch(() => bareTurn(client)) };
    for (let i = 0; i < WARMUP_PAIRS; i++) {
      await runs.engine();
      await runs.bare();
    }
    const engine: Sample[] = [];
    const bare: Sample[] = [];
    for (let i = 0; i < PAIRS; i++) {
      if (i % 2 === 0) {
        engine.push(await timed(runs.engine));
        bare.push(await timed(runs.bare));
      } else {
        bare.push(await timed(runs.bare));
        engine.push(await timed(runs.engine));
      }
    }
    const wallRatios = engine.map((turn, i) => turn.wallMs / bare[i]!.wallMs);
    const cpuRatios = engine.map((turn, i) => turn.cpuMs / bare[i]!.cpuMs);
    const spread = (values: number[]) => `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
    const shape = `${MODEL_CALLS}-call turns (${TOOL_ROUNDS} tool rounds, then text) against an SSE fake over HTTP in its own process`;
    return [
      {
        key: 'engine.http_overhead_ratio',
        value: median(wallRatios),
        unit: 'x',
        note: `TurnEngine + OpenAIProvider / a bare OpenAI SDK loop, wall time per turn; ${shape}; median of ${PAIRS} alternating pairs of ${TURNS_PER_BATCH}-turn batches, their ratios ${spread(wallRatios)}`,
        goal: HTTP_OVERHEAD_GOAL,
      },
      {
        key: 'engine.http_overhead_cpu_ratio',
        value: median(cpuRatios),
        unit: 'x',
        note: `the same pairs, this process's CPU time per turn (${spread(cpuRatios)})`,
      },
      {
        key: 'engine.http_turn_ms',
        value: median(engine.map((turn) => turn.wallMs)) / TURNS_PER_BATCH,
        unit: 'ms',
        note: `the engine's turn, median (the bare loop's: ${(median(bare.map((turn) => turn.wallMs)) / TURNS_PER_BATCH).toFixed(1)} ms)`,
      },
    ];
  } finally {
    await server.stop();
  }
}
