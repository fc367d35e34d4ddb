// The day and the calendar month a moment falls in, and when each ends, in the budget's time
// zone (UTC unless BUDGET_TIMEZONE names another). The ledger names its counters by these
// keys, so a new day starts new counters: nothing has to be reset at midnight.
//
// The idea to hold: the clock is injected (`now`), so a test can cross midnight; the zone is
// handled with Intl alone (no library): a local wall-clock time is turned back into an
// instant by measuring the zone's offset there, twice, which settles across a DST change.

export interface PeriodKeys {
  /** `2026-12-03` */
  day: string;
  /** `2026-12` */
  month: string;
  /** The next local midnight (ms since the epoch). */
  dayEndsAt: number;
  /** The first local midnight of the next month. */
  monthEndsAt: number;
}

/**
 * Throws a clear error for a name Intl does not know. UTC needs no check: it is the default,
 * and asking Intl would load ICU's time zone data into every bot at start for nothing.
 */
function checkTimeZone(zone: string): string {
  if (zone.toUpperCase() === 'UTC') return zone;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new Error(
      `BUDGET_TIMEZONE: "${zone}" is not a time zone name this Node knows (use an IANA name such as Europe/Paris, or leave it unset for UTC)`,
    );
  }
  return zone;
}

export class Periods {
  private readonly format: Intl.DateTimeFormat | undefined;

  constructor(readonly zone: string = 'UTC') {
    checkTimeZone(zone);
    this.format =
      zone.toUpperCase() === 'UTC'
        ? undefined
        : new Intl.DateTimeFormat('en-US', {
            timeZone: zone,
            hourCycle: 'h23',
            year: 'numeric',
            month: 'numeric',
            day: 'numeric',
            hour: 'numeric',
            minute: 'numeric',
            second: 'numeric',
          });
  }

  at(now: number): PeriodKeys {
    const local = this.wallClock(now);
    const pad = (n: number) => String(n).padStart(2, '0');
    return {
      day: `${local.year}-${pad(local.month)}-${pad(local.day)}`,
      month: `${local.year}-${pad(local.month)}`,
      dayEndsAt: this.instantOf(local.year, local.month, local.day + 1),
      monthEndsAt: this.instantOf(local.year, local.month + 1, 1),
    };
  }

  /** The local calendar date and time of an instant. */
  private wallClock(instant: number): {
    year: number;
    month: number;
    day: number;
    hour: number;
    minute: number;
    second: number;
  } {
    if (!this.format) {
      const d = new Date(instant);
      return {
        year: d.getUTCFullYear(),
        month: d.getUTCMonth() + 1,
        day: d.getUTCDate(),
        hour: d.getUTCHours(),
        minute: d.getUTCMinutes(),
        second: d.getUTCSeconds(),
      };
    }
    const parts = Object.fromEntries(
      this.format.formatToParts(new Date(instant)).map((part) => [part.type, part.value]),
    );
    return {
      year: Number(parts.year),
      month: Number(parts.month),
      day: Number(parts.day),
      hour: Number(parts.hour),
      minute: Number(parts.minute),
      second: Number(parts.second),
    };
  }

  /** The instant of local midnight starting the given date (day and month may overflow: Date.UTC carries them). */
  private instantOf(year: number, month: number, day: number): number {
    const wall = Date.UTC(year, month - 1, day);
    if (!this.format) return wall;
    let guess = wall - this.offsetAt(wall);
    guess = wall - this.offsetAt(guess);
    return guess;
  }

  /** How far the zone's wall clock is ahead of UTC at an instant (ms). */
  private offsetAt(instant: number): number {
    const local = this.wallClock(instant);
    const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
    return asUtc - Math.floor(instant / 1000) * 1000;
  }
}
