// The words people write for "when": the shared vocabulary (numbers, units, day names, a
// time of day) and the one-offs ("in 2 hours", "in 1h30m", "tomorrow at 9", "at 14:00",
// "on friday at 17:00", "2026-12-07 at 9:00"); recurring-words.ts reads "every …" with the
// same vocabulary. The set is small and closed on purpose: what it does not know it says so,
// naming the word, rather than guessing. "in 1 day" is 24 hours of elapsed time; "tomorrow
// at 9" is the clock, so the two differ on a daylight-saving day.
import type { ScheduleSpec } from './schedule-types.js';
import { addDays, instantOf, isRealDate, localTimeOf, clockWords, describeInstant } from './zoned-time.js';

/** A reading, or why not and how many words were understood first (to pick the best reason). */
export type Step<T> = { ok: true; value: T; next: number } | { ok: false; reason: string; understood: number };

export interface WhenContext {
  timezone: string;
  now: number;
}

export const WORKING_EXAMPLES = 'for example "in 2 hours" or "every weekday at 9:00"';
export const MINUTE_MS = 60_000;
export const UNIT_MS: Record<string, number> = {
  ...Object.fromEntries(['s', 'sec', 'secs', 'second', 'seconds'].map((unit) => [unit, 1000])),
  ...Object.fromEntries(['m', 'min', 'mins', 'minute', 'minutes'].map((unit) => [unit, MINUTE_MS])),
  ...Object.fromEntries(['h', 'hr', 'hrs', 'hour', 'hours'].map((unit) => [unit, 60 * MINUTE_MS])),
  ...Object.fromEntries(['d', 'day', 'days'].map((unit) => [unit, 24 * 60 * MINUTE_MS])),
  ...Object.fromEntries(['w', 'wk', 'wks', 'week', 'weeks'].map((unit) => [unit, 7 * 24 * 60 * MINUTE_MS])),
};
// A bound so that "in 99999999999 days" is a clear no rather than an instant Date cannot hold.
const FARTHEST_MS = 5 * 366 * 24 * 60 * MINUTE_MS;
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  'forty-five': 45,
  sixty: 60,
  ninety: 90,
};
export const DAY_NAMES: Record<string, number> = {
  sun: 0,
  sunday: 0,
  mon: 1,
  monday: 1,
  tue: 2,
  tues: 2,
  tuesday: 2,
  wed: 3,
  weds: 3,
  wednesday: 3,
  thu: 4,
  thur: 4,
  thurs: 4,
  thursday: 4,
  fri: 5,
  friday: 5,
  sat: 6,
  saturday: 6,
};

/** Lower case, one word per token: "9:30pm" → "9:30 pm", "2h" → "2 h", commas and "&" are list glue. */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/(\d|\s)([ap])\.m\.?/g, '$1$2m')
    .replace(/&/g, ' and ')
    .replace(/[,;]/g, ' ')
    .replace(/(\d)([a-z])/g, '$1 $2')
    .replace(/([a-z])(\d)/g, '$1 $2')
    .split(/\s+/)
    .filter((word) => word !== '');
}

export function fail(reason: string, understood: number): { ok: false; reason: string; understood: number } {
  return { ok: false, reason, understood };
}

export function numberAt(word: string | undefined): number | undefined {
  if (word === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(word)) return Number(word);
  return NUMBER_WORDS[word];
}

// ---- one-off: "in 2 hours", "in 1 hour and 30 minutes", "in half an hour" ----

export function readIn(words: string[], context: WhenContext): Step<ScheduleSpec> {
  let total = 0;
  let i = 1;
  let lastUnit = 0;
  while (i < words.length) {
    const start = i;
    if (total > 0 && words[i] === 'and') i += 1;
    if (total > 0 && words[i] === 'a' && words[i + 1] === 'half') {
      // "an hour and a half": half of the unit just read.
      total += lastUnit / 2;
      i += 2;
      continue;
    }
    let amount = numberAt(words[i]);
    if (words[i] === 'half' && (words[i + 1] === 'an' || words[i + 1] === 'a')) {
      amount = 0.5;
      i += 1;
    }
    const unit = UNIT_MS[words[i + 1] ?? ''];
    if (amount === undefined || unit === undefined) {
      if (total > 0) {
        i = start; // what follows is not another amount: the duration ended before it
        break;
      }
      const what = words.slice(1, 3).join(' ') || '(nothing)';
      return fail(
        `I didn't understand "${what}" after "in" as an amount of time. Try "in 30 minutes" or "in 2 hours".`,
        i,
      );
    }
    total += amount * unit;
    lastUnit = unit;
    i += 2;
  }
  if (total <= 0) return fail(`"${words.join(' ')}" is no time from now. Try "in 30 minutes" or "in 2 hours".`, 1);
  if (total > FARTHEST_MS)
    return fail(
      `"${words.slice(0, i).join(' ')}" is more than five years away. Try "in 2 hours" or a date such as "2027-01-15 at 9:00".`,
      1,
    );
  return { ok: true, value: { kind: 'once', at: Math.round(context.now + total) }, next: i };
}

// ---- one-off: "tomorrow at 9", "today at 17:30", "at 14:00", "on friday at 17:00", "2026-12-07 at 9:00" ----

