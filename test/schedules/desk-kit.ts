// A real ScheduleService (core.schedules) for the surface tests: the real store on SQLite in a
// temporary folder and a real Scheduler on a manual clock that the tests never advance, so a
// schedule is made, listed and ended as in the bot, and nothing fires while a test looks.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScheduleService } from '../../src/schedules/schedule-service.js';
import { ScheduleStore } from '../../src/schedules/schedule-store.js';
import { openKeyvStore } from '../../src/store/keyv-factory.js';
import { ManualClock, recordingScheduler } from './schedule-kit.js';

export interface TestDesk {
  desk: ScheduleService;
  store: ScheduleStore;
  /** What the scheduler ran (nothing, unless a test advances `clock`). */
  fired: { id: string }[];
  clock: ManualClock;
  close(): Promise<void>;
}

export async function openTestDesk(
  options: { defaultTimezone?: string; maxPerUser?: number; maxPerChannel?: number } = {},
): Promise<TestDesk> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-agent-desk-'));
  const opened = await openKeyvStore(`sqlite://${join(dir, 'schedules.sqlite')}`);
  const store = new ScheduleStore(opened.keyv);
  const clock = new ManualClock(Date.now());
  const recording = recordingScheduler(clock, { store, claim: () => Promise.resolve(true), graceMs: 15 * 60_000 });
  await recording.scheduler.start();
  const desk = new ScheduleService({
    store,
    scheduler: recording.scheduler,
    minIntervalMs: 5 * 60_000,
    maxPerUser: options.maxPerUser ?? 10,
    maxPerChannel: options.maxPerChannel ?? 20,
    defaultTimezone: options.defaultTimezone ?? 'UTC',
  });
  return {
    desk,
    store,
    fired: recording.fired,
    clock,
    async close() {
      await recording.scheduler.close();
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
