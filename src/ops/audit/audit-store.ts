// Where the audit trail lives: the bot's own store (Keyv: SQLite by default, Redis in cluster
// mode), one append-only log per UTC day, so that retention drops whole days and an export
// reads only the days it asks for. Records sit under `audit:` keys, apart from the
// transcripts: /forget and the transcripts' retention never touch them.
//
// Two backends, one shape:
// - one process (SQLite, memory, any Keyv URL): a day is an AppendLog (store/append-log.ts;
//   this process is its only writer), the days are one document (store/keyv-id-set.ts), and
//   a record id is claimed in memory (the most recent CLAIMS_KEPT ids);
// - cluster mode (Redis): several instances append to one day, so a record's place comes
//   from INCR on the day's counter (atomic; an AppendLog's read-then-write would let two
//   instances take the same index), the days are a Redis set, and a record id is claimed
//   with SET NX and a TTL: the first instance to claim a fact writes it, the others skip it.
//   The record itself is a Keyv document like any other, so both backends read alike.
import type { Redis } from 'ioredis';
import type Keyv from 'keyv';
import { z } from 'zod';
import type { ClusterKeys } from '../../cluster/cluster-keys.js';
import { AppendLog } from '../../store/append-log.js';
import { KeyvIdSet } from '../../store/keyv-id-set.js';
import type { AuditRecord } from './audit-record.js';

/** Every Keyv key of the trail starts with this (the shutdown's write fence keeps it writable). */
export const AUDIT_KEY_PREFIX = 'audit:';
const DAYS_DOCUMENT = `${AUDIT_KEY_PREFIX}days`;
/** How long a record id stays claimed: a duplicate comes from a takeover or a restart, within minutes; a day is ample. */
const CLAIM_TTL_MS = 24 * 60 * 60 * 1000;
/** One process: the ids it remembers having written (a duplicate there is a replay of a recent event). */
const CLAIMS_KEPT = 10_000;
const READ_BATCH = 500;

export interface AuditStore {
  /** True the first time an id is claimed (across instances in cluster mode, for CLAIM_TTL_MS). */
  claim(id: string): Promise<boolean>;
  /** Give a claim back: the record could not be written, a later attempt (or instance) may. */
  release(id: string): Promise<void>;
  append(day: string, record: AuditRecord): Promise<void>;
  /** The days that hold records, oldest first (`YYYY-MM-DD`, UTC). */
  days(): Promise<string[]>;
  /** One day's records as stored (unchecked: the reader parses them), in the order written. */
  read(day: string): Promise<unknown[]>;
  /** Delete a day and everything in it. */
  drop(day: string): Promise<void>;
}

/** The UTC day of a moment, `YYYY-MM-DD`. */
export function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

function recordKey(day: string, index: number): string {
  return `${AUDIT_KEY_PREFIX}log:${day}:${index}`;
}

/**
 * The trail in the store the bot opened: `redis` (with the cluster's key names) in cluster
 * mode, the Keyv store alone otherwise.
 */
export function auditStore(keyv: Keyv, cluster?: { redis: Redis; keys: ClusterKeys }): AuditStore {
  return cluster ? new RedisAuditStore(keyv, cluster.redis, cluster.keys) : new KeyvAuditStore(keyv);
}

const DaysSchema = z.array(z.string());

async function readDaysDocument(keyv: Keyv): Promise<string[]> {
  const raw = await keyv.get<unknown>(DAYS_DOCUMENT);
  const parsed = DaysSchema.safeParse(raw ?? []);
  return parsed.success ? parsed.data : [];
}

class KeyvAuditStore implements AuditStore {
  private readonly logs = new Map<string, AppendLog<AuditRecord>>();
  private readonly claimed = new Set<string>();
  private readonly dayIndex: KeyvIdSet;

  constructor(private readonly keyv: Keyv) {
    this.dayIndex = new KeyvIdSet(keyv, DAYS_DOCUMENT, async () => []);
  }

  claim(id: string): Promise<boolean> {
    if (this.claimed.has(id)) return Promise.resolve(false);
    this.claimed.add(id);
    // Oldest first: a Set iterates in insertion order.
    if (this.claimed.size > CLAIMS_KEPT) this.claimed.delete(this.claimed.values().next().value!);
    return Promise.resolve(true);
  }

  release(id: string): Promise<void> {
    this.claimed.delete(id);
    return Promise.resolve();
  }

  async append(day: string, record: AuditRecord): Promise<void> {
    // The day first: a record is never where the sweep cannot find it.
    await this.dayIndex.add(day);
    await this.log(day).append(record);
  }

  async days(): Promise<string[]> {
    return (await readDaysDocument(this.keyv)).sort();
  }

  read(day: string): Promise<unknown[]> {
    return this.log(day).readAll();
  }

  async drop(day: string): Promise<void> {
    await this.log(day).clear();
    this.logs.delete(day);
    await this.dayIndex.remove(day);
  }

  private log(day: string): AppendLog<AuditRecord> {
    let log = this.logs.get(day);
    if (!log) {
      // Same keys as recordKey(): `audit:log:<day>:<index>`, and `…:len`.
      log = new AppendLog<AuditRecord>(this.keyv, `${AUDIT_KEY_PREFIX}log:${day}`);
      this.logs.set(day, log);
    }
    return log;
  }
}

class RedisAuditStore implements AuditStore {
  /** Days this process has added to the index (a SADD per record would be a wasted round trip). */
  private readonly indexed = new Set<string>();

  constructor(
    private readonly keyv: Keyv,
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
  ) {}

  async claim(id: string): Promise<boolean> {
    return (await this.redis.set(this.keys.audit(`claim:${id}`), '1', 'PX', CLAIM_TTL_MS, 'NX')) === 'OK';
  }

  async release(id: string): Promise<void> {
    await this.redis.del(this.keys.audit(`claim:${id}`));
  }

  async append(day: string, record: AuditRecord): Promise<void> {
    if (!this.indexed.has(day)) {
      await this.redis.sadd(this.keys.audit('days'), day);
      this.indexed.add(day);
    }
    // A crash between the two leaves an empty place, which a read skips.
    const index = (await this.redis.incr(this.lengthKey(day))) - 1;
    await this.keyv.set(recordKey(day, index), record);
  }

  async days(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.audit('days'))).sort();
  }

  async read(day: string): Promise<unknown[]> {
    const length = Number((await this.redis.get(this.lengthKey(day))) ?? 0);
    const out: unknown[] = [];
    for (let start = 0; start < length; start += READ_BATCH) {
      const keys = Array.from({ length: Math.min(READ_BATCH, length - start) }, (_, i) => recordKey(day, start + i));
      for (const value of await this.keyv.getMany<unknown>(keys)) if (value !== undefined) out.push(value);
    }
    return out;
  }

  async drop(day: string): Promise<void> {
    const length = Number((await this.redis.get(this.lengthKey(day))) ?? 0);
    for (let start = 0; start < length; start += READ_BATCH) {
      await this.keyv.deleteMany(
        Array.from({ length: Math.min(READ_BATCH, length - start) }, (_, i) => recordKey(day, start + i)),
      );
    }
    await this.redis.del(this.lengthKey(day));
    await this.redis.srem(this.keys.audit('days'), day);
    this.indexed.delete(day);
  }

  private lengthKey(day: string): string {
    return this.keys.audit(`len:${day}`);
  }
}
