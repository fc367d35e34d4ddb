// "When" as a person writes it, read into a ScheduleSpec in their time zone: cron expressions
// (5 fields, or 6 with seconds first; bare, in backticks or in quotes), ISO times, and the
// words of when-words.ts. Also: splitting `/schedule <when> <task>` into its two halves, the
// check that a schedule fires at all and not too often, and the line that names an instant.
// Pure functions over an injected `now`: no clock, no I/O. Every "no" is a sentence meant for
// a private answer in chat: what was not understood, and two forms that work.
import { Cron } from 'croner';
import { cronInWords, describeCron } from './cron-words.js';
import { nextRuns } from './occurrences.js';
import type { ScheduleSpec } from './schedule-types.js';
import { isRecurringStart, readRecurring } from './recurring-words.js';
import { WORKING_EXAMPLES, readIn, readOnce, wordsOf, type Step, type WhenContext } from './when-words.js';
import { describeInstant, instantOf, isKnownTimezone, isRealDate } from './zoned-time.js';

export { describeInstant } from './zoned-time.js';

export type WhenReading = { ok: true; spec: ScheduleSpec; words: string } | { ok: false; reason: string };
export type CommandReading =
  { ok: true; spec: ScheduleSpec; when: string; words: string; task: string } | { ok: false; reason: string };

/** A reading inside this file: on failure, how many words were understood first. */
type Reading = { ok: true; spec: ScheduleSpec; words: string } | { ok: false; reason: string; understood: number };

// The longest "when" a command can open with: "every mon, wed and fri at 8:15 am" is 9 words,
// a 6-field cron in backticks 6. Bounding it keeps a long task from costing a parse per word.
const MAX_WHEN_WORDS = 16;

// cron nicknames croner knows, written out, so the stored pattern is always 5 fields.
const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

// An offset at the end of an ISO time ("Z", "+01:00", "-0800") means the zone is given.
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:t|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Reads `when` in `options.timezone`; one-offs must be after `options.now`. */
export function parseWhen(when: string, options: WhenContext): WhenReading {
  const reading = readWhen(when, options);
  return reading.ok ? reading : { ok: false, reason: reading.reason };
}

/**
 * `/schedule <when> <task>`: the longest opening that reads as a "when", the rest the task
 * (a separator such as ":", "—", "-", "|" or "to" between them is dropped). Two guards on
 * "longest": a bare 6-field cron must look like one (isDoubtfulSixFields), and a longer
 * opening that failed further in wins with its reason (see below).
 */
export function splitWhenAndTask(text: string, options: WhenContext): CommandReading {
  const words = [...text.matchAll(/\S+/g)].map((match) => match.index + match[0].length);
  if (words.length === 0) {
    return {
      ok: false,
      reason: `Say when and what, e.g. "/schedule in 2 hours check whether the deploy finished" or "/schedule every weekday at 9:00 summarise the open incidents".`,
    };
  }
  const zone = zoneProblem(options.timezone);
  if (zone) return { ok: false, reason: zone };
  let best: Extract<Reading, { ok: false }> | undefined;
  for (let count = Math.min(words.length, MAX_WHEN_WORDS); count >= 1; count -= 1) {
    const end = words[count - 1] ?? 0;
    const reading = readWhen(text.slice(0, end), options);
    if (reading.ok && !isDoubtfulSixFields(reading.spec, text.slice(0, end))) {
      // A longer opening that failed further in than this one reaches ("every day at 9:00
      // and 17:30 …" fails at "17:30") is what the person meant: say why, rather than
      // schedule 09:00 alone with "and 17:30 …" as the task.
      if (best && best.understood > wordsOf(unquote(cleanWhen(text.slice(0, end)))).length)
        return { ok: false, reason: best.reason };
      const task = dropSeparator(text.slice(end));
      const when = cleanWhen(text.slice(0, end));
      if (task === '') {
        return {
          ok: false,
          reason: `I read "${when}" as ${reading.words}, but there is no task after it. Say what to do, e.g. "/schedule ${when} summarise the open incidents".`,
        };
      }
      return { ok: true, spec: reading.spec, when, words: reading.words, task };
    }
    // Longest first, so on a tie the reason quotes the most of what was written.
    if (!reading.ok && (!best || reading.understood > best.understood)) best = reading;
  }
  if (best && best.understood > 0) return { ok: false, reason: best.reason };
  const opening = text.trim().split(/\s+/).slice(0, 4).join(' ');
  return {
    ok: false,
    reason: `I couldn't find when to run it at the start of "${opening}". Put the time first, e.g. "/schedule in 2 hours check whether the deploy finished" or "/schedule every weekday at 9:00 summarise the open incidents".`,
  };
}

