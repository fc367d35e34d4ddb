// The words people write for "when", read into a ScheduleSpec: one-offs ("in 2 hours",
// "tomorrow at 9", "at 14:00", "on friday at 17:00", "2026-12-07 at 9:00") and recurring
// times ("every weekday at 9:00", "every mon, wed and fri at 8:15", "every 15 minutes",
// "every 2 hours", "mondays at 9am", "every month on the 1st at 10:00"), which become
// cron patterns. The set is small and closed on purpose: what it does not know it says so,
// naming the word, rather than guessing (parse-when.ts adds the cron and ISO forms).
import type { ScheduleSpec } from './schedule-types.js';
import { addDays, instantOf, isRealDate, localTimeOf, clockWords, describeInstant } from './zoned-time.js';

/** A reading, or why not and how many words were understood first (to pick the best reason). */
export type WordsReading = { ok: true; spec: ScheduleSpec } | { ok: false; reason: string; understood: number };
type Step<T> = { ok: true; value: T; next: number } | { ok: false; reason: string; understood: number };

export interface WhenContext {
  timezone: string;
  now: number;
}

export const WORKING_EXAMPLES = 'for example "in 2 hours" or "every weekday at 9:00"';
const MINUTE_MS = 60_000;
const UNIT_MS: Record<string, number> = {
  ...Object.fromEntries(['s', 'sec', 'secs', 'second', 'seconds'].map((unit) => [unit, 1000])),
  ...Object.fromEntries(['m', 'min', 'mins', 'minute', 'minutes'].map((unit) => [unit, MINUTE_MS])),
  ...Object.fromEntries(['h', 'hr', 'hrs', 'hour', 'hours'].map((unit) => [unit, 60 * MINUTE_MS])),
  ...Object.fromEntries(['d', 'day', 'days'].map((unit) => [unit, 24 * 60 * MINUTE_MS])),
  ...Object.fromEntries(['w', 'wk', 'wks', 'week', 'weeks'].map((unit) => [unit, 7 * 24 * 60 * MINUTE_MS])),
};
// A bound so that "in 99999999999 days" is a clear no rather than an instant Date cannot hold.
const FARTHEST_MS = 5 * 366 * 24 * 60 * MINUTE_MS;
const NUMBER_WORDS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, fifteen: 15, twenty: 20, thirty: 30, 'forty-five': 45, sixty: 60, ninety: 90,
};
const DAY_NAMES: Record<string, number> = {
  sun: 0, sunday: 0, mon: 1, monday: 1, tue: 2, tues: 2, tuesday: 2, wed: 3, weds: 3, wednesday: 3,
  thu: 4, thur: 4, thurs: 4, thursday: 4, fri: 5, friday: 5, sat: 6, saturday: 6,
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

/** Reads every word of `words`, or says which one it could not. */
export function readWords(words: string[], context: WhenContext): WordsReading {
  let reading: Step<ScheduleSpec>;
  if (words[0] === 'in') reading = readIn(words, context);
  else if (isRecurringStart(words)) {
    const pattern = readRecurring(words);
    reading = pattern.ok ? { ...pattern, value: { kind: 'cron', pattern: pattern.value, timezone: context.timezone } } : pattern;
  } else reading = readOnce(words, context);
  if (!reading.ok) return reading;
  if (reading.next < words.length) {
    const understood = words.slice(0, reading.next).join(' ');
    const rest = words.slice(reading.next).join(' ');
    return fail(`I understood "${understood}" but not "${rest}" after it. Try ${WORKING_EXAMPLES}.`, reading.next);
  }
  return { ok: true, spec: reading.value };
}

function fail(reason: string, understood: number): { ok: false; reason: string; understood: number } {
  return { ok: false, reason, understood };
}

function numberAt(word: string | undefined): number | undefined {
  if (word === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(word)) return Number(word);
  return NUMBER_WORDS[word];
}

// ---- one-off: "in 2 hours", "in 1 hour and 30 minutes", "in half an hour" ----

function readIn(words: string[], context: WhenContext): Step<ScheduleSpec> {
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
      return fail(`I didn't understand "${what}" after "in" as an amount of time. Try "in 30 minutes" or "in 2 hours".`, i);
    }
    total += amount * unit;
    lastUnit = unit;
    i += 2;
  }
  if (total <= 0) return fail(`"${words.join(' ')}" is no time from now. Try "in 30 minutes" or "in 2 hours".`, 1);
  if (total > FARTHEST_MS) return fail(`"${words.slice(0, i).join(' ')}" is more than five years away. Try "in 2 hours" or a date such as "2027-01-15 at 9:00".`, 1);
  return { ok: true, value: { kind: 'once', at: Math.round(context.now + total) }, next: i };
}

