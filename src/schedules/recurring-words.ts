// Recurring times in words, read into 5-field cron patterns: "every weekday at 9:00",
// "every mon, wed and fri at 8:15", "mondays at 9am", "every 15 minutes", "every 2 hours",
// "every hour at :15", "every month on the 1st at 10:00", "weekly on friday at 16:00".
// Steps are only those a clock keeps evenly (minutes that divide an hour, hours that divide
// a day): "every 7 minutes" as */7 would run at :56 then :00, so it is refused, not bent.
import { DAY_NAMES, MINUTE_MS, UNIT_MS, fail, numberAt, readTime, type Step } from './when-words.js';

/** True when the words open a recurring time: "every", "daily", "weekdays", "mondays", "on weekdays"… */
export function isRecurringStart(words: string[]): boolean {
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

/** The cron pattern of recurring words, or which word it could not read. */
export function readRecurring(words: string[]): Step<string> {
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
    if (Number.isInteger(n) && n > 0 && n < 60 && 60 % n === 0)
      return { ok: true, value: cron(`*/${n}`, '*', '*', '*'), next: i + 1 };
    if (n === 60) return { ok: true, value: cron(0, '*', '*', '*'), next: i + 1 };
    return fail(
      `"every ${n} minutes" does not divide an hour evenly, so a clock schedule cannot keep it. Try "every 15 minutes" or "every 30 minutes".`,
      i,
    );
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
    if (Number.isInteger(n) && n > 0 && n < 24 && 24 % n === 0)
      return { ok: true, value: cron(minute, `*/${n}`, '*', '*'), next };
    return fail(
      `"every ${n} hours" does not divide a day evenly, so a clock schedule cannot keep it. Try "every 2 hours" or "every 6 hours".`,
      i,
    );
  }
  if (count !== undefined && count !== 1) {
    return fail(
      `I can repeat every few minutes or hours, not every ${words.slice(1, i + 1).join(' ')}. Try "every day at 9:00" or "every mon, wed and fri at 9:00".`,
      i,
    );
  }
  if (unit === 'day') return atTime(words, i + 1, '*', '*');
  if (unit === 'weekday' || unit === 'weekdays') return atTime(words, i + 1, '*', '1-5');
  if (unit === 'weekend' || unit === 'weekends')
    return atTime(words, words[i + 1] === 'day' ? i + 2 : i + 1, '*', '0,6');
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
  // "at 9:00 and 17:00", "at 9am, noon and 5pm": more hours at the same minute. Only a time
  // written as one (9:00, 5pm, noon) joins, so "at 9 and 5 bullet points" leaves "and 5
  // bullet points" to the task.
  const hours = new Set([time.value.hour]);
  let next = time.next;
  for (;;) {
    const at = words[next] === 'and' ? next + 1 : next;
    if (!isWrittenAsTime(words, at)) break;
    const more = readTime(words, at);
    if (!more.ok) return more;
    if (more.value.minute !== time.value.minute) {
      return fail(
        `"${words.slice(start, more.next).join(' ')}" are at different minutes past the hour, which one schedule cannot keep. Make two schedules, e.g. "every day at 9:00" and "every day at 17:30".`,
        at,
      );
    }
    hours.add(more.value.hour);
    next = more.next;
  }
  const hourField = [...hours].sort((a, b) => a - b).join(',');
  return { ok: true, value: cron(time.value.minute, hourField, dayOfMonth, dayOfWeek), next };
}

function isWrittenAsTime(words: string[], i: number): boolean {
  const word = words[i] ?? '';
  if (word === 'noon' || word === 'midnight' || /^\d{1,2}[:.]\d{2}$/.test(word)) return true;
  return /^\d{1,2}$/.test(word) && ['am', 'pm', 'h'].includes(words[i + 1] ?? '');
}

/** "mon wed and fri at 8:15", "mondays at 9", "mon-fri at 9", "monday to friday at 9". */
function readDaysThenTime(words: string[], i: number): Step<string> {
  const days = new Set<number>();
  let next = i;
  for (;;) {
    const word = words[next] ?? '';
    const single = DAY_NAMES[word] ?? DAY_NAMES[word.endsWith('s') ? word.slice(0, -1) : ''];
    if (
      single !== undefined &&
      (words[next + 1] === 'to' || words[next + 1] === 'through') &&
      DAY_NAMES[words[next + 2] ?? ''] !== undefined
    ) {
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
    return fail(
      `I expected a day of the week after "${words.slice(0, i).join(' ')}" but found ${said}. Try "every monday at 9:00" or "every mon, wed and fri at 8:15".`,
      i,
    );
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
    return fail(
      `I expected a day of the month (1st to 31st) but found ${said}. Try "every month on the 1st at 10:00" or "every month on the last day at 18:00".`,
      next,
    );
  }
  next += 1;
  if (['st', 'nd', 'rd', 'th'].includes(words[next] ?? '')) next += 1;
  return atTime(words, next, String(day), '*');
}
