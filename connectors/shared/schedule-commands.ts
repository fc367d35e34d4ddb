// The schedule thread commands, for every platform (called from thread-commands.ts):
//   /schedule <when> <task>  someone who may manage the thread (its starter, admins, its
//                            profile's approvers; anyone who may start it, for a new one) sets
//                            scheduled work here; said in the thread, so everyone sees it exists
//   /schedules               the person's schedules on this platform and workspace, with their
//                            next run; an admin also sees every schedule in this channel (private)
//   /unschedule <id>         its creator, whoever may manage its thread (its starter, its
//                            profile's approvers), or an admin; said in the schedule's thread.
//                            The same people end a schedule paused because its creator lost
//                            access (its note tells the thread's approvers so)
// and the line /forget adds when the thread's schedules end with it. Every refusal is private.
// The person's task is their own text: it is escaped with the platform's markup wherever shown.
import { REFUSALS_TO_END } from '../../src/schedules/access-pauses.js';
import { describeInstant, splitWhenAndTask } from '../../src/schedules/parse-when.js';
import type { Schedule } from '../../src/schedules/schedule-types.js';
import { sessionIdOf } from '../../src/sessions/thread-records.js';
import type { ThreadCommandName } from './command-table.js';
import type { CommandContext, CommandMarkup } from './command-context.js';

const SCHEDULE_COMMANDS = ['schedule', 'schedules', 'unschedule'] as const satisfies readonly ThreadCommandName[];
export type ScheduleCommand = (typeof SCHEDULE_COMMANDS)[number];

/** The longest task text a list line shows (the whole task is in the thread's "set" line). */
const LIST_TASK_CHARS = 80;
/** The most schedules one /schedules answer lists (the caps keep it near this anyway). */
const LIST_MAX = 50;

export function isScheduleCommand(name: string): name is ScheduleCommand {
  return (SCHEDULE_COMMANDS as readonly string[]).includes(name);
}

export async function runScheduleCommand(
  command: { name: ScheduleCommand; args: string[] },
  context: CommandContext,
  markup: CommandMarkup,
): Promise<void> {
  const { key, userId, connector } = context;
  const whisper = (text: string): Promise<void> => connector.whisper(key.channel, userId, key.thread, text);
  const desk = context.schedules;
  if (!desk) return whisper('Scheduled work is not set up on this bot.');
  switch (command.name) {
    case 'schedule':
      return schedule(command.args.join(' '), context, markup, whisper);
    case 'schedules':
      return list(context, markup, whisper);
    case 'unschedule':
      return unschedule(command.args[0], context, markup, whisper);
  }
}

/** /forget ended the thread: its schedules end too. The sentence the answer gains, or ''. */
export async function endThreadSchedules(context: CommandContext): Promise<string> {
  if (!context.schedules) return '';
  try {
    const ended = await context.schedules.endForThread(context.key);
    return ended === 0 ? '' : ` ${ended === 1 ? 'Its schedule is' : `Its ${ended} schedules are`} ended too.`;
  } catch (error) {
    context.logger.warn({ err: error }, "could not end a forgotten thread's schedules");
    return ' Its schedules could not be ended: try /schedules and /unschedule.';
  }
}

async function schedule(
  text: string,
  context: CommandContext,
  markup: CommandMarkup,
  whisper: (text: string) => Promise<void>,
): Promise<void> {
  const { key, userId, manager, connector } = context;
  const { escape } = markup;
  const desk = context.schedules!;
  const allowed = await manager.controls.mayManageThread(sessionIdOf(key), key, userId, { external: context.external });
  if (!allowed.allowed) return whisper(`You cannot set schedules in this thread: ${escape(allowed.reason)}`);
  const timezone = (await personalZone(context)) ?? context.defaultTimezone;
  const split = splitWhenAndTask(text, { timezone, now: Date.now() });
  if (!split.ok) return whisper(escape(split.reason));
  const made = await desk.create({
    key,
    creator: userId,
    when: split.when,
    task: split.task,
    timezone,
    via: 'command',
  });
  if (!made.ok) return whisper(escape(made.reason));
  const { schedule: set } = made;
  // Its runs' notes are shown in the thread's session: a schedule set with a thread's first words opens it (its creator starts it).
  await manager
    .openThread(key, userId)
    .catch((error: unknown) =>
      context.logger.warn({ err: error, scheduleId: set.id }, "could not open a new schedule's thread"),
    );
  // A one-off's words already say its one time ("once, Mon 7 Dec 2026, 11:00 (UTC)"): a "next run" would only repeat it.
  const when =
    set.spec.kind === 'once'
      ? `End it before then with \`/unschedule ${set.id}\`.`
      : `Next run: ${set.nextRunAt === null ? 'none left' : describeInstant(set.nextRunAt, set.timezone)}. End it with \`/unschedule ${set.id}\`.`;
  return connector.post(
    key.channel,
    key.thread,
    `⏰ <@${userId}> set schedule \`${set.id}\`: ${markup.bold(escape(set.task))}, ${escape(split.words)}. ${when}`,
  );
}

