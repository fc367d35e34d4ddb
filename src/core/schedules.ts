// Scheduled work (src/schedules/): made at start-up, outside any turn (its timers keep the
// context they were made in), after the manager its runs go through; started by `recover`,
// once the connectors are attached.
import type { Config } from '../config.js';
import type { EngineLogger } from '../engine/index.js';
import type { ScheduleClock } from '../schedules/scheduler.js';
import { schedulesFrom, type ScheduleSetup } from '../schedules/schedule-setup.js';
import type { AccessPolicy } from '../sessions/access-policy.js';
import type { ObserverHub } from '../sessions/observer-hub.js';
import type { SessionManager } from '../sessions/session-manager.js';
import type { CoreStorage } from './storage.js';

export function schedulesFor(
  config: Config,
  deps: {
    storage: CoreStorage;
    manager: SessionManager;
    access: AccessPolicy;
    observers: ObserverHub;
    logger: EngineLogger;
    clock?: ScheduleClock | undefined;
  },
): ScheduleSetup {
  const { storage, manager, observers } = deps;
  return schedulesFrom(config, {
    keyv: storage.opened.keyv,
    ...(storage.shared ? { redis: { client: storage.shared, indexKey: storage.keys.schedules } } : {}),
    manager,
    access: deps.access,
    claim: (occurrenceId) => manager.claimEvent(occurrenceId),
    notify: (record, notice) => observers.onNotice(record, notice),
    logger: deps.logger,
    ...(deps.clock ? { clock: deps.clock } : {}),
  });
}