type DayWord =
  | { kind: 'today' }
  | { kind: 'tomorrow' }
  | { kind: 'weekday'; weekday: number; notToday: boolean }
  | { kind: 'date'; year: number; month: number; day: number };

function readDayWord(words: string[], i: number): Step<DayWord> | undefined {
  const word = words[i];
  if (word === 'today' || word === 'tomorrow')
    return { ok: true, value: word === 'today' ? { kind: 'today' } : { kind: 'tomorrow' }, next: i + 1 };
  if (word === 'on' || word === 'next' || word === 'this') {
    const weekday = DAY_NAMES[words[i + 1] ?? ''];
    if (weekday !== undefined)
      return { ok: true, value: { kind: 'weekday', weekday, notToday: word === 'next' }, next: i + 2 };
    if (word === 'on' && words[i + 1] !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(words[i + 1] ?? ''))
      return readDayWord(words, i + 1);
    return undefined;
  }
  if (word !== undefined && DAY_NAMES[word] !== undefined)
    return { ok: true, value: { kind: 'weekday', weekday: DAY_NAMES[word] ?? 0, notToday: false }, next: i + 1 };
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(word ?? '');
  if (!date) return undefined;
  const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
  if (!isRealDate(year, month, day))
    return fail(`"${word}" is not a date on the calendar. Try "2027-01-15 at 9:00" or "tomorrow at 9:00".`, i);
  return { ok: true, value: { kind: 'date', year, month, day }, next: i + 1 };
}

export function readOnce(words: string[], context: WhenContext): Step<ScheduleSpec> {
  let i = 0;
  let day = readDayWord(words, i);
  if (day && !day.ok) return day;
  if (day) i = day.next;
  const hasAt = words[i] === 'at';
  if (hasAt) i += 1;
  if (!day && !hasAt) {
    return fail(
      `I couldn't read "${words.join(' ')}" as a time. Try "in 2 hours", "tomorrow at 9:00" or "every weekday at 9:00".`,
      0,
    );
  }
  const time = readTime(words, i);
  if (!time.ok) return time;
  i = time.next;
  if (!day) {
    day = readDayWord(words, i);
    if (day && !day.ok) return day;
    if (day) i = day.next;
  }
  const today = localTimeOf(context.now, context.timezone);
  const at = (offsetDays: number, date: { year: number; month: number; day: number } = addDays(today, offsetDays)) =>
    instantOf({ ...date, hour: time.value.hour, minute: time.value.minute, second: 0 }, context.timezone);
  const clock = clockWords(time.value.hour, time.value.minute);
  const passed = (said: string) =>
    fail(
      `"${said}" has already passed: it is now ${describeInstant(context.now, context.timezone)}. Try "tomorrow at ${clock}" or "in 2 hours".`,
      i,
    );
  let instant: number;
  const dayWord = day?.value;
  if (!dayWord) {
    instant = at(0);
    if (instant <= context.now) instant = at(1); // "at 14:00" said at 15:00 means tomorrow's
  } else if (dayWord.kind === 'today') {
    instant = at(0);
    if (instant <= context.now) return passed(words.slice(0, i).join(' '));
  } else if (dayWord.kind === 'tomorrow') {
    instant = at(1);
  } else if (dayWord.kind === 'weekday') {
    const ahead = (dayWord.weekday - today.weekday + 7) % 7;
    instant = at(ahead === 0 && dayWord.notToday ? 7 : ahead);
    if (instant <= context.now) instant = at(ahead + 7);
  } else {
    instant = at(0, dayWord);
    if (instant <= context.now) return passed(words.slice(0, i).join(' '));
  }
  return { ok: true, value: { kind: 'once', at: instant }, next: i };
}

/** "9", "09:30", "9.30", "9am", "5:15 pm", "17h30", "noon", "midnight" → hour and minute. */
export function readTime(words: string[], i: number): Step<{ hour: number; minute: number }> {
  const word = words[i];
  if (word === 'noon') return { ok: true, value: { hour: 12, minute: 0 }, next: i + 1 };
  if (word === 'midnight') return { ok: true, value: { hour: 0, minute: 0 }, next: i + 1 };
  const clock = /^(\d{1,2})(?:[:.](\d{2}))?$/.exec(word ?? '');
  if (!clock) {
    const said = word === undefined ? 'nothing' : `"${word}"`;
    return fail(`I expected a time of day but found ${said}. Try "at 9:00" or "at 5pm".`, i);
  }
  let hour = Number(clock[1]);
  let minute = Number(clock[2] ?? 0);
  let next = i + 1;
  let said = word ?? '';
  const suffix = words[next];
  if (suffix === 'am' || suffix === 'pm') {
    said += suffix;
    next += 1;
    if (hour < 1 || hour > 12 || minute > 59)
      return fail(`"${said}" is not a time of day. Try "at 9am" or "at 5:30pm".`, i);
    hour = (hour % 12) + (suffix === 'pm' ? 12 : 0);
  } else if (suffix === 'h' && clock[2] === undefined) {
    next += 1; // "17h30", "9h"
    if (/^\d{2}$/.test(words[next] ?? '')) minute = Number(words[next++]);
  }
  if (hour > 23 || minute > 59) return fail(`"${said}" is not a time of day. Try "at 9:00" or "at 17:30".`, i);
  return { ok: true, value: { hour, minute }, next };
}
