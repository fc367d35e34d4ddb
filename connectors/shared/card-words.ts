// The words of a card's decisions and "always" buttons, the same on every platform: a person
// reads who decided what, and whose requests an "always" covers, in one vocabulary.
import type { SchedulePaused } from '../../src/sessions/session-observer.js';
import type { InboxItem } from '../../src/engine/index.js';
import { BOT_ITSELF, declinedByReply } from '../../src/sessions/prompt-replies.js';
import type { CardPrompt } from './thread-surface.js';

const DECISION_WORDS: Readonly<Record<string, string>> = {
  once: 'Approved',
  always_tool: 'Always allowed for their own requests',
  always_command: 'This command always allowed for their own requests',
  always_tool_all: 'Always allowed for everyone',
  always_command_all: 'This command always allowed for everyone',
  deny: 'Denied',
  approve: 'Plan approved',
  reject: 'Plan rejected',
  grant: 'Access granted',
  interrupted: 'Closed: the turn was stopped',
  replied: 'Declined: answered by a reply',
};

/** The note under a stop when replies sent before it were not acted on (each is marked as dropped). */
export const DROPPED_AT_STOP_NOTE =
  'What you sent before the stop was not acted on (marked ❌). Send it again to carry on.';

/**
 * The note under a message whose files the model does not get in full, one line each (a
 * download that failed, a cap, a type it cannot read). The lines name files as people named
 * them: the surface escapes them like any untrusted text.
 */
export function filesNoteText(problems: readonly string[]): string {
  const lines = problems.map((problem) => `• ${problem}`);
  return `Some files shared here did not reach the model:\n${lines.join('\n')}`;
}

/** The note a working thread gets when the bot shuts down for a restart (a deploy): the turn carries on after it. */
export const RESTARTING_NOTE = 'The bot is restarting. It will carry on here in a moment.';

/** The note a thread gets when an instance takes it over from one that stopped renewing its lease (cluster mode). */
export const TAKEN_OVER_NOTE =
  'The instance of the bot that was working here stopped responding; another one picked this thread up and carries on from where it was.';

/** "Approved by <@U…>": a platform that renders `<@id>` mentions shows the name. */
export function decisionText(decision: { by: string; choice: string }): string {
  const what = DECISION_WORDS[decision.choice] ?? `Answered "${decision.choice}"`;
  return decision.by ? `${what} by <@${decision.by}>` : what;
}

/**
 * What a person who clicks a card that no longer waits reads, privately: what became of the
 * call and who made it so ("Stopped by <@U…> before anyone answered.", "Already approved by
 * <@U…>."). The card says it too, but the person's client may still show the buttons (a
 * second window, a slow one), and a click that changes nothing must not pass in silence.
 */
export function staleClickText(item: InboxItem): string {
  const resolution = item.resolution;
  if (item.state !== 'resolved' || !resolution) return 'This was already answered.';
  const by = item.resolvedBy ?? (resolution.kind === 'approval' ? resolution.by : undefined);
  const byWhom = by ? ` by <@${by}>` : '';
  switch (resolution.kind) {
    case 'interrupted':
      if (by === BOT_ITSELF) return 'Closed by the bot: nobody answered in time.';
      return by ? `Stopped${byWhom} before anyone answered.` : 'Closed: the turn was stopped before anyone answered.';
    case 'approval': {
      if (declinedByReply(resolution))
        return by ? `Already declined: <@${by}> replied instead.` : 'Already declined by a reply.';
      if (resolution.outcome === 'deny') return `Already denied${byWhom}.`;
      if (resolution.outcome === 'once') return `Already approved${byWhom}.`;
      return `Already approved${byWhom} (${(DECISION_WORDS[resolution.outcome] ?? '').toLowerCase()}).`;
    }
    case 'plan':
      return `Plan already ${resolution.approved ? 'approved' : 'rejected'}${byWhom}.`;
    case 'directory':
      return `Access already ${resolution.granted ? 'granted' : 'refused'}${byWhom}.`;
    case 'question':
      return `Already answered${byWhom}.`;
  }
}

/**
 * An "always" button says whose requests it covers ("for me", or "for everyone", which only
 * admins are offered) and where (this thread, or this channel), within the platform's label
 * limit (`maxLength`).
 */
export function alwaysLabel(
  subject: string,
  who: 'me' | 'everyone',
  scope: CardPrompt['grantScope'],
  maxLength: number,
): string {
  const where = scope === 'channel' ? 'in this channel' : 'in this thread';
  const label = `Always allow ${subject} for ${who} ${where}`;
  return label.length <= maxLength ? label : `Always allow this tool for ${who} ${where}`;
}

/** The most approvers a paused schedule's note names (ADMINS may be a long list); the rest are counted. */
const MAX_APPROVERS_NAMED = 10;
/** The task as the note quotes it: the schedule's id says which one, /schedules shows the rest. */
const TASK_CHARS = 200;

/**
 * The one note a thread gets when a schedule's run is refused because its creator may no
 * longer use the bot there (src/schedules/access-pauses.ts), addressed to the people who
 * approve there: who lost access, that it is paused, how it resumes or ends. `mention` writes a
 * person as the platform pings them; `escape` makes the task (a person's words) inert.
 */
export function schedulePausedText(
  note: SchedulePaused,
  mention: (id: string) => string,
  escape: (text: string) => string,
): string {
  const named = note.approvers.slice(0, MAX_APPROVERS_NAMED);
  const more = note.approvers.length - named.length;
  const to = named.length > 0 ? `${named.map(mention).join(' ')}${more > 0 ? ` and ${more} more` : ''}: ` : '';
  const task = note.task.length > TASK_CHARS ? `${note.task.slice(0, TASK_CHARS - 1)}…` : note.task;
  const what = `schedule \`${note.scheduleId}\` (“${escape(task)}”)`;
  const who = `${mention(note.creator)}, who set it, may no longer use the bot here`;
  const text =
    note.runsLeft === 0
      ? `the run of ${what} was not made: ${who}. That was its only run, so it has ended.`
      : `${what} is paused: ${who}, and each of its runs would be their turn, so none runs and nothing more is said about it here. ` +
        `It resumes by itself at a run once they may use the bot here again (an admin adds them back), and ends by itself after ${note.runsLeft} more refused run${note.runsLeft === 1 ? '' : 's'}` +
        `${note.next ? ` (the next is due ${note.next})` : ''}. End it now with \`/unschedule ${note.scheduleId}\`.`;
  return to ? `${to}${text}` : `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}