/**
 * "0 9 * * 1-5 3 bullet points": read as 6 fields, the task's "3" would become the day of
 * week and "1-5" the months. A bare 6-field cron is taken only when its month field is "*",
 * as written with seconds it nearly always is ("0 0 9 * * 1-5"); otherwise the 5 fields win.
 * In backticks or quotes there is no doubt.
 */
function isDoubtfulSixFields(spec: ScheduleSpec, whenText: string): boolean {
  if (spec.kind !== 'cron' || unquote(cleanWhen(whenText)) !== cleanWhen(whenText)) return false;
  const fields = spec.pattern.split(' ');
  return fields.length === 6 && fields[4] !== '*';
}

/**
 * Why `spec` cannot be kept: it never fires after `now`, or two of its next 50 runs are closer
 * than `minIntervalMs` (SCHEDULE_MIN_INTERVAL). Undefined when it is fine. Fifty runs see a
 * close pair that repeats daily, weekly or monthly; a pattern that is close only once a year
 * may pass, which costs one extra run, not a flood.
 */
export function cadenceProblem(
  spec: ScheduleSpec,
  options: { now: number; minIntervalMs: number },
): string | undefined {
  let runs: number[];
  try {
    runs = nextRuns(spec, options.now, 50);
  } catch (error) {
    return `The schedule \`${spec.kind === 'cron' ? spec.pattern : spec.at}\` cannot be read (${errorText(error)}). Try "every weekday at 9:00" or "0 9 * * 1-5".`;
  }
  if (spec.kind === 'once') {
    return runs.length === 0
      ? `That time, ${describeInstant(spec.at, 'UTC')}, has already passed. Try "in 2 hours" or "tomorrow at 9:00".`
      : undefined;
  }
  if (runs.length === 0) {
    return `The cron expression \`${spec.pattern}\` never fires: no date matches it (like 30 February). Try "0 9 * * 1-5" (weekdays at 09:00) or "0 10 1 * *" (the 1st of each month at 10:00).`;
  }
  let closest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < runs.length; i += 1) closest = Math.min(closest, (runs[i] ?? 0) - (runs[i - 1] ?? 0));
  if (closest >= options.minIntervalMs) return undefined;
  const gap = closest < 60_000 ? `${closest / 1000} second${closest === 1000 ? '' : 's'}` : minutesWords(closest);
  const inWords = cronInWords(spec.pattern);
  // Suggest only what the minimum allows: with SCHEDULE_MIN_INTERVAL at 2 hours, not "every hour".
  const allowed: [number, string][] = [
    [15, 'every 15 minutes'],
    [60, 'every hour'],
    [24 * 60, 'every day at 9:00'],
    [7 * 24 * 60, 'every monday at 9:00'],
  ];
  const [first = 'every monday at 9:00', second = 'every month on the 1st at 9:00'] = allowed
    .filter(([minutes]) => options.minIntervalMs <= minutes * 60_000)
    .map(([, example]) => example);
  return (
    `\`${spec.pattern}\`${inWords ? ` (${inWords})` : ''} would run as little as ${gap} apart, more often than the minimum of ` +
    `${minutesWords(options.minIntervalMs)} between runs (SCHEDULE_MIN_INTERVAL). Try "${first}" or "${second}".`
  );
}

function readWhen(raw: string, options: WhenContext): Reading {
  const zone = zoneProblem(options.timezone);
  if (zone) return fail(zone, 0);
  const when = unquote(cleanWhen(raw));
  if (when === '') return fail(`Say when to run it, ${WORKING_EXAMPLES}.`, 0);
  const cron = readCron(when, options.timezone);
  if (cron) return cron;
  const iso = ISO_TIME.exec(when);
  if (iso) return readIsoTime(when, iso, options);
  return readWords(wordsOf(when), options);
}

/** Words: "in …", a recurring time, or a one-off; every word must be read. */
function readWords(words: string[], options: WhenContext): Reading {
  let reading: Step<ScheduleSpec>;
  if (words[0] === 'in') reading = readIn(words, options);
  else if (isRecurringStart(words)) {
    const pattern = readRecurring(words);
    reading = pattern.ok
      ? { ...pattern, value: { kind: 'cron', pattern: pattern.value, timezone: options.timezone } }
      : pattern;
  } else reading = readOnce(words, options);
  if (!reading.ok) return reading;
  if (reading.next < words.length) {
    const understood = words.slice(0, reading.next).join(' ');
    const rest = words.slice(reading.next).join(' ');
    return fail(`I understood "${understood}" but not "${rest}" after it. Try ${WORKING_EXAMPLES}.`, reading.next);
  }
  return { ok: true, spec: reading.value, words: wordsFor(reading.value, options.timezone) };
}

