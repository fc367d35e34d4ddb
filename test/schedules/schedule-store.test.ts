// ScheduleStore on SQLite: what is saved comes back through zod, a stored record that is not
// a schedule is left out rather than crashing a read, and the index survives a reopen.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScheduleStore } from '../../src/schedules/schedule-store.js';
import { openKeyvStore } from '../../src/store/keyv-factory.js';
import { scheduleOf } from './schedule-kit.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chat-agent-schedule-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the schedule store', () => {
  it('saves, reads back, lists after a reopen, and deletes', async () => {
    const url = `sqlite://${join(dir, 'bot.sqlite')}`;
    const first = await openKeyvStore(url);
    const store = new ScheduleStore(first.keyv);
    const daily = scheduleOf(
      's-aaaaaa',
      { kind: 'cron', pattern: '0 9 * * *', timezone: 'Europe/Paris' },
      1_800_000_000_000,
      { lastDueAt: 1_799_913_600_000 },
    );
    const once = scheduleOf('s-bbbbbb', { kind: 'once', at: 1_800_000_000_000 }, 1_800_000_000_000);
    await store.save(daily);
    await store.save(once);
    await first.close();

    const second = await openKeyvStore(url);
    const again = new ScheduleStore(second.keyv);
    expect(await again.get('s-aaaaaa')).toEqual(daily);
    expect((await again.all()).map((s) => s.id).sort()).toEqual(['s-aaaaaa', 's-bbbbbb']);
    await again.delete('s-bbbbbb');
    expect(await again.get('s-bbbbbb')).toBeUndefined();
    expect(await again.ids()).toEqual(['s-aaaaaa']);
    await second.close();
  });

  it('leaves out a stored record that is not a schedule, and refuses to save one', async () => {
    const opened = await openKeyvStore(`sqlite://${join(dir, 'bot.sqlite')}`);
    const store = new ScheduleStore(opened.keyv);
    await store.save(scheduleOf('s-good22', { kind: 'once', at: 1_800_000_000_000 }, 1_800_000_000_000));
    await store.save(scheduleOf('s-bad222', { kind: 'once', at: 1_800_000_000_000 }, 1_800_000_000_000));
    await opened.keyv.set('schedule:s-bad222', { id: 's-bad222', spec: { kind: 'weekly' } });
    expect(await store.get('s-bad222')).toBeUndefined();
    expect((await store.all()).map((s) => s.id)).toEqual(['s-good22']);
    await expect(store.save({ ...scheduleOf('s-x', { kind: 'once', at: 1 }, 1), task: '' })).rejects.toThrow();
    await opened.close();
  });
});
