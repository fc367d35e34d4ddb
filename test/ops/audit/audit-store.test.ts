// The audit trail's storage, on both backends: one process on SQLite, and cluster mode with
// two instances on one real redis-server. Each fact is written once however many instances
// report it; what may repeat (the same person stopping twice) does; old days go at the
// retention sweep (an injected clock); a store that is down holds no turn up, and the
// records wait for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys, type ClusterKeys } from '../../../src/cluster/cluster-keys.js';
import { fenceScope } from '../../../src/cluster/fence-scope.js';
import { auditStore, dayOf, type AuditStore } from '../../../src/ops/audit/audit-store.js';
import { AuditTrail } from '../../../src/ops/audit/audit-trail.js';
import { readAudit, type AuditQuery } from '../../../src/ops/audit/audit-query.js';
import type { AuditRecord } from '../../../src/ops/audit/audit-record.js';
import type { OpsEvent } from '../../../src/ops/ops-events.js';
import { openKeyvStore, type OpenedStore } from '../../../src/store/keyv-factory.js';
import { memoryLogger, waitFor } from '../../support/engine-kit.js';
import { RedisServer } from '../../support/redis-server.js';
import { tempDir } from '../../support/test-connector.js';
import { DAY_MS, everyKind, place, RECORDED_PER_BATCH } from './audit-events.js';

let redis: RedisServer;
let dir: Awaited<ReturnType<typeof tempDir>>;
const opened: OpenedStore[] = [];
beforeAll(async () => {
  redis = await RedisServer.start();
  dir = await tempDir();
});
afterAll(async () => {
  for (const store of opened) await store.close().catch(() => undefined);
  await redis?.dispose();
  await dir?.remove();
});

const NOW = Date.UTC(2026, 11, 3, 12, 0, 0);
let prefixes = 0;

interface Instance {
  store: AuditStore;
  opened: OpenedStore;
  keys?: ClusterKeys;
}

/** An instance of the bot's store: on Redis, several share one key space (`shared`), as cluster instances do. */
async function redisInstance(shared: string): Promise<Instance> {
  const keys = clusterKeys(shared);
  const store = await openKeyvStore(redis.url, 'bot', { keys, commandTimeoutMs: 2_000 });
  opened.push(store);
  return { store: auditStore(store.keyv, { redis: store.redis!, keys }), opened: store, keys };
}

async function sqliteInstance(): Promise<Instance> {
  const store = await openKeyvStore(`sqlite://${dir.path}/audit-${++prefixes}.sqlite`);
  opened.push(store);
  return { store: auditStore(store.keyv), opened: store };
}

async function all(store: AuditStore, query: AuditQuery = {}): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  await readAudit(store, query, async (records) => void out.push(...records));
  return out;
}

/** Poll an async check until it holds (a generous bound, for a slow machine). */
async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function trail(store: AuditStore, now = () => NOW, logger = memoryLogger()) {
  return new AuditTrail(store, { retentionDays: 90, now, logger });
}

describe('the audit trail in cluster mode (two instances, one Redis)', () => {
  it('writes each fact once when both instances report the same events at once', async () => {
    const shared = `audit-once-${++prefixes}:`;
    const [a, b] = [await redisInstance(shared), await redisInstance(shared)];
    const [left, right] = [trail(a.store), trail(b.store)];
    const events = [...everyKind(NOW), ...everyKind(NOW + 100, place('C2'))];
    // Interleaved, as two processes hearing one stream would.
    for (const event of events) {
      left.handle(event);
      right.handle(event);
    }
    await Promise.all([left.flush(), right.flush()]);
    const records = await all(a.store);
    expect(records).toHaveLength(2 * RECORDED_PER_BATCH);
    expect(new Set(records.map((record) => record.id)).size).toBe(records.length);
    expect(records.map((record) => record.type).slice(0, RECORDED_PER_BATCH)).toEqual([
      'turn_started',
      'tool_ended',
      'wait_ended',
      'wait_ended',
      'grant_changed',
      'stop_requested',
      'stopped',
      'model_switched',
      'budget_refused',
      'budget_continued',
      'forgotten',
    ]);
    // Either instance reads the same trail.
    expect(await all(b.store)).toEqual(records);
  });

  it('a call re-answered after a takeover is one record; a different ending, or a second stop, is another', async () => {
    const shared = `audit-rules-${++prefixes}:`;
    const [a, b] = [await redisInstance(shared), await redisInstance(shared)];
    const [left, right] = [trail(a.store), trail(b.store)];
    const where = place('C3');
    const ended = (at: number, outcome: 'ok' | 'interrupted', durationMs: number): OpsEvent => ({
      type: 'tool_ended',
      at,
      place: where,
      toolCallId: 'call_9',
      tool: 'read_file',
      outcome,
      durationMs,
      args: '{"path":"a"}',
    });
    left.handle(ended(NOW, 'ok', 12));
    right.handle(ended(NOW + 5_000, 'ok', 15)); // the instance that took over saw the same end later
    right.handle(ended(NOW + 6_000, 'interrupted', 1)); // and, say, an interrupted re-run: another fact
    left.handle({ type: 'stop_requested', at: NOW + 7_000, place: where, by: 'U2' });
    right.handle({ type: 'stop_requested', at: NOW + 9_000, place: where, by: 'U2' }); // the same person, again
    left.handle({ type: 'turn_started', at: NOW + 10_000, place: where, kind: 'run', by: 'U2', model: 'm' });
    right.handle({ type: 'turn_started', at: NOW + 20_000, place: where, kind: 'resume', by: 'U2', model: 'm' }); // a takeover's resume
    await Promise.all([left.flush(), right.flush()]);
    const records = await all(a.store, { channel: 'C3' });
    expect(records.map((record) => [record.type, record.outcome ?? record.kind ?? null])).toEqual([
      ['tool_ended', 'ok'],
      ['tool_ended', 'interrupted'],
      ['stop_requested', null],
      ['stop_requested', null],
      ['turn_started', 'run'],
      ['turn_started', 'resume'],
    ]);
    expect(records[0]).toMatchObject({ durationMs: 12 });
  });

  it("writes a record heard inside a session's fence scope as the bot's, not under that session's lease", async () => {
    const instance = await redisInstance(`audit-scope-${++prefixes}:`);
    const sink = trail(instance.store);
    // A turn whose lease this instance no longer holds (another took the session over): its
    // own writes are refused, but what it reported still goes into the trail.
    const lost = { sessionId: 'test:W1:C1:T1', leaseKey: instance.keys!.lease('test:W1:C1:T1'), token: 'gone:1' };
    fenceScope.run(lost, () => sink.handle(everyKind(NOW)[0]!));
    await sink.flush();
    expect((await all(instance.store)).map((record) => record.type)).toEqual(['turn_started']);
  });

  it('with Redis down, handling an event returns at once; the records wait and are written once it is back', async () => {
    const instance = await redisInstance(`audit-down-${++prefixes}:`);
    const logger = memoryLogger();
    const sink = trail(instance.store, () => NOW, logger);
    await redis.stop();
    try {
      for (const event of everyKind(NOW)) sink.handle(event); // synchronous: nothing here waits for Redis
      await waitFor(
        () => logger.lines.some((line) => line.message.includes('could not write an audit record')),
        15_000,
      );
    } finally {
      await redis.restart();
    }
    // The writer retries on its own (no flush): every record arrives, once.
    await eventually(async () => (await all(instance.store).catch(() => [])).length === RECORDED_PER_BATCH, 40_000);
    await sink.flush();
    expect(await all(instance.store)).toHaveLength(RECORDED_PER_BATCH);
  }, 60_000);
});

