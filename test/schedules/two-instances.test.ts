// Cluster mode: two instances' schedulers on one real Redis (a redis-server on a random
// port), the store's index a Redis set (redisIdSet) and each occurrence claimed through the
// Redis coordinator's claimEvent (SET NX), on one manual clock so both wake at each instant
// together and race for it. Every occurrence runs exactly once; when one instance dies the
// other runs the schedules that instance made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../src/cluster/cluster-keys.js';
import { RedisCoordinator } from '../../src/cluster/redis-coordinator.js';
import { redisIdSet } from '../../src/cluster/redis-id-set.js';
import { silentLogger } from '../../src/engine/index.js';
import { nextRuns } from '../../src/schedules/occurrences.js';
import { ScheduleStore } from '../../src/schedules/schedule-store.js';
import type { ScheduleSpec } from '../../src/schedules/schedule-types.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { RedisServer } from '../support/redis-server.js';
import { mulberry32 } from '../support/seeded-random.js';
import { ManualClock, recordingScheduler, scheduleOf, type RecordingScheduler } from './schedule-kit.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SEED = 24;

let redis: RedisServer;
const opened: OpenedStore[] = [];
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  for (const store of opened) await store.close();
  await redis?.dispose();
});

interface Instance extends RecordingScheduler {
  store: ScheduleStore;
}

async function instance(clock: ManualClock, prefix: string): Promise<Instance> {
  const keys = clusterKeys(prefix);
  const store = await openKeyvStore(redis.url, 'bot', { keys });
  opened.push(store);
  const schedules = new ScheduleStore(store.keyv, redisIdSet(store.redis!, keys.schedules));
  // Never started: only its claimEvent is used (no leases, no Pub/Sub).
  const coordinator = new RedisCoordinator({
    redis: store.redis!,
    subscriber: store.redis!,
    keys,
    logger: silentLogger,
  });
  const recording = recordingScheduler(clock, {
    store: schedules,
    claim: (id) => coordinator.claimEvent(id),
    graceMs: 15 * MINUTE,
  });
  return { ...recording, store: schedules };
}

describe('two instances on one Redis', () => {
  it(`run each of 100 occurrences exactly once, and one's schedules on the other after it dies (seed ${SEED})`, async () => {
    const random = mulberry32(SEED);
    const start = Date.parse('2027-02-01T00:00:00Z');
    const end = start + 12 * HOUR;
    const clock = new ManualClock(start);
    const [a, b] = [await instance(clock, 'sched-two:'), await instance(clock, 'sched-two:')];
    await a.scheduler.start();
    await b.scheduler.start();
    const settle = async (): Promise<void> => {
      await Promise.all([a.scheduler.idle(), b.scheduler.idle()]);
    };

    // 5 hourly schedules at random minutes (60 occurrences in 12 hours) and 40 one-offs at
    // random minutes, each made on a random instance; the other learns of it from the store.
    const specs: ScheduleSpec[] = [];
    for (let i = 0; i < 5; i++)
      specs.push({
        kind: 'cron',
        pattern: `${Math.floor(random() * 60)} * * * *`,
        timezone: i % 2 ? 'Asia/Kolkata' : 'UTC',
      });
    for (let i = 0; i < 40; i++)
      specs.push({ kind: 'once', at: start + (1 + Math.floor(random() * (12 * 60 - 2))) * MINUTE });
    const expected = new Set<string>();
    for (const [i, spec] of specs.entries()) {
      const id = `s-${i}`;
      for (const at of nextRuns(spec, start, 100).filter((instant) => instant <= end)) expected.add(`${id}@${at}`);
      const schedule = scheduleOf(id, spec, nextRuns(spec, start, 1)[0]!);
      const maker = random() < 0.5 ? a : b;
      await maker.store.save(schedule);
      maker.scheduler.add(schedule);
    }
    expect(expected.size).toBe(100);

    // Half-way, instance a dies (closed without a word to b).
    await clock.advanceTo(start + 6 * HOUR, settle);
    await a.scheduler.close();
    const firedBeforeDeath = b.fired.length;
    await clock.advanceTo(end, settle);

    const runs = [...a.fired, ...b.fired].map((run) => `${run.id}@${run.dueAt}`);
    const counts = new Map<string, number>();
    for (const run of runs) counts.set(run, (counts.get(run) ?? 0) + 1);
    const duplicates = [...counts].filter(([, n]) => n > 1);
    const missed = [...expected].filter((occurrence) => !counts.has(occurrence));
    expect({ duplicates, missed, unexpected: runs.filter((run) => !expected.has(run)) }).toEqual({
      duplicates: [],
      missed: [],
      unexpected: [],
    });
    expect(runs).toHaveLength(100);
    // Every run at its instant (the race costs no lateness), none reported missed.
    for (const run of [...a.fired, ...b.fired]) expect(run.at).toBe(run.dueAt);
    expect([...a.skipped, ...b.skipped]).toEqual([]);
    // After a's death b ran everything, a's schedules included.
    expect(b.fired.length - firedBeforeDeath).toBe(
      [...expected].filter((o) => Number(o.split('@')[1]) > start + 6 * HOUR).length,
    );
    // The one-offs are gone from the shared store; the hourly ones remain.
    expect((await b.store.ids()).sort()).toEqual(['s-0', 's-1', 's-2', 's-3', 's-4']);
    await b.scheduler.close();
  });
});
