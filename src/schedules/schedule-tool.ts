// schedule_task: the model sets up scheduled work for the person it talks to ("every weekday
// at 9, summarise the open incidents here", "in two hours, check whether the deploy
// finished"), through the same desk as /schedule (core.schedules), in this thread.
//
// It is approved like a write: each run is a turn of the schedule's creator, so making one
// acts for a person. The creator is the person who approved the call (ToolContext.approval.by)
// or, when nobody was asked (auto mode, a grant), the person whose message the turn answers
// (ToolContext.requester). A call with neither is refused: a schedule always has a person.
// The desk's refusals (not understood, never fires, too often, caps) are thrown, so the model
// reads them as the tool's error and can tell the person.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import type { SessionKey } from '../store/session-store.js';
import { describeInstant } from './parse-when.js';
import type { ScheduleDesk } from './schedule-types.js';

// The name lives with the configuration's checks (DISABLED_TOOLS), which must not load this module.
import { SCHEDULE_TOOL_NAME } from '../config-checks.js';
/** The names a profile's `tools` may list for this module (core.ts `known.tools`). */
export const SCHEDULE_TOOL_NAMES: readonly string[] = [SCHEDULE_TOOL_NAME];

const schema = z.object({
  when: z
    .string()
    .min(1)
    .max(200)
    .describe(
      'When to run, as the person said it, read in their time zone: a one-off ("in 2 hours", "tomorrow at 9:00", "2027-03-15 14:30") or recurring ("every weekday at 9:00", "every monday at 8:30", "every 30 minutes", or a 5-field cron expression such as "0 9 * * 1-5").',
    ),
  task: z
    .string()
    .min(1)
    .max(4000)
    .describe(
      'What to do at each run, written as a request to yourself with everything needed, since the run starts without this conversation\'s wording in front of it (e.g. "Summarise the open incidents in this channel" or "Check whether the deploy of v2.3 finished and say so").',
    ),
});

export interface ScheduleToolOptions {
  desk: ScheduleDesk;
  /** The thread the tool works in: the schedule's runs come back here. */
  key: SessionKey;
  /** The creator's time zone (Slack users.info `tz`), else SCHEDULE_TZ. */
  timezone: (creator: string) => Promise<string>;
}

export function scheduleTaskTool(options: ScheduleToolOptions): ToolDefinition {
  const { desk, key, timezone } = options;
  return defineTool({
    name: SCHEDULE_TOOL_NAME,
    description:
      'Schedule work in this thread, once or on a repeating schedule: at each run you get `task` as a new request from the person who set it up, with their permissions, and answer here. Use it when someone asks for something later or regularly ("every weekday at 9, summarise the open incidents", "in two hours check whether the deploy finished"). The person may list schedules with /schedules and end one with /unschedule <id>.',
    schema,
    metadata: {
      risk: 'medium',
      category: 'write',
      idempotent: false,
      confinement: 'sets up runs of this task in this thread, as the person who approves it',
    },
    async execute({ when, task }, context) {
      const creator = context.approval?.by ?? context.requester;
      if (!creator)
        throw new Error('refused: no person asked for this schedule, and a schedule runs as the person who set it up.');
      const zone = await timezone(creator);
      const outcome = await desk.create({ key, creator, when, task, timezone: zone, via: 'tool' });
      if (!outcome.ok) throw new Error(`refused: ${outcome.reason}`);
      const { schedule } = outcome;
      return {
        id: schedule.id,
        task: schedule.task,
        when: schedule.when,
        timezone: schedule.timezone,
        recurring: schedule.spec.kind === 'cron',
        next_run: schedule.nextRunAt === null ? null : describeInstant(schedule.nextRunAt, schedule.timezone),
        created_for: creator,
        how_to_end: `/unschedule ${schedule.id}`,
      };
    },
  });
}