// ---- one-off: "tomorrow at 9", "today at 17:30", "at 14:00", "on friday at 17:00", "2026-12-07 at 9:00" ----

type DayWord = { kind: 'today' } | { kind: 'tomorrow' } | { kind: 'weekday'; weekday: number; notToday: boolean } | { kind: 'date'; year: number; month: number; day: number };

function readDayWord(words: string[], i: number): Step<DayWord> | undefined {
  const word = words[i];
  if (word === 'today' || word === 'tomorrow') return { ok: true, value: word === 'today' ? { kind: 'today' } : { kind: 'tomorrow' }, next: i + 1 };
  if (word === 'on' || word === 'next' || word === 'this') {
    const weekday = DAY_NAMES[words[i + 1] ?? ''];
    if (weekday !== undefined) return { ok: true, value: { kind: 'weekday', weekday, notToday: word === 'next' }, next: i + 2 };
    if (word === 'on' && words[i + 1] !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(words[i + 1] ?? '')) return readDayWord(words, i + 1);
    return undefined;
  }
  if (word !== undefined && DAY_NAMES[word] !== undefined) return { ok: true, value: { kind: 'weekday', weekday: DAY_NAMES[word] ?? 0, notToday: false }, next: i + 1 };
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(word ?? '');
  if (!date) return undefined;
  const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
  if (!isRealDate(year, month, day)) return fail(`"${word}" is not a date on the calendar. Try "2027-01-15 at 9:00" or "tomorrow at 9:00".`, i);
  return { ok: true, value: { kind: 'date', year, month, day }, next: i + 1 };
}

