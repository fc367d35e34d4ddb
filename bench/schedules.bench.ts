// The scheduler runtime under load, on the real clock: 1,000 schedules stored on SQLite
// (800 daily ones due tomorrow, 200 one-offs due over the next few seconds), all on one
// timer. Measures how late `fire` is called after each due instant (the scheduler's share of
// "due time → model request", goal ≤ 1,000 ms at p99: claim, re-read and record
// included) and the heap the scheduler holds for the 1,000 schedules.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ScheduleStore } from '../src/schedules/schedule-store.js';
import type { Schedule } from '../src/schedules/schedule-types.js';
import { scheduleOf } from './schedule-fixtures.js';
import { Scheduler } from '../src/schedules/scheduler.js';
import { InProcessCoordinator } from '../src/sessions/coordination.js';
import { openKeyvStore } from '../src/store/keyv-factory.js';
import { SessionStore } from '../src/store/session-store.js';
import { median, percentile } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';
import { scheduleRunRows } from './schedule-runs.bench.js';

const SCHEDULES = 1_000;
const DUE_SOON = 200;
/** The due ones spread over this long, starting this far ahead (time to store them all first). */
const SPREAD_MS = 3_000;
const LEAD_MS = 4_000;
/** Bounds the wait for the fires (a broken scheduler ends the suite, it does not hang it). */
const GIVE_UP_MS = 60_000;

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

const schedulerSuite: BenchSuite = {
  name: 'scheduler',
  async run(): Promise<BenchRow[]> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-bench-schedules-'));
    const opened = await openKeyvStore(`sqlite://${path.join(dir, 'bot.sqlite')}`);
    const store = new ScheduleStore(opened.keyv);
    const coordinator = new InProcessCoordinator(new SessionStore(opened.keyv));
    const lags: number[] = [];
    let allFired: () => void = () => undefined;
    const fired = new Promise<void>((resolve) => (allFired = resolve));
    const scheduler = new Scheduler({
      store,
      claim: (id) => coordinator.claimEvent(id),
      fire: (_schedule, dueAt) => {
        lags.push(Date.now() - dueAt);
        if (lags.length === DUE_SOON) allFired();
        return Promise.resolve();
      },
      skipped: () => Promise.resolve(),
      graceMs: 15 * 60_000,
    });
    try {
      await scheduler.start();
      const baseline = heapMb();
      const now = Date.now();
      const firstDue = now + LEAD_MS;
      for (let i = 0; i < SCHEDULES; i++) {
        const spec: Schedule['spec'] =
          i < DUE_SOON
            ? { kind: 'once', at: firstDue + Math.floor((i * SPREAD_MS) / DUE_SOON) }
            : { kind: 'cron', pattern: `${i % 60} 9 * * *`, timezone: 'Europe/Paris' };
        const schedule = scheduleOf(i, spec, now);
        await store.save(schedule);
        scheduler.add(schedule);
      }
      const storedIn = Date.now() - now;
      const held = heapMb() - baseline;
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, GIVE_UP_MS + LEAD_MS + SPREAD_MS)));
      await Promise.race([fired, gaveUp]);
      clearTimeout(timer);
      const note = `${SCHEDULES.toLocaleString('en-US')} stored on SQLite, ${DUE_SOON} one-offs due over ${SPREAD_MS / 1000} s, real clock; due instant → fire called (claim, re-read, record)`;
      return [
        {
          key: 'schedules.scheduler_lag_ms_p99',
          value: percentile(lags, 99),
          unit: 'ms',
          note: `${note}; the scheduler's share of schedules.fire_lag_ms_p99`,
        },
        { key: 'schedules.scheduler_lag_ms_median', value: median(lags), unit: 'ms', note },
        {
          key: 'schedules.fired',
          value: lags.length,
          unit: 'runs',
          note: `of ${DUE_SOON} due (stored in ${storedIn} ms, before the first was due)`,
        },
        {
          key: 'schedules.heap_mb_for_1000',
          value: held,
          unit: 'MB',
          note: 'heap above baseline after GC: the scheduler, the store index and the 1,000 records',
        },
      ];
    } finally {
      await scheduler.close();
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

/** The scheduler alone, then the whole path through the real core (schedule-runs.bench.ts). */
export const schedulesSuite: BenchSuite = {
  name: 'schedules',
  async run(): Promise<BenchRow[]> {
    return [...(await schedulerSuite.run()), ...(await scheduleRunRows())];
  },
};
