// The port for an index several processes change at once: the open-sessions index, the index
// of every session, the schedules' and feedback's own. One instance keeps it as a Keyv document
// (keyv-id-set.ts); cluster mode as an atomic Redis set (src/cluster/redis-id-set.ts).

/** A set of ids several processes change at once, each change atomic (cluster mode: a Redis set). */
export interface SharedIdSet {
  add(id: string): Promise<void>;
  remove(id: string): Promise<void>;
  all(): Promise<string[]>;
}
