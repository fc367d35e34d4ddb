// Wall-clock time in a named IANA zone, with only what Node ships (Intl): whether a zone
// exists, the local date and time of an instant, the instant of a local date and time, and
// the short line that names an instant to a person. The one idea: a zone's offset is read
// from Intl at the instant itself, never assumed, so daylight-saving changes come out right.

/** A local date and time in some zone; `month` 1–12, `weekday` 0 = Sunday (as cron counts). */
export interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
}

export const WEEKDAY_SHORT = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
export const WEEKDAY_LONG = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const MONTH_SHORT = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

// One formatter per zone: building an Intl.DateTimeFormat costs far more than using one.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    // Throws RangeError for a zone ICU does not know; isKnownTimezone turns that into a boolean.
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** True when Intl (and so croner, which reads zones the same way) knows `timezone`. */
export function isKnownTimezone(timezone: string): boolean {
  if (timezone.trim() === '') return false;
  try {
    formatterFor(timezone);
    return true;
  } catch {
    return false;
  }
}

/** The local date and time of the instant `at` (epoch ms) in `timezone`. */
export function localTimeOf(at: number, timezone: string): LocalTime {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timezone).formatToParts(new Date(at))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const year = parts.year ?? 1970;
  const month = parts.month ?? 1;
  const day = parts.day ?? 1;
  return {
    year,
    month,
    day,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
    weekday: new Date(Date.UTC(year, month - 1, day)).getUTCDay(),
  };
}

/** How far `timezone` is ahead of UTC at the instant `at`, in ms (whole seconds). */
function offsetAt(at: number, timezone: string): number {
  const local = localTimeOf(at, timezone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/**
 * The instant at which the clocks in `timezone` show this date and time. In the hour a
 * daylight-saving change repeats, the first of the two; in the hour it skips (02:30 on the
 * spring change), the time as far ahead as the gap (03:30), which is what croner does too.
 */
export function instantOf(local: Omit<LocalTime, 'weekday'>, timezone: string): number {
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  // Offsets a day either side: zones never change twice within a day, so one of the two is
  // the offset in force at the wall time (both, away from a change).
  const before = offsetAt(wall - DAY_MS, timezone);
  const after = offsetAt(wall + DAY_MS, timezone);
  const fits = [wall - before, wall - after].filter((at) => offsetAt(at, timezone) === wall - at);
  if (fits.length > 0) return Math.min(...fits);
  return wall - before;
}

/** The calendar date `days` after the given one (negative: before), as plain numbers. */
export function addDays(
  date: { year: number; month: number; day: number },
  days: number,
): { year: number; month: number; day: number } {
  const moved = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

/** True when year-month-day is a real date (not 31 April, not 29 February of 2027). */
export function isRealDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** "09:05": 24-hour clock, always two digits, as every line this file writes shows times. */
export function clockWords(hour: number, minute: number): string {
  return `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
}

/** "Mon 7 Dec 2026, 09:00 (Europe/Paris)": for "next run" lines and one-off schedules. */
export function describeInstant(at: number, timezone: string): string {
  const local = localTimeOf(at, timezone);
  const date = `${WEEKDAY_SHORT[local.weekday]} ${local.day} ${MONTH_SHORT[local.month - 1]} ${local.year}`;
  return `${date}, ${clockWords(local.hour, local.minute)} (${timezone})`;
}
