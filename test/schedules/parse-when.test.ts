// "When" as people write it in /schedule and the schedule_task tool, read in their time zone
// with a fixed `now` (no wall clock): one-offs and recurring times land on the right UTC
// instants in Paris and Los Angeles, across a weekend and across daylight-saving changes;
// the command splits into its when and its task; and every "no" is a sentence a person can
// act on, naming what was not understood and showing two forms that work.
import { describe, expect, it } from 'vitest';
import { nextRuns } from '../../src/schedules/occurrences.js';
import { cadenceProblem, describeInstant, parseWhen, splitWhenAndTask } from '../../src/schedules/parse-when.js';
import type { ScheduleSpec } from '../../src/schedules/schedule-types.js';

const PARIS = 'Europe/Paris';
const LA = 'America/Los_Angeles';
/** Thursday 3 December 2026, 22:10 UTC: 23:10 in Paris (UTC+1), 14:10 in Los Angeles (UTC-8). */
const NOW = Date.parse('2026-12-03T22:10:00Z');
const HOUR = 3_600_000;
const MINUTE = 60_000;

function specOf(when: string, timezone: string, now = NOW): ScheduleSpec {
  const reading = parseWhen(when, { timezone, now });
  if (!reading.ok) throw new Error(`expected "${when}" to read, got: ${reading.reason}`);
  return reading.spec;
}

function onceAt(when: string, timezone: string, now = NOW): string {
  const spec = specOf(when, timezone, now);
  if (spec.kind !== 'once') throw new Error(`expected a one-off from "${when}", got ${JSON.stringify(spec)}`);
  return new Date(spec.at).toISOString();
}

function reasonFor(when: string, timezone = PARIS, now = NOW): string {
  const reading = parseWhen(when, { timezone, now });
  if (reading.ok) throw new Error(`expected "${when}" to be refused, got ${reading.words}`);
  return reading.reason;
}