describe('the audit trail when a write fails half-way', () => {
  it('a record whose claim went through but whose write did not is written at the retry, once', async () => {
    const real = (await sqliteInstance()).store;
    let down = true;
    const refusing = (what: string) => () => Promise.reject(new Error(`store down (${what})`));
    // The store answers the claim, then goes down for the write and for giving the claim back.
    const flaky: AuditStore = {
      claim: (id) => real.claim(id),
      release: (id) => (down ? refusing('release')() : real.release(id)),
      append: (day, record) => (down ? refusing('append')() : real.append(day, record)),
      days: () => real.days(),
      read: (day) => real.read(day),
      drop: (day) => real.drop(day),
    };
    const logger = memoryLogger();
    const sink = trail(flaky, () => NOW, logger);
    sink.handle(everyKind(NOW)[0]!);
    await waitFor(() => logger.lines.some((line) => line.message.includes('could not write an audit record')));
    down = false;
    await sink.flush();
    expect((await all(real)).map((record) => record.type)).toEqual(['turn_started']);
  });
});

describe.each([
  ['one process on SQLite', () => sqliteInstance()],
  ['cluster mode on Redis', () => redisInstance(`audit-retention-${++prefixes}:`)],
])('the audit trail kept AUDIT_RETENTION_DAYS (%s)', (_name, open) => {
  it('the sweep deletes the days whose every moment is older than the retention period, and nothing newer', async () => {
    const instance = await open();
    let now = NOW;
    const sink = trail(instance.store, () => now);
    const moments = [NOW - 100 * DAY_MS, NOW - 91 * DAY_MS, NOW - 90 * DAY_MS, NOW - 89 * DAY_MS, NOW];
    for (const at of moments) sink.handle({ type: 'forgotten', at, place: place(), by: 'U1' });
    await sink.flush();
    expect(await instance.store.days()).toEqual(moments.map(dayOf));

    // 90 days: the day of the moment exactly 90 days ago stays (half of it is younger).
    expect(await sink.sweep()).toEqual([dayOf(NOW - 100 * DAY_MS), dayOf(NOW - 91 * DAY_MS)]);
    expect((await all(instance.store)).map((record) => record.at)).toEqual(moments.slice(2));
    // A day later it goes too; the sweep finds nothing more to do after that.
    now += DAY_MS;
    expect(await sink.sweep()).toEqual([dayOf(NOW - 90 * DAY_MS)]);
    expect(await sink.sweep()).toEqual([]);
    expect((await all(instance.store)).map((record) => record.at)).toEqual(moments.slice(3));
    // Gone from the store itself, not only from the index.
    const day = dayOf(NOW - 100 * DAY_MS);
    expect(await instance.opened.keyv.get(`audit:log:${day}:0`)).toBeUndefined();
    if (instance.keys) expect(await instance.opened.redis!.exists(instance.keys.audit(`len:${day}`))).toBe(0);
    else expect(await instance.opened.keyv.get(`audit:log:${day}:len`)).toBeUndefined();
  });
});
