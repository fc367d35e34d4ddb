// Stop latency of the engine: time from `engine.requestInterrupt()` to the end of the
// event stream (the consumer's `for await` finishing), in each state a turn can be in when
// the user presses Stop. 200 fresh-engine trials per state, reported as median and p99.
// A trial that does not end `interrupted` is not timed: it is counted and shown instead.
import { TurnEngine, type EngineEventType, type TurnEndStatus } from '../src/engine/index.js';
import { ScriptedProvider } from '../test/fakes/scripted-provider.js';
import { highRisk, lowRisk, noopTool, sleepingTool, stubbornTool, ZeroLatencyProvider } from './fixtures.js';
import { median, percentile } from './stats.js';
import type { BenchRow } from './suite.js';

const TRIALS = 200;
const TOOL_SLEEP_MS = 5_000;

interface StopScenario {
  state: string;
  /** The event that arms the stop. */
  on: EngineEventType;
  /** Milliseconds from that event to the stop; null: synchronously, inside the consumer loop. */
  delayMs(trial: number): number | null;
  engine(): TurnEngine;
  note: string;
}

type Trial = { ok: true; ms: number } | { ok: false; why: string };

/** A turn whose model asks for one call of `tool`; the engine gets `extra` options. */
function oneCallEngine(
  tool: ReturnType<typeof noopTool>,
  extra: Partial<ConstructorParameters<typeof TurnEngine>[0]> = {},
): TurnEngine {
  return new TurnEngine({ provider: new ZeroLatencyProvider(1, tool.name), model: 'bench', tools: [tool], ...extra });
}

function scenarios(graceMs: number): StopScenario[] {
  return [
    {
      state: 'stalled_stream',
      on: 'turn_start',
      delayMs: (trial) => trial % 3, // 0, 1 or 2 ms into the stalled call
      engine: () =>
        new TurnEngine({
          provider: new ScriptedProvider([{ stallBeforeFirstToken: true, ignoreAbort: true }]),
          model: 'bench',
        }),
      note: 'no first token, provider ignores abort; stop 0-2 ms after turn_start',
    },
    // The stops below land 1 ms after the event, so the approver is really waiting and the
    // tool really running: a stop that lands while the consumer is still rendering the
    // event is cheaper still, since the engine then never asks or starts the tool.
    {
      state: 'awaiting_approval',
      on: 'permission_required',
      delayMs: () => 1,
      engine: () =>
        oneCallEngine(sleepingTool('risky', highRisk, TOOL_SLEEP_MS), {
          ports: { approver: () => new Promise(() => undefined) },
        }),
      note: 'high-risk call, approver never answers; stop 1 ms after permission_required',
    },
    {
      state: 'mid_tool',
      on: 'tool_started',
      delayMs: () => 1,
      engine: () => oneCallEngine(sleepingTool('nap', lowRisk, TOOL_SLEEP_MS)),
      note: '5 s tool that honours its signal; stop 1 ms after tool_started',
    },
    {
      state: 'between_iterations',
      on: 'iteration_end',
      delayMs: () => null,
      engine: () => oneCallEngine(noopTool('noop')),
      note: 'stop synchronously on iteration_end',
    },
    {
      state: 'stubborn_tool',
      on: 'tool_started',
      delayMs: () => 1,
      engine: () => oneCallEngine(stubbornTool('mule', TOOL_SLEEP_MS)),
      note: `5 s tool that ignores its signal; stop 1 ms after tool_started; default toolStopGraceMs = ${graceMs} ms`,
    },
  ];
}

async function stopTrial(scenario: StopScenario, trial: number): Promise<Trial> {
  const engine = scenario.engine();
  let armed = false;
  let requestedAt: number | undefined;
  let accepted = false;
  let timer: NodeJS.Timeout | undefined;
  let status: TurnEndStatus | undefined;
  const stop = (): void => {
    requestedAt = performance.now();
    accepted = engine.requestInterrupt();
  };
  for await (const event of engine.run('stop me')) {
    if (!armed && event.type === scenario.on) {
      armed = true;
      const delay = scenario.delayMs(trial);
      if (delay === null) stop();
      else timer = setTimeout(stop, delay);
    }
    if (event.type === 'turn_end') status = event.status;
  }
  const endedAt = performance.now();
  clearTimeout(timer);
  if (requestedAt === undefined) return { ok: false, why: `turn ended (${status}) before the stop` };
  if (!accepted) return { ok: false, why: 'requestInterrupt() returned false' };
  if (status !== 'interrupted') return { ok: false, why: `turn ended ${status}` };
  return { ok: true, ms: endedAt - requestedAt };
}

export async function stopLatencyRows(graceMs: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const scenario of scenarios(graceMs)) {
    const times: number[] = [];
    const failures = new Map<string, number>();
    for (let trial = 0; trial < TRIALS; trial++) {
      const result = await stopTrial(scenario, trial);
      if (result.ok) times.push(result.ms);
      else failures.set(result.why, (failures.get(result.why) ?? 0) + 1);
    }
    const untimed = [...failures].map(([why, count]) => `${count}x ${why}`).join('; ');
    if (untimed) console.warn(`bench: stop ${scenario.state}: untimed trials: ${untimed}`);
    const note = `${scenario.note}; n=${times.length}${untimed ? `; UNTIMED: ${untimed}` : ''}`;
    rows.push(
      { key: `engine.stop_ms_median.${scenario.state}`, value: median(times), unit: 'ms', note },
      {
        key: `engine.stop_ms_p99.${scenario.state}`,
        value: percentile(times, 99),
        unit: 'ms',
        note: `p99 of the ${times.length} trials above`,
      },
    );
  }
  return rows;
}
