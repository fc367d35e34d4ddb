// Scheduled work assembled from the settings (core.ts calls this once): the store (its index
// a Redis set in cluster mode), the Scheduler (each occurrence claimed through the
// coordinator's event claim: once across instances), the runs (a turn of the creator's in the
// schedule's thread) and the desk the commands and the tool ask. Started by core.recover,
// after the connectors are attached (a run's first note needs them), and closed by core.close.
import type { Redis } from 'ioredis';
import type Keyv from 'keyv';
import type { Config } from '../config.js';
import type { EngineLogger } from '../engine/index.js';
import { redisIdSet } from '../cluster/redis-id-set.js';
import type { SessionRecord } from '../store/session-store.js';
import { AccessPauses } from './access-pauses.js';
import { ScheduleRuns, type ScheduleNotice, type ScheduleRunsOptions } from './schedule-runs.js';
import { ScheduleService } from './schedule-service.js';
import { ScheduleStore } from './schedule-store.js';
import { Scheduler, systemScheduleClock, type ScheduleClock } from './scheduler.js';

export interface ScheduleSetup {
  desk: ScheduleService;
  start(): Promise<void>;
  /** Until the occurrences due now are claimed, recorded and handed to their runs (tests, on a manual clock). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export function schedulesFrom(
  config: Pick<
    Config,
    | 'SCHEDULE_TZ'
    | 'SCHEDULE_GRACE'
    | 'SCHEDULE_MIN_INTERVAL'
    | 'SCHEDULE_WAIT_LIMIT'
    | 'SCHEDULES_PER_USER'
    | 'SCHEDULES_PER_CHANNEL'
  >,
  options: {
    keyv: Keyv;
    /** Cluster mode: the shared Redis and the key of the schedules' index there. */
    redis?: { client: Redis; indexKey: string };
    manager: ScheduleRunsOptions['manager'];
    /** Who may run a turn where (a run's creator) and who approves there (told when a schedule pauses). */
    access: ScheduleRunsOptions['access'];
    claim: (occurrenceId: string) => Promise<boolean>;
    notify: (record: SessionRecord, notice: ScheduleNotice) => Promise<void>;
    logger: EngineLogger;
    clock?: ScheduleClock;
  },
): ScheduleSetup {
  const clock = options.clock ?? systemScheduleClock;
  const store = new ScheduleStore(
    options.keyv,
    options.redis ? redisIdSet(options.redis.client, options.redis.indexKey) : undefined,
  );
  // The pauses let the Scheduler go of a schedule they end; it is made right after them (its runs need them).
  const pauses = new AccessPauses({ store, clock, forget: (id) => scheduler.remove(id) });
  const runs = new ScheduleRuns({
    manager: options.manager,
    access: options.access,
    pauses,
    notify: options.notify,
    clock,
    waitLimitMs: config.SCHEDULE_WAIT_LIMIT,
    logger: options.logger,
  });
  const scheduler: Scheduler = new Scheduler({
    store,
    clock,
    claim: options.claim,
    fire: runs.fire,
    skipped: runs.skipped,
    graceMs: config.SCHEDULE_GRACE,
    logger: options.logger,
  });
  const desk = new ScheduleService({
    store,
    scheduler,
    clock,
    minIntervalMs: config.SCHEDULE_MIN_INTERVAL,
    maxPerUser: config.SCHEDULES_PER_USER,
    maxPerChannel: config.SCHEDULES_PER_CHANNEL,
    defaultTimezone: config.SCHEDULE_TZ,
  });
  return {
    desk,
    start: () => scheduler.start(),
    idle: () => scheduler.idle(),
    close: async () => {
      runs.close();
      await scheduler.close();
    },
  };
}