/** A reason people read in chat: a sentence or two, with at least two quoted forms that work. */
function expectPrivateAnswer(reason: string): void {
  expect(reason).toMatch(/[.]$/);
  expect(reason.length).toBeLessThan(400);
  expect(reason).not.toMatch(/Error|undefined|NaN|\bat .*\.ts:/);
  expect(reason.match(/"[^"]+"/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
}

describe('one-off times', () => {
  it('"in …" counts from now, in minutes, hours, days and words', () => {
    for (const timezone of [PARIS, LA]) {
      expect(onceAt('in 2 hours', timezone)).toBe('2026-12-04T00:10:00.000Z');
      expect(onceAt('in 30 minutes', timezone)).toBe('2026-12-03T22:40:00.000Z');
      expect(onceAt('in 1 day', timezone)).toBe('2026-12-04T22:10:00.000Z');
      expect(onceAt('in 90 min', timezone)).toBe('2026-12-03T23:40:00.000Z');
      expect(onceAt('in 2h', timezone)).toBe('2026-12-04T00:10:00.000Z');
      expect(onceAt('in 1h30m', timezone)).toBe('2026-12-03T23:40:00.000Z');
      expect(onceAt('in 1 hour and 30 minutes', timezone)).toBe('2026-12-03T23:40:00.000Z');
      expect(onceAt('in two hours', timezone)).toBe('2026-12-04T00:10:00.000Z');
      expect(onceAt('in half an hour', timezone)).toBe('2026-12-03T22:40:00.000Z');
      expect(onceAt('in an hour and a half', timezone)).toBe('2026-12-03T23:40:00.000Z');
    }
  });

  it("an ISO time without an offset is read in the person's zone; with Z or an offset, as given", () => {
    expect(onceAt('2026-12-07T09:00', PARIS)).toBe('2026-12-07T08:00:00.000Z');
    expect(onceAt('2026-12-07 09:00', PARIS)).toBe('2026-12-07T08:00:00.000Z');
    expect(onceAt('2026-12-07T09:00', LA)).toBe('2026-12-07T17:00:00.000Z');
    expect(onceAt('2026-12-07 09:00:30', LA)).toBe('2026-12-07T17:00:30.000Z');
    for (const timezone of [PARIS, LA]) {
      expect(onceAt('2026-12-07T09:00Z', timezone)).toBe('2026-12-07T09:00:00.000Z');
      expect(onceAt('2026-12-07T09:00+05:30', timezone)).toBe('2026-12-07T03:30:00.000Z');
      expect(onceAt('2026-12-07T09:00:00.000-08:00', timezone)).toBe('2026-12-07T17:00:00.000Z');
    }
  });

  it('"tomorrow at 9", "today at 17:30" and "at 14:00" are the local clock of the person', () => {
    // Paris: it is 23:10 on Thursday; Los Angeles: 14:10 on Thursday.
    expect(onceAt('tomorrow at 9', PARIS)).toBe('2026-12-04T08:00:00.000Z');
    expect(onceAt('tomorrow at 9', LA)).toBe('2026-12-04T17:00:00.000Z');
    expect(onceAt('tomorrow 9am', LA)).toBe('2026-12-04T17:00:00.000Z');
    expect(onceAt('today at 17:30', LA)).toBe('2026-12-04T01:30:00.000Z');
    expect(onceAt('today at 23:30', PARIS)).toBe('2026-12-03T22:30:00.000Z');
    // "at 14:00": still ahead today in Los Angeles, already past today in Paris, so tomorrow's.
    expect(onceAt('at 14:30', LA)).toBe('2026-12-03T22:30:00.000Z');
    expect(onceAt('at 14:00', LA)).toBe('2026-12-04T22:00:00.000Z');
    expect(onceAt('at 14:00', PARIS)).toBe('2026-12-04T13:00:00.000Z');
    expect(onceAt('at 5pm', PARIS)).toBe('2026-12-04T16:00:00.000Z');
    expect(onceAt('at 9 tomorrow', PARIS)).toBe('2026-12-04T08:00:00.000Z');
    // 12am is midnight and 12pm noon; capitals and "a.m." are fine.
    expect(onceAt('tomorrow at 12am', PARIS)).toBe('2026-12-03T23:00:00.000Z');
    expect(onceAt('tomorrow at 12:30 a.m.', PARIS)).toBe('2026-12-03T23:30:00.000Z');
    expect(onceAt('Tomorrow at 12PM', PARIS)).toBe('2026-12-04T11:00:00.000Z');
    expect(onceAt('tomorrow at midnight', LA)).toBe('2026-12-04T08:00:00.000Z');
  });

  it('a weekday or a date with a time: "on monday at 9", "next thursday at 9", "2026-12-25 at 10am"', () => {
    expect(onceAt('on monday at 9', PARIS)).toBe('2026-12-07T08:00:00.000Z');
    expect(onceAt('monday at 5pm', LA)).toBe('2026-12-08T01:00:00.000Z');
    // Thursday, said on a Thursday: "next" is a week on; plain "thursday" after its hour too.
    expect(onceAt('next thursday at 9', PARIS)).toBe('2026-12-10T08:00:00.000Z');
    expect(onceAt('thursday at 9', LA)).toBe('2026-12-10T17:00:00.000Z');
    expect(onceAt('thursday at 15:00', LA)).toBe('2026-12-03T23:00:00.000Z');
    expect(onceAt('2026-12-25 at 10am', PARIS)).toBe('2026-12-25T09:00:00.000Z');
    expect(onceAt('on 2026-12-25 at noon', LA)).toBe('2026-12-25T20:00:00.000Z');
  });

  it('a local time on a daylight-saving day: the skipped hour moves forward, the repeated hour is the first', () => {
    const october = Date.parse('2026-10-01T00:00:00Z');
    // Paris, 28 March 2027: 02:00 → 03:00, so 02:30 does not exist and means 03:30 CEST.
    expect(onceAt('2027-03-28 02:30', PARIS, october)).toBe('2027-03-28T01:30:00.000Z');
    // Paris, 25 October 2026: 03:00 → 02:00, so 02:30 happens twice; the first is CEST.
    expect(onceAt('2026-10-25 02:30', PARIS, october)).toBe('2026-10-25T00:30:00.000Z');
    // Los Angeles, 14 March 2027: 02:00 → 03:00.
    expect(onceAt('2027-03-14 02:30', LA, october)).toBe('2027-03-14T10:30:00.000Z');
    // "tomorrow at 9" on the eve of the change: 09:00 CEST, not CET.
    expect(onceAt('tomorrow at 9', PARIS, Date.parse('2027-03-27T12:00:00Z'))).toBe('2027-03-28T07:00:00.000Z');
  });
});

describe('recurring times', () => {
  const patterns: [string, string][] = [
    ['every weekday at 9:00', '0 9 * * 1-5'],
    ['every day at 17:30', '30 17 * * *'],
    ['daily at noon', '0 12 * * *'],
    ['every monday at 9', '0 9 * * 1'],
    ['every mon, wed and fri at 8:15', '15 8 * * 1,3,5'],
    ['mondays and thursdays at 5:30 pm', '30 17 * * 1,4'],
    ['every mon-fri at 9', '0 9 * * 1,2,3,4,5'],
    ['every weekend at 10am', '0 10 * * 0,6'],
    ['every hour', '0 * * * *'],
    ['every hour at :15', '15 * * * *'],
    ['every 15 minutes', '*/15 * * * *'],
    ['every 2 hours', '0 */2 * * *'],
    ['weekdays at 9am', '0 9 * * 1-5'],
    ['on weekdays at 5pm', '0 17 * * 1-5'],
    ['every month on the 1st at 10:00', '0 10 1 * *'],
    ['monthly on the 15th at 9', '0 9 15 * *'],
    ['every month on the last day at 18:00', '0 18 L * *'],
    ['every week on friday at 16:00', '0 16 * * 5'],
    ['every weekday at 9:00 and 17:00', '0 9,17 * * 1-5'],
    ['every day at 9am, noon and 5pm', '0 9,12,17 * * *'],
  ];

  it.each(patterns)('"%s" is the cron pattern %s, in the person\'s zone', (when, pattern) => {
    for (const timezone of [PARIS, LA]) expect(specOf(when, timezone)).toEqual({ kind: 'cron', pattern, timezone });
  });

  it('a cron expression is taken bare, in backticks or in quotes, with 5 fields or 6 (seconds first)', () => {
    for (const when of ['0 9 * * 1-5', '`0 9 * * 1-5`', '"0 9 * * 1-5"', '“0 9 * * 1-5”', '  0  9 * *   1-5 ']) {
      expect(specOf(when, LA)).toEqual({ kind: 'cron', pattern: '0 9 * * 1-5', timezone: LA });
    }
    expect(specOf('0 0 9 * * mon-fri', PARIS)).toEqual({ kind: 'cron', pattern: '0 0 9 * * mon-fri', timezone: PARIS });
    expect(specOf('@daily', PARIS)).toEqual({ kind: 'cron', pattern: '0 0 * * *', timezone: PARIS });
  });

  it('"every weekday at 9:00" fires at 09:00 local on weekdays, skipping the weekend and following the clock change', () => {
    const runsOf = (timezone: string, after: string, count: number) =>
      nextRuns(specOf('every weekday at 9:00', timezone), Date.parse(after), count).map((at) =>
        new Date(at).toISOString(),
      );
    // Paris: CET (UTC+1) until Sunday 28 March 2027, CEST (UTC+2) after.
    expect(runsOf(PARIS, '2027-03-25T12:00:00Z', 4)).toEqual([
      '2027-03-26T08:00:00.000Z', // Friday, CET
      '2027-03-29T07:00:00.000Z', // Monday, CEST: no Saturday, no Sunday
      '2027-03-30T07:00:00.000Z',
      '2027-03-31T07:00:00.000Z',
    ]);
    // Los Angeles: PST (UTC-8) until Sunday 14 March 2027, PDT (UTC-7) after.
    expect(runsOf(LA, '2027-03-11T20:00:00Z', 3)).toEqual([
      '2027-03-12T17:00:00.000Z', // Friday, PST
      '2027-03-15T16:00:00.000Z', // Monday, PDT
      '2027-03-16T16:00:00.000Z',
    ]);
    // And back in the autumn: Paris leaves summer time on Sunday 25 October 2026.
    expect(runsOf(PARIS, '2026-10-22T12:00:00Z', 2)).toEqual(['2026-10-23T07:00:00.000Z', '2026-10-26T08:00:00.000Z']);
    // The same words in two zones are nine hours apart in December.
    expect(runsOf(PARIS, '2026-12-03T22:10:00Z', 1)).toEqual(['2026-12-04T08:00:00.000Z']);
    expect(runsOf(LA, '2026-12-03T22:10:00Z', 1)).toEqual(['2026-12-04T17:00:00.000Z']);
  });

  it('the words say back what was understood, with the zone', () => {
    const wordsOf = (when: string, timezone: string) => {
      const reading = parseWhen(when, { timezone, now: NOW });
      return reading.ok ? reading.words : reading.reason;
    };
    expect(wordsOf('every weekday at 9:00', PARIS)).toBe('every weekday at 09:00 (Europe/Paris)');
    expect(wordsOf('0 9 * * 1-5', LA)).toBe('every weekday at 09:00 (America/Los_Angeles)');
    expect(wordsOf('every mon, wed and fri at 8:15', PARIS)).toBe('every Mon, Wed and Fri at 08:15 (Europe/Paris)');
    expect(wordsOf('every monday at 5pm', PARIS)).toBe('every Monday at 17:00 (Europe/Paris)');
    expect(wordsOf('every 15 minutes', LA)).toBe('every 15 minutes (America/Los_Angeles)');
    expect(wordsOf('every 2 hours', LA)).toBe('every 2 hours (America/Los_Angeles)');
    expect(wordsOf('every weekday at 5pm and 8am', LA)).toBe('every weekday at 08:00 and 17:00 (America/Los_Angeles)');
    expect(wordsOf('every month on the 1st at 10:00', PARIS)).toBe('every month on the 1st at 10:00 (Europe/Paris)');
    expect(wordsOf('0 9 1-7 * 1', PARIS)).toBe('on the cron schedule `0 9 1-7 * 1` (Europe/Paris)');
    expect(wordsOf('2026-12-07T09:00', PARIS)).toBe('once, Mon 7 Dec 2026, 09:00 (Europe/Paris)');
    expect(wordsOf('in 2 hours', LA)).toBe('once, Thu 3 Dec 2026, 16:10 (America/Los_Angeles)');
  });
});

describe('describeInstant, for "next run" lines', () => {
  it('names the local day, date and time with the zone', () => {
    const at = Date.parse('2026-12-07T08:00:00Z');
    expect(describeInstant(at, PARIS)).toBe('Mon 7 Dec 2026, 09:00 (Europe/Paris)');
    expect(describeInstant(at, LA)).toBe('Mon 7 Dec 2026, 00:00 (America/Los_Angeles)');
    expect(describeInstant(Date.parse('2027-01-01T02:05:00Z'), LA)).toBe(
      'Thu 31 Dec 2026, 18:05 (America/Los_Angeles)',
    );
  });
});

describe('/schedule <when> <task>', () => {
  const split = (text: string, timezone = PARIS) => splitWhenAndTask(text, { timezone, now: NOW });

  it('the longest opening that reads as a time is the when; the rest is the task', () => {
    expect(split('every weekday at 9:00 summarise the open incidents here')).toEqual({
      ok: true,
      spec: { kind: 'cron', pattern: '0 9 * * 1-5', timezone: PARIS },
      when: 'every weekday at 9:00',
      words: 'every weekday at 09:00 (Europe/Paris)',
      task: 'summarise the open incidents here',
    });
    expect(split('in 2 hours check whether the deploy finished', LA)).toMatchObject({
      ok: true,
      spec: { kind: 'once', at: NOW + 2 * HOUR },
      when: 'in 2 hours',
      task: 'check whether the deploy finished',
    });
    // "and 30 minutes" belongs to the when; "and then" would not.
    expect(split('in 1 hour and 30 minutes ping @oncall')).toMatchObject({
      ok: true,
      spec: { kind: 'once', at: NOW + 90 * MINUTE },
      task: 'ping @oncall',
    });
    expect(split('in 1 hour and then ping @oncall')).toMatchObject({
      ok: true,
      spec: { kind: 'once', at: NOW + HOUR },
      task: 'and then ping @oncall',
    });
    expect(split('Every Weekday at 9AM Summarise the Incidents')).toMatchObject({
      ok: true,
      spec: { pattern: '0 9 * * 1-5' },
      when: 'Every Weekday at 9AM',
      task: 'Summarise the Incidents',
    });
    // More times join only when written as times: "and 5 bullet points" stays in the task.
    expect(split('every day at 9:00 and 17:00 post the board')).toMatchObject({
      ok: true,
      spec: { pattern: '0 9,17 * * *' },
      task: 'post the board',
    });
    expect(split('every day at 9 and 5 bullet points')).toMatchObject({
      ok: true,
      spec: { pattern: '0 9 * * *' },
      task: 'and 5 bullet points',
    });
    expect(split('every mon, wed and fri at 8:15 am post the standup')).toMatchObject({
      ok: true,
      spec: { pattern: '15 8 * * 1,3,5' },
      task: 'post the standup',
    });
  });

  it('a cron expression, bare or in backticks, and a 6-field cron only when it is plainly one', () => {
    expect(split('`0 9 * * 1-5` summarise the open incidents')).toMatchObject({
      ok: true,
      spec: { pattern: '0 9 * * 1-5' },
      when: '`0 9 * * 1-5`',
      task: 'summarise the open incidents',
    });
    expect(split('0 9 * * 1-5 summarise the open incidents')).toMatchObject({
      ok: true,
      spec: { pattern: '0 9 * * 1-5' },
      when: '0 9 * * 1-5',
      task: 'summarise the open incidents',
    });
    expect(split('0 9 * * 1-5 3 bullet points on the open incidents')).toMatchObject({
      ok: true,
      spec: { pattern: '0 9 * * 1-5' },
      task: '3 bullet points on the open incidents',
    });
    expect(split('0 0 9 * * 1-5 summarise')).toMatchObject({
      ok: true,
      spec: { pattern: '0 0 9 * * 1-5' },
      task: 'summarise',
    });
    expect(split('`0 9 * * 1-5 3` odd but asked for')).toMatchObject({
      ok: true,
      spec: { pattern: '0 9 * * 1-5 3' },
      task: 'odd but asked for',
    });
  });

  it('one separator between when and task is dropped, and the task keeps its case', () => {
    const tasks = [
      'in two hours, Check the deploy',
      'tomorrow at 9: Check the deploy',
      'every day at 9 — Check the deploy',
      'in 2h - Check the deploy',
      'at 9am | Check the deploy',
      'in 2 hours to Check the deploy',
    ].map((text) => {
      const reading = split(text);
      return reading.ok ? reading.task : reading.reason;
    });
    expect(tasks).toEqual(Array(6).fill('Check the deploy'));
    expect(split('in two hours, check')).toMatchObject({ ok: true, when: 'in two hours' });
  });

  it('no task, no time, or a time it cannot read: a private answer saying what to write', () => {
    const empty = split('every weekday at 9:00');
    expect(empty).toEqual({ ok: false, reason: expect.stringContaining('no task after it') });
    const noTime = split('summarise the open incidents');
    expect(noTime).toEqual({ ok: false, reason: expect.stringContaining('"summarise the open incidents"') });
    const badDay = split('every blursday at 9 summarise the open incidents');
    expect(badDay).toEqual({ ok: false, reason: expect.stringContaining('"blursday"') });
    const badTime = split('every weekday at 25:00 summarise');
    expect(badTime).toEqual({ ok: false, reason: expect.stringContaining('"25:00" is not a time of day') });
    const badCron = split('0 9 * * 8 summarise the open incidents');
    expect(badCron).toEqual({
      ok: false,
      reason: expect.stringContaining(
        '"0 9 * * 8" is not a cron expression I can read (Invalid value for dayOfWeek: 8)',
      ),
    });
    // Not 09:00 alone with "and 17:30 post the board" as the task: the 17:30 is the problem.
    const twoMinutes = split('every day at 9:00 and 17:30 post the board');
    expect(twoMinutes).toEqual({ ok: false, reason: expect.stringContaining('different minutes past the hour') });
    const badUnit = split('in 2 hourz check the deploy');
    expect(badUnit).toEqual({ ok: false, reason: expect.stringContaining('"2 hourz"') });
    for (const reading of [empty, noTime, badDay, badTime, badCron, twoMinutes, badUnit, split('   ')]) {
      if (reading.ok) throw new Error('expected a refusal');
      expectPrivateAnswer(reading.reason);
    }
  });
});

describe('what cannot be read gets a clear sentence', () => {
  it.each([
    ['every blursday at 9', '"blursday"'],
    ['every day', '"every day" needs a time of day'],
    ['every 7 minutes', '"every 7 minutes" does not divide an hour'],
    ['every 5 hours', '"every 5 hours" does not divide a day'],
    ['every 2 days at 9', 'not every 2 days'],
    ['every day at 9:00 and 17:30', 'different minutes past the hour'],
    ['every day at 9:00 and 25:00', '"25:00" is not a time of day'],
    ['at 25:00', '"25:00" is not a time of day'],
    ['tomorrow at 13pm', '"13pm" is not a time of day'],
    ['in 2 hourz', '"2 hourz"'],
    ['in 0 minutes', 'no time from now'],
    ['in 9999 weeks', 'more than five years away'],
    ['soon', '"soon"'],
    ['every weekday at 9:00 please', 'not "please"'],
    ['0 9 * * 8', 'Invalid value for dayOfWeek: 8'],
    ['0 9 * *', 'has 4 fields'],
    ['2026-02-30 09:00', 'not a real date'],
    ['2027-02-29 at 9', '"2027-02-29" is not a date on the calendar'],
    ['every month on the 32nd at 9', 'day of the month'],
    ['', 'Say when to run it'],
  ])('"%s" → %s', (when, expected) => {
    const reason = reasonFor(when);
    expect(reason).toContain(expected);
    expectPrivateAnswer(reason);
  });

  it('a time already past says so, and what the time is now', () => {
    const today = reasonFor('today at 17:30', PARIS);
    expect(today).toBe(
      '"today at 17:30" has already passed: it is now Thu 3 Dec 2026, 23:10 (Europe/Paris). Try "tomorrow at 17:30" or "in 2 hours".',
    );
    const iso = reasonFor('2026-11-01 09:00', LA);
    expect(iso).toContain(
      '"2026-11-01 09:00" has already passed: it is now Thu 3 Dec 2026, 14:10 (America/Los_Angeles)',
    );
    expect(reasonFor('2026-12-03T22:10Z', LA)).toContain('has already passed');
    for (const reason of [today, iso]) expectPrivateAnswer(reason);
  });

  it('an unknown time zone is refused, whatever the words', () => {
    for (const when of ['in 2 hours', 'every weekday at 9:00', '0 9 * * 1-5']) {
      const reason = reasonFor(when, 'Mars/Olympus');
      expect(reason).toContain('"Mars/Olympus" is not a time zone I know');
      expectPrivateAnswer(reason);
    }
    expect(splitWhenAndTask('in 2 hours check', { timezone: 'Europe/Pariss', now: NOW })).toEqual({
      ok: false,
      reason: expect.stringContaining('"Europe/Pariss" is not a time zone I know'),
    });
    expect(splitWhenAndTask('in 2 hours check', { timezone: '', now: NOW })).toMatchObject({ ok: false });
  });
});

describe('cadenceProblem: never, too often, fine', () => {
  const check = (spec: ScheduleSpec, minIntervalMs = 5 * MINUTE) => cadenceProblem(spec, { now: NOW, minIntervalMs });
  const cron = (pattern: string, timezone = PARIS): ScheduleSpec => ({ kind: 'cron', pattern, timezone });

  it('an expression with no instant after now never fires', () => {
    const reason = check(cron('0 0 30 2 *'));
    expect(reason).toContain('`0 0 30 2 *` never fires');
    expectPrivateAnswer(reason ?? '');
    expect(check({ kind: 'once', at: NOW - 1 })).toContain('has already passed');
    expect(check({ kind: 'once', at: NOW })).toContain('has already passed');
  });

  it('runs closer than SCHEDULE_MIN_INTERVAL are refused, naming the minimum in minutes', () => {
    const everyMinute = check(cron('* * * * *'));
    expect(everyMinute).toBe(
      '`* * * * *` (every minute) would run as little as 1 minute apart, more often than the minimum of 5 minutes between runs (SCHEDULE_MIN_INTERVAL). Try "every 15 minutes" or "every hour".',
    );
    expect(check(cron('*/2 * * * *', LA))).toContain('2 minutes apart');
    expect(check(cron('* * * * * *'))).toContain('1 second apart');
    // Only one close pair a day, at 09:00 and 09:01: still refused.
    expect(check(cron('0,1 9 * * *'))).toContain('1 minute apart');
    // A minimum of 90 minutes: every hour is too often, and the examples suggested are not.
    const hourly = check(specOf('every hour', LA), 90 * MINUTE);
    expect(hourly).toContain('the minimum of 90 minutes between runs (SCHEDULE_MIN_INTERVAL)');
    expect(hourly).not.toContain('"every hour"');
    for (const reason of [everyMinute, hourly]) expectPrivateAnswer(reason ?? '');
  });

  it('a schedule as far apart as the minimum, or further, is fine', () => {
    expect(check(cron('*/5 * * * *'))).toBeUndefined();
    expect(check(specOf('every weekday at 9:00', PARIS))).toBeUndefined();
    expect(check(specOf('every 15 minutes', LA))).toBeUndefined();
    expect(check(cron('0 12 29 2 *'))).toBeUndefined(); // once every four years is still a schedule
    expect(check({ kind: 'once', at: NOW + MINUTE })).toBeUndefined();
    // Across a daylight-saving change the gaps stay whole: 15 minutes apart in UTC too.
    expect(
      cadenceProblem(specOf('every 15 minutes', PARIS), {
        now: Date.parse('2026-10-25T00:30:00Z'),
        minIntervalMs: 15 * MINUTE,
      }),
    ).toBeUndefined();
  });
});

describe('whatever is typed', () => {
  it('gets a reading or a sentence, never a throw: 2,000 seeded mixes of the words these forms use', () => {
    const vocabulary = [
      'every',
      'in',
      'at',
      'on',
      'next',
      'the',
      'and',
      'day',
      'weekday',
      'weekdays',
      'monday',
      'mondays',
      'mon-fri',
      'to',
      'month',
      'last',
      '1st',
      '32nd',
      'hour',
      'hours',
      'minutes',
      '15',
      '7',
      '0',
      '9',
      '25:00',
      '9:30',
      '5pm',
      '13pm',
      'a.m.',
      'noon',
      'tomorrow',
      'today',
      'half',
      'an',
      '2026-12-07',
      '2027-02-29',
      '*',
      '*/5',
      '1-5',
      'L',
      '#',
      '?',
      '`',
      '"',
      '—',
      ':',
      '|',
      ',',
      '@daily',
      '@x',
      '2026-12-07T09:00Z',
      '99999999999',
      '1.5',
      'h',
      'ü',
      '',
    ];
    let seed = 7;
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return Math.floor((seed / 2_147_483_648) * below);
    };
    let read = 0;
    for (let round = 0; round < 2000; round += 1) {
      const text = Array.from({ length: 1 + next(6) }, () => vocabulary[next(vocabulary.length)]).join(
        next(5) === 0 ? '' : ' ',
      );
      const timezone = round % 2 === 0 ? PARIS : LA;
      for (const reading of [
        parseWhen(text, { timezone, now: NOW }),
        splitWhenAndTask(`${text} do it`, { timezone, now: NOW }),
      ]) {
        if (!reading.ok) {
          expect(reading.reason).toMatch(/\.$/);
          expect(reading.reason).not.toMatch(/undefined|NaN|\[object/);
          continue;
        }
        read += 1;
        expect(reading.words).not.toMatch(/undefined|NaN/);
        if (reading.spec.kind === 'once') expect(reading.spec.at).toBeGreaterThan(NOW);
        expect(() => cadenceProblem(reading.spec, { now: NOW, minIntervalMs: 5 * MINUTE })).not.toThrow();
      }
    }
    expect(read).toBeGreaterThan(0);
  });
});
