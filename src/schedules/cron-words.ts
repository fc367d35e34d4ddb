// A cron pattern said back in words ("every weekday at 09:00"), so the person who typed
// "0 9 * * 1-5" or "weekdays at 9am" reads what the bot understood before it runs. Only the
// shapes the word forms produce (and the same shapes typed as cron) are put into words; any
// other pattern is shown as itself, because a wrong paraphrase is worse than none.
import { WEEKDAY_LONG, WEEKDAY_SHORT, clockWords } from './zoned-time.js';

const SHORT_DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** The words for `pattern` (5 fields, or 6 with seconds first), without the time zone. */
export function describeCron(pattern: string): string {
  return cronInWords(pattern) ?? `on the cron schedule \`${pattern}\``;
}

/** The words for the shapes this file knows; undefined for any other pattern. */
export function cronInWords(pattern: string): string | undefined {
  const asItself = undefined;
  let fields = pattern.trim().split(/\s+/);
  if (fields.length === 6) {
    if (fields[0] !== '0') return asItself;
    fields = fields.slice(1);
  }
  if (fields.length !== 5) return asItself;
  const [minute = '', hour = '', dayOfMonth = '', month = '', dayOfWeek = ''] = fields;
  const anyDay = (field: string) => field === '*' || field === '?';
  if (month !== '*') return asItself;
  const everyDay = anyDay(dayOfMonth) && anyDay(dayOfWeek);

  if (everyDay && hour === '*') {
    if (minute === '*') return 'every minute';
    const step = /^\*\/(\d+)$/.exec(minute);
    if (step) return `every ${step[1]} minutes`;
  }
  const minuteOfHour = /^\d{1,2}$/.test(minute) ? Number(minute) : undefined;
  if (minuteOfHour === undefined || minuteOfHour > 59) return asItself;
  const pastTheHour = minuteOfHour === 0 ? '' : ` at :${String(minuteOfHour).padStart(2, '0')}`;
  if (everyDay && hour === '*') return `every hour${pastTheHour}`;
  const hourStep = /^\*\/(\d+)$/.exec(hour);
  if (everyDay && hourStep) return `every ${hourStep[1]} hours${pastTheHour}`;

  // One hour, or a list of them at the same minute ("0 9,17 * * 1-5": 09:00 and 17:00).
  const hoursOfDay = /^\d{1,2}(,\d{1,2})*$/.test(hour) ? hour.split(',').map(Number) : undefined;
  if (hoursOfDay === undefined || hoursOfDay.some((hourOfDay) => hourOfDay > 23)) return asItself;
  const at = `at ${listWords(hoursOfDay.map((hourOfDay) => clockWords(hourOfDay, minuteOfHour)))}`;
  if (everyDay) return `every day ${at}`;
  if (anyDay(dayOfWeek)) {
    if (dayOfMonth === 'L') return `every month on the last day ${at}`;
    if (/^\d{1,2}$/.test(dayOfMonth) && Number(dayOfMonth) >= 1 && Number(dayOfMonth) <= 31) {
      return `every month on the ${ordinal(Number(dayOfMonth))} ${at}`;
    }
    return asItself;
  }
  if (!anyDay(dayOfMonth)) return asItself;
  const days = weekdaysOf(dayOfWeek);
  if (!days) return asItself;
  if (days.length === 7) return `every day ${at}`;
  if (days.join(',') === '1,2,3,4,5') return `every weekday ${at}`;
  if (days.length === 1) return `every ${WEEKDAY_LONG[days[0] ?? 0]} ${at}`;
  // Monday first, as a working week is read; Sunday last.
  const names = [...days].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7)).map((day) => WEEKDAY_SHORT[day] ?? '');
  return `every ${listWords(names)} ${at}`;
}

/** "a", "a and b", "a, b and c". */
function listWords(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The days a day-of-week field names (0 = Sunday; 7 is Sunday too), or undefined for steps, "L", "#". */
function weekdaysOf(field: string): number[] | undefined {
  const days = new Set<number>();
  for (const part of field.toLowerCase().split(',')) {
    const [from, to, extra] = part.split('-').map(dayNumber);
    if (from === undefined || extra !== undefined) return undefined;
    if (part.includes('-')) {
      if (to === undefined || to < from) return undefined;
      for (let day = from; day <= to; day += 1) days.add(day % 7);
    } else days.add(from % 7);
  }
  return [...days].sort((a, b) => a - b);
}

function dayNumber(text: string): number | undefined {
  if (/^[0-7]$/.test(text)) return Number(text);
  const index = SHORT_DAY_NAMES.indexOf(text);
  return index === -1 ? undefined : index;
}

function ordinal(day: number): string {
  const suffix =
    day % 10 === 1 && day !== 11
      ? 'st'
      : day % 10 === 2 && day !== 12
        ? 'nd'
        : day % 10 === 3 && day !== 13
          ? 'rd'
          : 'th';
  return `${day}${suffix}`;
}
