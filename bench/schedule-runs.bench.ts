// Scheduled runs through the real core (the figure a person feels: due time → model
// request): 1,000 schedules stored on SQLite before the bot starts (800 daily ones due
// tomorrow, 200 one-offs due over a few seconds, each in a thread of its own, by 200 people),
// the core started as `npm start` starts it, and FakeOpenAI noting when each run's first model
// request arrives. Each run is a whole turn's start: the claim, the record, the thread's note
// (no platform is attached, so it costs nothing here), the session made, the creator's checks,
// and the model call through the gate and the spend ledger.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { startCore } from '../src/core.js';
import { silentLogger } from '../src/engine/index.js';
import { ScheduleStore } from '../src/schedules/schedule-store.js';
import type { Schedule } from '../src/schedules/schedule-types.js';
import { openKeyvStore } from '../src/store/keyv-factory.js';
import { answerEvents, FakeOpenAI } from '../test/fakes/openai-server.js';
import { scheduleOf } from './schedule-fixtures.js';
import { median, percentile } from './stats.js';
import type { BenchRow } from './suite.js';

const SCHEDULES = 1_000;
const DUE_SOON = 200;
const SPREAD_MS = 3_000;
/** Time for the core to start and load the 1,000 before the first is due. */
const LEAD_MS = 5_000;
const GIVE_UP_MS = 60_000;

/** Part of the `schedules` suite (schedules.bench.ts): the end-to-end rows. */
export async function scheduleRunRows(): Promise<BenchRow[]> {
  {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-bench-schedule-runs-'));
    const dueOf = new Map<string, number>();
    const lags: number[] = [];
    let allArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (allArrived = resolve));
    const llm = await new FakeOpenAI().start();
    llm.respondWith((request) => {
      const id = /Scheduled task (s-[a-z0-9]+)/.exec(JSON.stringify(request.body))?.[1];
      const due = id ? dueOf.get(id) : undefined;
      if (id && due !== undefined) {
        dueOf.delete(id);
        lags.push(Date.now() - due);
        if (lags.length === DUE_SOON) allArrived();
      }
      return { kind: 'sse', events: answerEvents(request, { text: 'Nothing needs an owner.' }) };
    });
    const storeUrl = `sqlite://${path.join(dir, 'data', 'bot.sqlite')}`;
    const now = Date.now();
    const firstDue = now + LEAD_MS;
    const seeded = await openKeyvStore(storeUrl);
    const store = new ScheduleStore(seeded.keyv);
    for (let i = 0; i < SCHEDULES; i++) {
      const spec: Schedule['spec'] =
        i < DUE_SOON
          ? { kind: 'once', at: firstDue + Math.floor((i * SPREAD_MS) / DUE_SOON) }
          : { kind: 'cron', pattern: `${i % 60} 9 * * *`, timezone: 'Europe/Paris' };
      // Each due run by a person of its own: fair use (turns and threads per person) does not hold any back.
      const schedule = scheduleOf(i, spec, now, DUE_SOON);
      if (spec.kind === 'once') dueOf.set(schedule.id, spec.at);
      await store.save(schedule);
    }
    await seeded.close();
    const config = loadConfig({
      MODEL: 'openai:gpt-4.1',
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: llm.baseURL,
      STORE_URL: storeUrl,
      WORKSPACE_DIR: path.join(dir, 'workspace'),
      MCP_CONFIG: path.join(dir, 'mcp.json'),
      SHELL_SANDBOX: 'off',
      MAX_CONCURRENT_MODEL_CALLS: '16',
    });
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const baseline = process.memoryUsage().heapUsed;
    const core = await startCore(config, { logger: silentLogger });
    try {
      await core.recover();
      const startedIn = Date.now() - now;
      gc?.();
      const held = (process.memoryUsage().heapUsed - baseline) / (1024 * 1024);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        arrived,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, LEAD_MS + SPREAD_MS + GIVE_UP_MS))),
      ]);
      clearTimeout(timer);
      await core.manager.idle();
      const note = `real core on SQLite, ${SCHEDULES.toLocaleString('en-US')} schedules stored, ${DUE_SOON} one-offs due over ${SPREAD_MS / 1000} s in threads of their own; due instant → the run's model request at FakeOpenAI`;
      return [
        { key: 'schedules.fire_lag_ms_p99', value: percentile(lags, 99), unit: 'ms', note: `${note}; goal ≤ 1,000 ms` },
        { key: 'schedules.model_request_lag_ms_median', value: median(lags), unit: 'ms', note },
        {
          key: 'schedules.runs_reached_model',
          value: lags.length,
          unit: 'runs',
          note: `of ${DUE_SOON} due (seeded and started in ${startedIn} ms)`,
        },
        {
          key: 'schedules.core_heap_mb_with_1000',
          value: held,
          unit: 'MB',
          note: 'heap above baseline after GC once the core started with the 1,000 schedules (the whole core: store, providers, schedules)',
        },
      ];
    } finally {
      await core.close();
      await llm.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
}
