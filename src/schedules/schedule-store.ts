// Where schedules are kept, in the bot's Keyv namespace:
//
//   schedule:<id>   one schedule (ScheduleSchema), parsed with zod when read back
//   schedules       the index of schedule ids: a Keyv document on one instance
//                   (KeyvIdSet), a Redis set in cluster mode (redisIdSet), so instances
//                   creating and ending schedules at once lose none of each other's changes
//
// Nothing is cached here beyond what the index itself keeps (the KeyvIdSet of a single
// process, which is the only writer then): every read of a record goes to the store, so a
// second instance's change is seen at the next read. Order of writes: a record is written
// before its id joins the index, and its id leaves the index before the record goes, so an
// id in the index without its record is only ever a moment of a delete.
import type Keyv from 'keyv';
import { KeyvIdSet } from '../store/keyv-id-set.js';
import type { SharedIdSet } from '../store/shared-id-set.js';
import { ScheduleSchema, type Schedule } from './schedule-types.js';

const SCHEDULE_INDEX_KEY = 'schedules';
const RECORD_PREFIX = 'schedule:';
/** Records read per getMany when everything is loaded: 1,000+ schedules in a few round trips. */
const READ_BATCH = 200;

export class ScheduleStore {
  private readonly index: SharedIdSet;

  /**
   * `index`: cluster mode passes a Redis set (`redisIdSet(redis, clusterKeys().schedules)`);
   * without one the index is a Keyv document this process owns.
   */
  constructor(
    private readonly keyv: Keyv,
    index?: SharedIdSet,
  ) {
    this.index = index ?? new KeyvIdSet(keyv, SCHEDULE_INDEX_KEY, () => Promise.resolve([]));
  }

  async save(schedule: Schedule): Promise<void> {
    const checked = ScheduleSchema.parse(schedule);
    await this.keyv.set(RECORD_PREFIX + checked.id, checked);
    await this.index.add(checked.id);
  }

  /**
   * Record what a run changed (lastDueAt, nextRunAt) in a schedule that may have been ended
   * meanwhile, here or on another instance. There is no compare-and-set in Keyv, so: the
   * record is written without touching the index, then the index is asked whether the
   * schedule is still in it; if not, the record just written is deleted again and the answer
   * is false. An end is an index removal followed by a record delete, so either this check
   * sees the end, or the end's delete comes after this write: an ended schedule never comes
   * back (a plain save would have put it back in the index).
   */
  async update(schedule: Schedule): Promise<boolean> {
    const checked = ScheduleSchema.parse(schedule);
    await this.keyv.set(RECORD_PREFIX + checked.id, checked);
    if ((await this.index.all()).includes(checked.id)) return true;
    await this.keyv.delete(RECORD_PREFIX + checked.id);
    return false;
  }

  /** The schedule, or undefined when there is none (or what is stored is not a schedule). */
  async get(id: string): Promise<Schedule | undefined> {
    return parsed(await this.keyv.get<unknown>(RECORD_PREFIX + id));
  }

  async delete(id: string): Promise<void> {
    await this.index.remove(id);
    await this.keyv.delete(RECORD_PREFIX + id);
  }

  /** The ids in the index (cheap: what the scheduler's refresh reads). */
  ids(): Promise<string[]> {
    return this.index.all();
  }

  /** Every stored schedule. A record that no longer parses is left out (and left alone). */
  async all(): Promise<Schedule[]> {
    return this.many(await this.index.all());
  }

  /** The schedules of these ids that exist, in no particular order. */
  async many(ids: readonly string[]): Promise<Schedule[]> {
    const found: Schedule[] = [];
    for (let start = 0; start < ids.length; start += READ_BATCH) {
      const batch = ids.slice(start, start + READ_BATCH);
      const raws = await this.keyv.getMany<unknown>(batch.map((id) => RECORD_PREFIX + id));
      for (const raw of raws) {
        const schedule = parsed(raw);
        if (schedule) found.push(schedule);
      }
    }
    return found;
  }
}

function parsed(raw: unknown): Schedule | undefined {
  if (raw === undefined || raw === null) return undefined;
  const result = ScheduleSchema.safeParse(raw);
  return result.success ? result.data : undefined;
}
