// The traces suite: what tracing costs a turn. The engine's model↔tool loop (as in the engine
// suite: zero-latency provider, no-op tool) with the operations side wired as the core wires
// it (the metered provider and the ops observer on a bus), once with no sink on the bus
// (tracing off) and once with the trace sink, a batch processor and the real OTLP/HTTP
// protobuf exporter posting to a local receiver that drains each request and answers 200.
// The timed run includes the final flush, so every span a run made is serialized and sent
// inside it. Off and on alternate after a warm-up; each figure is a median. It reports only.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TurnEngine, type EngineEvent, type EngineLogger } from '../src/engine/index.js';
import { meteredResolver } from '../src/ops/metered-provider.js';
import { OpsBus, placeOf, type OpsSink } from '../src/ops/ops-events.js';
import { OpsObserver } from '../src/ops/ops-observer.js';
import { startTracing } from '../src/ops/traces/trace-pipeline.js';
import type { SessionRecord } from '../src/store/session-store.js';
import { noopTool, ZeroLatencyProvider } from './fixtures.js';
import { sessionRecordFor } from '../test/support/engine-kit.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const ITERATIONS = 1_000;
const REPEATS = 5;
const WARMUP_RUNS = 6;

const session: SessionRecord = sessionRecordFor(
  { platform: 'bench', workspace: 'W1', channel: 'C1', thread: 'T1' },
  { model: 'openai:bench' },
);

/** One 1,000-iteration turn with the ops side listening through `sink` (none: tracing off); ms per iteration, flush included. */
async function timedTurn(sink: OpsSink | undefined): Promise<number> {
  const ops = new OpsBus();
  if (sink) ops.add(sink);
  const observer = new OpsObserver(ops, { mask: (text) => text });
  const tool = noopTool('noop');
  const provider = new ZeroLatencyProvider(ITERATIONS, tool.name);
  const engine = new TurnEngine({
    provider: meteredResolver(() => provider, { place: placeOf(session), ops }),
    model: session.model,
    sessionId: session.id,
    tools: [tool],
    limits: { maxIterations: ITERATIONS + 1 },
  });
  const started = performance.now();
  let end: EngineEvent | undefined;
  for await (const event of engine.run('go')) {
    observer.onEvent(session, event);
    if (event.type === 'turn_end') end = event;
  }
  await sink?.flush?.();
  const elapsed = performance.now() - started;
  if (end?.type !== 'turn_end' || end.status !== 'completed')
    throw new Error(`traces bench: the turn did not complete: ${JSON.stringify(end)}`);
  return elapsed / ITERATIONS;
}

/** A collector that takes everything and keeps nothing. */
async function drainingReceiver(): Promise<{
  server: Server;
  url: string;
  requests: () => number;
  bytes: () => number;
}> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    requests: () => requests,
    bytes: () => bytes,
  };
}

async function run(): Promise<BenchRow[]> {
  const receiver = await drainingReceiver();
  const warnings: string[] = [];
  const logger: EngineLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (details) => void warnings.push(JSON.stringify(details)),
    error: (details) => void warnings.push(JSON.stringify(details)),
  };
  const sink = await startTracing(
    { url: receiver.url, encoding: 'http/protobuf', headers: {}, serviceName: 'chat-agent', captureContent: false },
    { mask: (text) => text, logger, knownTools: (name) => name === 'noop' },
  );
  try {
    for (let i = 0; i < WARMUP_RUNS; i++) {
      await timedTurn(undefined);
      await timedTurn(sink);
    }
    const off: number[] = [];
    const on: number[] = [];
    const bytesBefore = receiver.bytes();
    for (let i = 0; i < REPEATS; i++) {
      off.push(await timedTurn(undefined));
      on.push(await timedTurn(sink));
    }
    const bytesPerTurn = (receiver.bytes() - bytesBefore) / REPEATS;
    const offMs = median(off);
    const onMs = median(on);
    const runs = `median of ${REPEATS} turns of ${ITERATIONS} iterations, after ${WARMUP_RUNS} warm-up turns`;
    const dropped = warnings.filter((warning) => /dropped/i.test(warning)).length;
    return [
      {
        key: 'engine.overhead_ms_per_iteration_tracing_off',
        value: offMs,
        unit: 'ms',
        note: `TurnEngine + metered provider + ops observer, bus with no sink; ${runs}`,
      },
      {
        key: 'engine.overhead_ms_per_iteration_tracing_on',
        value: onMs,
        unit: 'ms',
        note: `same, with the trace sink + batch processor + OTLP/HTTP protobuf exporter to a local receiver, flush included (${Math.round(bytesPerTurn / 1024)} KiB sent a turn${dropped ? `; ${dropped} drop warnings` : ''}); ${runs}`,
      },
      {
        key: 'traces.cost_ms_per_iteration',
        value: onMs - offMs,
        unit: 'ms',
        note: 'tracing on − off, per model↔tool iteration (two spans: a chat and an execute_tool)',
      },
      { key: 'traces.cost_ratio', value: onMs / offMs, unit: 'x', note: 'tracing on / off, per iteration' },
    ];
  } finally {
    await sink.close?.();
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
  }
}

export const tracesSuite: BenchSuite = { name: 'traces', run };
