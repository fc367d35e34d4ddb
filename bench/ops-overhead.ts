// What the operations side costs the engine per model↔tool iteration: the same TurnEngine
// loop as engine.overhead_ms_per_iteration (zero-latency provider, no-op tool), wired as the
// core wires a session (every model call through the metered provider, every engine event to
// the OpsObserver), with the operations bus set up by each variant: no sink (metrics off),
// the metrics sink (metrics on), and whatever a later sink adds (tracing: pass another
// variant to opsOverheadRows). Variants run interleaved, after a shared warm-up, so a busy
// machine slows them alike; each figure is a median, and the ratios are against `off`.
import { TurnEngine, type EngineEvent } from '../src/engine/index.js';
import { meteredResolver } from '../src/ops/metered-provider.js';
import { MetricsSink } from '../src/ops/metrics/index.js';
import { OpsBus, placeOf } from '../src/ops/ops-events.js';
import { OpsObserver } from '../src/ops/ops-observer.js';
import { sessionIdOf, type SessionRecord } from '../src/store/session-store.js';
import { noopTool, ZeroLatencyProvider } from './fixtures.js';
import { median } from './stats.js';
import type { BenchRow } from './suite.js';

const ITERATIONS = 1_000;
const REPEATS = 31;
const WARMUP_RUNS = 6;

export interface BusVariant {
  /** Key suffix: `engine.overhead_ms_per_iteration.<name>`. */
  name: string;
  /** What this variant is, for the table's note. */
  note: string;
  /** Add this variant's sinks to the bus (none: metrics off). Called once per run, on a new bus. */
  setup(bus: OpsBus): void;
  /** The most its ratio to the first variant should be. */
  goal?: number;
}

const METRICS_OFF: BusVariant = {
  name: 'metrics_off',
  note: 'operations bus with no sink (METRICS=off)',
  setup: () => undefined,
};
const METRICS_ON: BusVariant = {
  name: 'metrics_on',
  note: 'the metrics sink on the bus',
  goal: 1.05,
  setup: (bus) =>
    bus.add(
      new MetricsSink({
        load: () => ({
          liveSessions: 1,
          workingSessions: 1,
          queuedSteering: 0,
          modelCallsRunning: 0,
          modelCallsWaiting: 0,
        }),
      }),
    ),
};

const now = Date.now();
const key = { platform: 'slack', workspace: 'T0BENCH01', channel: 'C0BENCH01', thread: '1700000000.000100' };
const session: SessionRecord = {
  id: sessionIdOf(key),
  key,
  model: 'openai:bench',
  grants: { tools: [], commands: [] },
  compaction: null,
  startedBy: 'U0BENCH01',
  steerers: [],
  directories: [],
  createdAt: now,
  updatedAt: now,
};

/** One turn of ITERATIONS tool rounds with the session's operations wiring; ms per iteration. */
async function timeEngineWithOps(setup: (bus: OpsBus) => void): Promise<number> {
  const bus = new OpsBus();
  setup(bus);
  const observer = new OpsObserver(bus, { mask: (text) => text });
  const tool = noopTool('noop');
  const inner = new ZeroLatencyProvider(ITERATIONS, tool.name);
  const provider = meteredResolver(() => inner, {
    place: placeOf(session),
    ops: bus,
    fallbackRequester: () => session.startedBy,
  });
  const engine = new TurnEngine({
    provider,
    model: session.model,
    tools: [tool],
    limits: { maxIterations: ITERATIONS + 1 },
  });
  let end: EngineEvent | undefined;
  const started = performance.now();
  for await (const event of engine.run('go')) {
    observer.onEvent(session, event);
    if (event.type === 'turn_end') end = event;
  }
  const ms = (performance.now() - started) / ITERATIONS;
  if (end?.type !== 'turn_end' || end.status !== 'completed' || end.iterations !== ITERATIONS + 1) {
    throw new Error(
      `ops overhead: expected a completed turn of ${ITERATIONS + 1} model calls, got ${JSON.stringify(end)}`,
    );
  }
  await bus.close();
  return ms;
}

/** Rows for each variant (ms per iteration) and, for each but the first, its ratio to the first. */
export async function opsOverheadRows(variants: BusVariant[] = [METRICS_OFF, METRICS_ON]): Promise<BenchRow[]> {
  const run = (variant: BusVariant) => timeEngineWithOps((bus) => variant.setup(bus));
  for (let i = 0; i < WARMUP_RUNS; i++) for (const variant of variants) await run(variant);
  const times = variants.map(() => [] as number[]);
  /** Per round, each variant's time over the first's: neighbours in time share the machine's load. */
  const ratios = variants.map(() => [] as number[]);
  for (let i = 0; i < REPEATS; i++) {
    // Rotated: no variant always runs first (or right after a GC-heavy one).
    const round: number[] = [];
    for (let j = 0; j < variants.length; j++) {
      const index = (i + j) % variants.length;
      round[index] = await run(variants[index]!);
      times[index]!.push(round[index]);
    }
    for (let j = 1; j < variants.length; j++) ratios[j]!.push(round[j]! / round[0]!);
  }
  const medians = times.map((series) => median(series));
  const runs = `median of ${REPEATS} runs of ${ITERATIONS} iterations, interleaved, after ${WARMUP_RUNS} warm-up runs each`;
  const rows: BenchRow[] = variants.map((variant, i) => ({
    key: `engine.overhead_ms_per_iteration.${variant.name}`,
    value: medians[i]!,
    unit: 'ms',
    note: `TurnEngine with the session's ops wiring (metered provider, ops observer), ${variant.note}; ${runs}`,
  }));
  for (let i = 1; i < variants.length; i++) {
    rows.push({
      key: `engine.overhead_ratio.${variants[i]!.name}_vs_${variants[0]!.name}`,
      value: median(ratios[i]!),
      unit: 'x',
      note: `${variants[i]!.name} / ${variants[0]!.name} per iteration, median of the ${REPEATS} rounds' ratios`,
      ...(variants[i]!.goal !== undefined ? { goal: variants[i]!.goal } : {}),
    });
  }
  return rows;
}
