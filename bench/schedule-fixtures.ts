// The schedules the schedule benches store: one shape for the scheduler's bench and the
// whole-core one, so their figures compare.
import { nextRunAfter } from '../src/schedules/occurrences.js';
import type { Schedule } from '../src/schedules/schedule-types.js';

/** The i-th bench schedule: 40 channels, a thread each, `people` creators taking turns. */
export function scheduleOf(i: number, spec: Schedule['spec'], now: number, people = 97): Schedule {
  return {
    id: `s-${i.toString(32).padStart(6, '0')}`,
    key: { platform: 'slack', workspace: 'T0BENCH', channel: `C${i % 40}`, thread: `17000000${i}.000100` },
    creator: `U${i % people}`,
    task: `Summarise the open incidents in this channel and say which need an owner (${i}).`,
    spec,
    when: spec.kind === 'once' ? 'in a moment' : 'every day at 9:00',
    timezone: 'Europe/Paris',
    nextRunAt: nextRunAfter(spec, now),
    createdAt: now,
    via: 'command',
  };
}
