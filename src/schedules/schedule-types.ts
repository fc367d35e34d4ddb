// The contract of scheduled work (src/schedules/), shared by its parts: what a schedule is
// when stored, what "when" parses to, and what the thread commands and the schedule_task
// tool ask of the schedules. The parts: parse-when.ts (words → ScheduleSpec),
// occurrences.ts (a spec's next instant, croner), schedule-store.ts (Keyv), scheduler.ts
// (timers, claims, grace), schedule-service.ts (create / list / end, caps, checks),
// schedule-runs.ts (what an occurrence does), access-pauses.ts (a creator who lost access).
import { z } from 'zod';
import { SessionKeySchema, type SessionKey } from '../store/session-store.js';

/** When a schedule fires: once at an instant, or on a cron pattern read in a time zone. */
const ScheduleSpecSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('once'), at: z.number().int() }),
  /** `pattern`: 5 or 6 fields as croner reads them (minute first, or second first with 6). */
  z.object({ kind: z.literal('cron'), pattern: z.string().min(1), timezone: z.string().min(1) }),
]);
export type ScheduleSpec = z.infer<typeof ScheduleSpecSchema>;

/** A schedule as stored (schedule-store.ts), parsed with zod when read back. */
export const ScheduleSchema = z.object({
  id: z.string().min(1),
  /** The thread its runs go to: the thread it was made in. */
  key: SessionKeySchema,
  /** Who made it: each run is a turn of theirs (their roles, grants and spend). */
  creator: z.string().min(1),
  /** What the model is asked at each run. */
  task: z.string().min(1),
  spec: ScheduleSpecSchema,
  /** How the person wrote "when" (shown in /schedules). */
  when: z.string(),
  /** The time zone the spec was read in (the person's, else SCHEDULE_TZ). */
  timezone: z.string(),
  /** The next instant it is due (epoch ms); null once a one-off has run or nothing is left. */
  nextRunAt: z.number().int().nullable(),
  /** The last occurrence handled (ran, or was skipped): never handled twice. */
  lastDueAt: z.number().int().optional(),
  createdAt: z.number().int(),
  /** How it was made: the `/schedule` command or the model's schedule_task tool. */
  via: z.enum(['command', 'tool']),
  /**
   * Paused since this instant: a run found its creator may no longer use the bot in its
   * thread (access-pauses.ts). Absent while it runs.
   */
  pausedAt: z.number().int().optional(),
  /** Runs refused in a row because of that; at REFUSALS_TO_END it ends. Absent (0) while it runs. */
  accessRefusals: z.number().int().nonnegative().optional(),
});
export type Schedule = z.infer<typeof ScheduleSchema>;

/** What a person asks for; the service reads `when` in `timezone` and checks the caps. */
export interface ScheduleRequest {
  key: SessionKey;
  creator: string;
  when: string;
  task: string;
  /** The person's time zone (Slack users.info `tz`), else SCHEDULE_TZ. */
  timezone?: string;
  via: 'command' | 'tool';
}

export type ScheduleOutcome = { ok: true; schedule: Schedule } | { ok: false; reason: string };

/** What the thread commands and the tool ask of the schedules (core.schedules). */
export interface ScheduleDesk {
  create(request: ScheduleRequest): Promise<ScheduleOutcome>;
  /** A person's schedules on this platform and workspace; with `channel`, every schedule there (admins). */
  list(query: { platform: string; workspace: string; creator?: string; channel?: string }): Promise<Schedule[]>;
  /** End one: its creator, the thread's manager or an admin (`mayEnd` says who). */
  end(
    id: string,
    by: string,
    mayEnd: (schedule: Schedule) => boolean,
  ): Promise<{ ok: true; schedule: Schedule } | { ok: false; reason: string }>;
  /** /forget of a thread ends its schedules. Resolves with how many. */
  endForThread(key: SessionKey): Promise<number>;
}