function readOnce(words: string[], context: WhenContext): Step<ScheduleSpec> {
  let i = 0;
  let day = readDayWord(words, i);
  if (day && !day.ok) return day;
  if (day) i = day.next;
  const hasAt = words[i] === 'at';
  if (hasAt) i += 1;
  if (!day && !hasAt) {
    return fail(`I couldn't read "${words.join(' ')}" as a time. Try "in 2 hours", "tomorrow at 9:00" or "every weekday at 9:00".`, 0);
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
    fail(`"${said}" has already passed: it is now ${describeInstant(context.now, context.timezone)}. Try "tomorrow at ${clock}" or "in 2 hours".`, i);
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
function readTime(words: string[], i: number): Step<{ hour: number; minute: number }> {
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
    if (hour < 1 || hour > 12 || minute > 59) return fail(`"${said}" is not a time of day. Try "at 9am" or "at 5:30pm".`, i);
    hour = (hour % 12) + (suffix === 'pm' ? 12 : 0);
  } else if (suffix === 'h' && clock[2] === undefined) {
    next += 1; // "17h30", "9h"
    if (/^\d{2}$/.test(words[next] ?? '')) minute = Number(words[next++]);
  }
  if (hour > 23 || minute > 59) return fail(`"${said}" is not a time of day. Try "at 9:00" or "at 17:30".`, i);
  return { ok: true, value: { hour, minute }, next };
}

// ---- recurring: "every …", "daily at 9", "weekdays at 9am", "mondays and thursdays at 10" ----

function isRecurringStart(words: string[]): boolean {
  const first = words[0] ?? '';
  const second = words[1] ?? '';
  if (['every', 'each', 'daily', 'hourly', 'weekly', 'monthly', 'weekdays', 'weekends'].includes(first)) return true;
  if (first === 'on' && (second === 'weekdays' || second === 'weekends' || isPluralDay(second))) return true;
  return isPluralDay(first) || isDayRange(first);
}

function isPluralDay(word: string): boolean {
  return word.endsWith('s') && DAY_NAMES[word.slice(0, -1)] !== undefined;
}

function isDayRange(word: string): boolean {
  const [from, to] = word.split('-');
  return to !== undefined && DAY_NAMES[from ?? ''] !== undefined && DAY_NAMES[to] !== undefined;
}

/** A 5-field cron pattern (minute hour day-of-month month day-of-week); every month always. */
function cron(minute: number | string, hour: number | string, dayOfMonth: string, dayOfWeek: string): string {
  return `${minute} ${hour} ${dayOfMonth} * ${dayOfWeek}`;
}

function readRecurring(words: string[]): Step<string> {
  let i = 0;
  const first = words[0];
  if (first === 'hourly') return { ok: true, value: cron(0, '*', '*', '*'), next: 1 };
  if (first === 'daily') return atTime(words, 1, '*', '*');
  // "weekdays at 9", and "on weekdays at 9" the same
  const plural = first === 'on' ? words[1] : first;
  const after = first === 'on' ? 2 : 1;
  if (plural === 'weekdays') return atTime(words, after, '*', '1-5');
  if (plural === 'weekends') return atTime(words, after, '*', '0,6');
  if (first === 'weekly') return readDaysThenTime(words, words[1] === 'on' ? 2 : 1);
  if (first === 'monthly') return readDayOfMonth(words, 1);
  if (first === 'on') i = 1;
  if (first === 'every' || first === 'each') i = 1;
  if (i === 0 || first === 'on') return readDaysThenTime(words, i);

  // every [N] minutes | hours | day | weekday | week on … | month on the … | <days>
  let count = numberAt(words[i]);
  if (count !== undefined && words[i] !== 'a' && words[i] !== 'an') i += 1;
  else count = undefined;
  const unit = words[i];
  const n = count ?? 1;
  if (unit !== undefined && UNIT_MS[unit] === MINUTE_MS) {
    if (n === 1) return { ok: true, value: cron('*', '*', '*', '*'), next: i + 1 };
    if (Number.isInteger(n) && n > 0 && n < 60 && 60 % n === 0) return { ok: true, value: cron(`*/${n}`, '*', '*', '*'), next: i + 1 };
    if (n === 60) return { ok: true, value: cron(0, '*', '*', '*'), next: i + 1 };
    return fail(`"every ${n} minutes" does not divide an hour evenly, so a clock schedule cannot keep it. Try "every 15 minutes" or "every 30 minutes".`, i);
  }
  if (unit !== undefined && UNIT_MS[unit] === 60 * MINUTE_MS) {
    let minute = 0;
    let next = i + 1;
    const at = /^:(\d{2})$/.exec(words[next + 1] ?? '');
    if (words[next] === 'at' && at && Number(at[1]) < 60) {
      minute = Number(at[1]); // "every hour at :15"
      next += 2;
    }
    if (n === 1) return { ok: true, value: cron(minute, '*', '*', '*'), next };
    if (Number.isInteger(n) && n > 0 && n < 24 && 24 % n === 0) return { ok: true, value: cron(minute, `*/${n}`, '*', '*'), next };
    return fail(`"every ${n} hours" does not divide a day evenly, so a clock schedule cannot keep it. Try "every 2 hours" or "every 6 hours".`, i);
  }
  if (count !== undefined && count !== 1) {
    return fail(`I can repeat every few minutes or hours, not every ${words.slice(1, i + 1).join(' ')}. Try "every day at 9:00" or "every mon, wed and fri at 9:00".`, i);
  }
  if (unit === 'day') return atTime(words, i + 1, '*', '*');
  if (unit === 'weekday' || unit === 'weekdays') return atTime(words, i + 1, '*', '1-5');
  if (unit === 'weekend' || unit === 'weekends') return atTime(words, words[i + 1] === 'day' ? i + 2 : i + 1, '*', '0,6');
  if (unit === 'week') return readDaysThenTime(words, words[i + 1] === 'on' ? i + 2 : i + 1);
  if (unit === 'month') return readDayOfMonth(words, i + 1);
  return readDaysThenTime(words, i);
}

/** "[at] <time>" to the end of a day-based schedule: a recurring time needs one. */
function atTime(words: string[], i: number, dayOfMonth: string, dayOfWeek: string): Step<string> {
  const start = words[i] === 'at' ? i + 1 : i;
  if (words[start] === undefined) {
    const said = words.slice(0, i).join(' ');
    return fail(`"${said}" needs a time of day. Try "${said} at 9:00" or "${said} at 5pm".`, i);
  }
  const time = readTime(words, start);
  if (!time.ok) return time;
  return { ok: true, value: cron(time.value.minute, time.value.hour, dayOfMonth, dayOfWeek), next: time.next };
}

/** "mon wed and fri at 8:15", "mondays at 9", "mon-fri at 9", "monday to friday at 9". */
function readDaysThenTime(words: string[], i: number): Step<string> {
  const days = new Set<number>();
  let next = i;
  for (;;) {
    const word = words[next] ?? '';
    const single = DAY_NAMES[word] ?? DAY_NAMES[word.endsWith('s') ? word.slice(0, -1) : ''];
    if (single !== undefined && (words[next + 1] === 'to' || words[next + 1] === 'through') && DAY_NAMES[words[next + 2] ?? ''] !== undefined) {
      addRange(days, single, DAY_NAMES[words[next + 2] ?? ''] ?? single);
      next += 3;
    } else if (single !== undefined) {
      days.add(single);
      next += 1;
    } else if (isDayRange(word)) {
      const [from, to] = word.split('-');
      addRange(days, DAY_NAMES[from ?? ''] ?? 0, DAY_NAMES[to ?? ''] ?? 0);
      next += 1;
    } else if (word === 'and' && days.size > 0) {
      next += 1;
      continue;
    } else break;
  }
  if (days.size === 0) {
    const said = words[i] === undefined ? 'nothing' : `"${words[i]}"`;
    return fail(`I expected a day of the week after "${words.slice(0, i).join(' ')}" but found ${said}. Try "every monday at 9:00" or "every mon, wed and fri at 8:15".`, i);
  }
  if (words[next - 1] === 'and') next -= 1;
  const dayOfWeek = [...days].sort((a, b) => a - b).join(',');
  return atTime(words, next, '*', days.size === 7 ? '*' : dayOfWeek);
}

function addRange(days: Set<number>, from: number, to: number): void {
  // "fri-mon" wraps over the weekend, as people mean it.
  for (let day = from; ; day = (day + 1) % 7) {
    days.add(day);
    if (day === to) break;
  }
}

/** "on the 1st at 10:00", "on day 15 at 9", "on the last day at 18:00" (after "every month" / "monthly"). */
function readDayOfMonth(words: string[], i: number): Step<string> {
  let next = i;
  if (words[next] === 'on') next += 1;
  if (words[next] === 'the' || words[next] === 'day') next += 1;
  if (words[next] === 'last' && words[next + 1] === 'day') return atTime(words, next + 2, 'L', '*');
  const day = /^\d{1,2}$/.test(words[next] ?? '') ? Number(words[next]) : undefined;
  if (day === undefined || day < 1 || day > 31) {
    const said = words[next] === undefined ? 'nothing' : `"${words[next]}"`;
    return fail(`I expected a day of the month (1st to 31st) but found ${said}. Try "every month on the 1st at 10:00" or "every month on the last day at 18:00".`, next);
  }
  next += 1;
  if (['st', 'nd', 'rd', 'th'].includes(words[next] ?? '')) next += 1;
  return atTime(words, next, String(day), '*');
}