/** A cron expression, when `when` looks like one (else undefined: the words are tried). */
function readCron(when: string, timezone: string): Reading | undefined {
  const nickname = NICKNAMES[when.toLowerCase()];
  const fields = nickname ? nickname.split(' ') : when.split(/\s+/);
  // Minute and hour fields (second and minute with 6) are digits and * / , - ? only, and no
  // field is a word of more than a day or month name: "in 2 hours" or "at 9 tomorrow" never
  // pass, "0 9 * * mon-fri" does.
  const cronish = (field: string) => /^[\d*?/,-]+$/.test(field);
  if (fields.length < 4 || !cronish(fields[0] ?? '') || !cronish(fields[1] ?? '')) return undefined;
  if (!fields.every((field) => /^[\da-z*?/,#-]+$/i.test(field))) return undefined;
  const pattern = fields.join(' ');
  const shape = `A cron expression has 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first: for example "0 9 * * 1-5" (weekdays at 09:00) or "*/15 * * * *" (every 15 minutes).`;
  if (fields.length > 6) return fail(`"${pattern}" has ${fields.length} fields. ${shape}`, 0);
  if (fields.length === 4) return fail(`"${pattern}" has 4 fields. ${shape}`, 0);
  try {
    new Cron(pattern, { timezone, paused: true });
  } catch (error) {
    // Ranked as two or three words understood: above text that is no cron at all, and the
    // usual 5 fields above 6, so that /schedule quotes "0 9 * * 8", not "0 9 * * 8 summarise".
    return fail(
      `"${pattern}" is not a cron expression I can read (${errorText(error)}). ${shape}`,
      fields.length === 5 ? 3 : 2,
    );
  }
  const spec: ScheduleSpec = { kind: 'cron', pattern, timezone };
  return { ok: true, spec, words: wordsFor(spec, timezone) };
}

function readIsoTime(when: string, iso: RegExpExecArray, options: WhenContext): Reading {
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((index) => Number(iso[index] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (!isRealDate(year, month, day) || hour > 23 || minute > 59 || second > 59) {
    return fail(`"${when}" is not a real date and time. Try "2027-01-15 09:00" or "tomorrow at 9:00".`, 1);
  }
  const offset = iso[7];
  const at = offset
    ? Date.UTC(year, month - 1, day, hour, minute, second) - offsetMs(offset)
    : instantOf({ year, month, day, hour, minute, second }, options.timezone);
  if (at <= options.now) {
    return fail(
      `"${when}" has already passed: it is now ${describeInstant(options.now, options.timezone)}. Try a later time, e.g. "tomorrow at 9:00" or "in 2 hours".`,
      1,
    );
  }
  const spec: ScheduleSpec = { kind: 'once', at };
  return { ok: true, spec, words: wordsFor(spec, options.timezone) };
}

/** "+01:00", "-0800", "+05", "z" → how far the zone is ahead of UTC, in ms. */
function offsetMs(offset: string): number {
  if (offset.toLowerCase() === 'z') return 0;
  const digits = offset.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0);
  return (offset.startsWith('-') ? -1 : 1) * minutes * 60_000;
}

/** "every weekday at 09:00 (Europe/Paris)", "once, Mon 7 Dec 2026, 09:00 (Europe/Paris)". */
function wordsFor(spec: ScheduleSpec, timezone: string): string {
  if (spec.kind === 'once') return `once, ${describeInstant(spec.at, timezone)}`;
  return `${describeCron(spec.pattern)} (${spec.timezone})`;
}

function zoneProblem(timezone: string): string | undefined {
  if (isKnownTimezone(timezone)) return undefined;
  return `"${timezone}" is not a time zone I know, so I can't tell when that is. Use a name such as "Europe/Paris" or "America/Los_Angeles".`;
}

function fail(reason: string, understood: number): Extract<Reading, { ok: false }> {
  return { ok: false, reason, understood };
}

/** The "when" without trailing separators or spaces: "in 2 hours," → "in 2 hours". */
function cleanWhen(raw: string): string {
  return raw.trim().replace(/[\s,;:.|—–-]+$/u, '');
}

/** `0 9 * * 1-5`, "0 9 * * 1-5", '…', “…” → what is inside. */
function unquote(text: string): string {
  const quoted = /^(`+|"|'|“|‘)([\s\S]*?)(`+|"|'|”|’)$/u.exec(text);
  return quoted ? (quoted[2] ?? '').trim() : text;
}

/** The task after the "when": one separator (":", "—", "-", "|", "to", ",") dropped. */
function dropSeparator(rest: string): string {
  return rest
    .trim()
    .replace(/^(?:[:|—–,-]+|to\b)\s*/iu, '')
    .trim();
}

function minutesWords(ms: number): string {
  const minutes = Math.round((ms / 60_000) * 10) / 10;
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Cron\w*:\s*/, '').replace(/\.$/, '');
}
