// A set of ids kept as one Keyv document (a JSON list): the open-sessions index of a single
// instance (cluster mode keeps it in Redis as an atomic set, redis-id-set.ts). This process
// is the only writer, so it keeps the set in memory and rewrites the document on a change.
//
// The one idea: changes are written together. Every change rewrites the whole list, so when
// 1,000 threads start at once, writing each change alone wrote the list 2,000 times, each
// time up to 1,000 ids long: about 140 MB of JSON made and sent to SQLite for one burst.
// Changes made while a write is under way wait for it and then go
// together in the next write (a group commit); each caller still resolves only once its own
// change is stored, as before.
import type Keyv from 'keyv';
import { z } from 'zod';
import type { SharedIdSet } from './shared-id-set.js';

const IdListSchema = z.array(z.string());

export class KeyvIdSet implements SharedIdSet {
  /** The set as last read or written (undefined: not read yet). */
  private ids: Set<string> | undefined;
  /** Changes not yet written: true adds the id, false removes it. */
  private queued = new Map<string, boolean>();
  /** The write that will carry the queued changes, until it begins. */
  private nextWrite: Promise<void> | undefined;
  /** Reads and writes, one at a time. */
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * `key`: the document. `initial`: the ids when the document does not exist yet (a store
   * from before it did), written as it is at that first read.
   */
  constructor(
    private readonly keyv: Keyv,
    private readonly key: string,
    private readonly initial: () => Promise<string[]>,
  ) {}

  add(id: string): Promise<void> {
    if (this.ids?.has(id) && !this.queued.has(id)) return Promise.resolve();
    this.queued.set(id, true);
    return this.write();
  }

  remove(id: string): Promise<void> {
    if (this.ids && !this.ids.has(id) && !this.queued.has(id)) return Promise.resolve();
    this.queued.set(id, false);
    return this.write();
  }

  /** Every id, the changes already asked for included. */
  all(): Promise<string[]> {
    return this.serially(async () => [...(await this.load())]);
  }

  /** The write that will carry the queued changes: the one not begun yet, or a new one. */
  private write(): Promise<void> {
    this.nextWrite ??= this.serially(async () => {
      this.nextWrite = undefined;
      const changes = this.queued;
      this.queued = new Map();
      const ids = await this.load();
      let changed = false;
      for (const [id, present] of changes) {
        if (present === ids.has(id)) continue;
        if (present) ids.add(id);
        else ids.delete(id);
        changed = true;
      }
      if (changed) await this.keyv.set(this.key, [...ids]);
    });
    return this.nextWrite;
  }

  private async load(): Promise<Set<string>> {
    if (this.ids) return this.ids;
    const raw = await this.keyv.get<unknown>(this.key);
    if (raw !== undefined) {
      this.ids = new Set(IdListSchema.parse(raw));
    } else {
      this.ids = new Set(await this.initial());
      await this.keyv.set(this.key, [...this.ids]);
    }
    return this.ids;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
