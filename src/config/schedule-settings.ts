// Scheduled work (src/schedules/): the time zone a schedule is read in, what happens to a run
// missed while the bot was down, and how many schedules one person or channel may have.
import { settingDocs } from './setting-docs.js';
import { positiveInt, minutesSetting, timeZone } from './setting-values.js';

export const scheduleSettings = {
  SCHEDULE_TZ: timeZone.default('UTC').register(settingDocs, {
    section: 'Scheduled work',
    description:
      'the time zone schedules are read in when the platform gives none (Discord, the playground); Slack uses ' +
      "each person's own",
  }),
  // A duration's default is the text a person would write, parsed like theirs (prefault), so
  // the page shows `15m` where a default in milliseconds would show 900000.
  SCHEDULE_GRACE: minutesSetting('15m')
    .prefault('15m')
    .register(settingDocs, {
      section: 'Scheduled work',
      description:
        'a scheduled run missed while the bot was down runs once at start if it was due less than this ago; older ' +
        'ones are skipped with a note (`15m`, `90s`, `1h`)',
    }),
  SCHEDULE_MIN_INTERVAL: minutesSetting('5m').prefault('5m').register(settingDocs, {
    section: 'Scheduled work',
    description: 'the shortest gap between two runs of one schedule',
  }),
  SCHEDULE_WAIT_LIMIT: minutesSetting('60m').prefault('60m').register(settingDocs, {
    section: 'Scheduled work',
    description: 'how long a scheduled run may wait for an approval or an answer before it is closed with a note',
  }),
  SCHEDULES_PER_USER: positiveInt.default(10).register(settingDocs, {
    section: 'Scheduled work',
    description: 'schedules one person may have (per workspace or server)',
  }),
  SCHEDULES_PER_CHANNEL: positiveInt.default(25).register(settingDocs, {
    section: 'Scheduled work',
    description: 'schedules one channel may have',
  }),
};