async function list(
  context: CommandContext,
  markup: CommandMarkup,
  whisper: (text: string) => Promise<void>,
): Promise<void> {
  const { key, userId } = context;
  const desk = context.schedules!;
  const admin = isAdmin(context);
  const place = { platform: key.platform, workspace: key.workspace };
  const found = new Map<string, Schedule>();
  for (const one of await desk.list({ ...place, creator: userId })) found.set(one.id, one);
  if (admin) for (const one of await desk.list({ ...place, channel: key.channel })) found.set(one.id, one);
  const all = [...found.values()].sort(
    (a, b) => (a.nextRunAt ?? Number.POSITIVE_INFINITY) - (b.nextRunAt ?? Number.POSITIVE_INFINITY),
  );
  if (all.length === 0) {
    return whisper(
      `${admin ? 'There are no schedules in this channel, and you have none here.' : 'You have no schedules here.'} Set one with \`/schedule every weekday at 9:00 summarise the open incidents\`.`,
    );
  }
  const lines = all.slice(0, LIST_MAX).map((one) => listLine(one, context, markup));
  const heading = admin ? 'Your schedules here and every schedule in this channel' : 'Your schedules here';
  const more = all.length > LIST_MAX ? `\n…and ${all.length - LIST_MAX} more.` : '';
  return whisper(`${markup.bold(`${heading}:`)}\n${lines.join('\n')}${more}\nEnd one with \`/unschedule <id>\`.`);
}

function listLine(one: Schedule, context: CommandContext, markup: CommandMarkup): string {
  const task = one.task.length > LIST_TASK_CHARS ? `${one.task.slice(0, LIST_TASK_CHARS - 1)}…` : one.task;
  const next = one.nextRunAt === null ? 'no run left' : `next ${describeInstant(one.nextRunAt, one.timezone)}`;
  if (one.pausedAt !== undefined) {
    // Paused because its creator lost access (src/schedules/access-pauses.ts): what ends or resumes it.
    const left = REFUSALS_TO_END - (one.accessRefusals ?? 0);
    const state = `⏸️ paused: <@${one.creator}> may no longer use the bot there; it resumes by itself once they may, and ends after ${left} more refused run${left === 1 ? '' : 's'} (${next})`;
    return `• \`${one.id}\` ${markup.escape(task)}: ${markup.escape(one.when)} · ${state}${by(one, context)}${where(one, context)}`;
  }
  return `• \`${one.id}\` ${markup.escape(task)}: ${markup.escape(one.when)} · ${next}${by(one, context)}${where(one, context)}`;
}

function by(one: Schedule, context: CommandContext): string {
  return one.creator === context.userId ? '' : ` · by <@${one.creator}>`;
}

function where(one: Schedule, context: CommandContext): string {
  return one.key.channel === context.key.channel
    ? one.key.thread === context.key.thread
      ? ' · this thread'
      : ' · this channel'
    : '';
}

async function unschedule(
  id: string | undefined,
  context: CommandContext,
  markup: CommandMarkup,
  whisper: (text: string) => Promise<void>,
): Promise<void> {
  const { key, userId, manager, connector } = context;
  const desk = context.schedules!;
  if (!id) return whisper('Say which schedule: `/unschedule s-abc123` (`/schedules` lists yours with their ids).');
  const wanted = id.trim().toLowerCase();
  // Only this platform and workspace's schedules are in reach: another's is "not there", not "not yours".
  const target = (await desk.list({ platform: key.platform, workspace: key.workspace })).find(
    (one) => one.id === wanted,
  );
  if (!target)
    return whisper(
      `There is no schedule "${markup.escape(id.trim())}" here. \`/schedules\` lists yours with their ids.`,
    );
  const mayEnd =
    target.creator === userId ||
    isAdmin(context) ||
    (
      await manager.controls.mayManageThread(sessionIdOf(target.key), target.key, userId, {
        external: context.external,
      })
    ).allowed;
  const ended = await desk.end(target.id, userId, (one) => one.id === target.id && mayEnd);
  if (!ended.ok) return whisper(markup.escape(ended.reason));
  const said = `⏰ Schedule \`${ended.schedule.id}\` (${markup.escape(ended.schedule.task)}) was ended by <@${userId}>.`;
  const there = ended.schedule.key;
  await connector.post(there.channel, there.thread, said);
  if (there.channel !== key.channel || there.thread !== key.thread)
    await whisper(`Ended \`${ended.schedule.id}\`; its thread says so.`);
}

function isAdmin(context: CommandContext): boolean {
  return context.operator === true || context.manager.isAdmin(context.userId);
}

/** The person's own zone, when the platform tells it (Slack); a failed lookup means "not known". */
async function personalZone(context: CommandContext): Promise<string | undefined> {
  if (!context.timezone) return undefined;
  try {
    return (await context.timezone())?.trim() || undefined;
  } catch (error) {
    context.logger.debug({ err: error }, "could not read the person's time zone; using SCHEDULE_TZ");
    return undefined;
  }
}
