// PersonZones: a platform's registered lookup gives a person's zone; no lookup, an empty answer
// or a failing lookup gives SCHEDULE_TZ, never an error.
import { describe, expect, it } from 'vitest';
import { PersonZones } from '../../src/schedules/person-zones.js';

describe('person zones', () => {
  it('asks the platform that registered, and falls back to SCHEDULE_TZ otherwise', async () => {
    const zones = new PersonZones('Asia/Tokyo');
    zones.register('slack', (userId) =>
      userId === 'U1'
        ? Promise.resolve('Europe/Paris')
        : userId === 'U2'
          ? Promise.resolve(' ')
          : Promise.reject(new Error('users.info failed')),
    );
    expect(await zones.zoneOf('slack', 'U1')).toBe('Europe/Paris');
    expect(await zones.zoneOf('slack', 'U2')).toBe('Asia/Tokyo');
    expect(await zones.zoneOf('slack', 'U3')).toBe('Asia/Tokyo');
    expect(await zones.zoneOf('discord', 'U1')).toBe('Asia/Tokyo');
  });
});
