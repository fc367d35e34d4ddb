import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { InProcessCoordinator } from '../../src/sessions/coordination.js';
import { AppendLog } from '../../src/store/append-log.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { PersistentInbox } from '../../src/store/persistent-inbox.js';
import { PersistentToolLedger } from '../../src/store/persistent-tool-ledger.js';
import { SessionStore, type SessionRecord } from '../../src/store/session-store.js';
import { storeBackends, type StoreBackend } from './store-backends.js';

// Every scenario below runs on each backend (store-backends.ts): memory and SQLite as a
// single bot uses them, and Redis through cluster mode's adapter.
const backends = storeBackends();
const opened: OpenedStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const backend of backends) await backend.cleanup();
});
afterAll(async () => {
  for (const backend of backends) await backend.dispose();
});

async function freshStore(backend: StoreBackend): Promise<OpenedStore> {
  const store = await backend.fresh();
  opened.push(store);
  return store;
}

async function sessionStoreOn(backend: StoreBackend): Promise<SessionStore> {
  return new SessionStore((await freshStore(backend)).keyv);
}

function record(id: string, updatedAt = Date.now()): SessionRecord {
  return {
    id,
    key: { platform: 'test', workspace: 'W', channel: 'C', thread: id },
    model: 'm',
    grants: { tools: [], commands: [] },
    compaction: null,
    steerers: [],
    directories: [],
    createdAt: updatedAt,
    updatedAt,
  };
}

describe.each(backends)('the store ($name)', (backend) => {
  it('opens from a URL (SQLite: creating its folder) and keeps data across a reopen', async () => {
    const reopen = await backend.place();
    const first = await reopen();
    await new SessionStore(first.keyv).appendMessage('s1', { role: 'user', content: 'kept' });
    await first.close();
    const second = await reopen();
    opened.push(second);
    expect(second.backend).toBe(backend.persistent);
    expect(await new SessionStore(second.keyv).loadTranscript('s1')).toEqual([{ role: 'user', content: 'kept' }]);
  });

  // Redis needs no package since cluster mode brought its own adapter: PostgreSQL stands in.
  it('says what to install for a backend whose adapter is missing, and refuses unknown schemes', async () => {
    await expect(openKeyvStore('postgresql://localhost/bot')).rejects.toThrow(/needs the @keyv\/postgres package/);
    await expect(openKeyvStore('ftp://x')).rejects.toThrow(/unsupported scheme "ftp:"/);
    await expect(openKeyvStore('sqlite://')).rejects.toThrow(/needs a file path/);
  });

  it('appends without rewriting, and an entry written before a crash updated the length is not lost', async () => {
    const store = await freshStore(backend);
    const log = new AppendLog<string>(store.keyv, 'log');
    await log.append('a');
    await log.append('b');
    // A crash between writing entry 2 and updating the length:
    await store.keyv.set('log:2', 'c');
    const reopened = new AppendLog<string>(store.keyv, 'log');
    expect(await reopened.readAll()).toEqual(['a', 'b', 'c']);
    expect(await reopened.append('d')).toBe(3);
  });

  it('refuses a corrupted stored record with an error naming the field', async () => {
    const store = await sessionStoreOn(backend);
    await store.keyv.set('session:bad', { id: 'bad', model: 42 });
    await expect(store.getSession('bad')).rejects.toThrow(/model|key/);
    await store.appendMessage('s', { role: 'user', content: 'fine' });
    await store.keyv.set('transcript:s:1', { role: 'wizard' });
    await store.keyv.set('transcript:s:len', 2);
    await expect(new SessionStore(store.keyv).loadTranscript('s')).rejects.toThrow();
  });

  it('retention deletes sessions untouched for longer than the limit, with everything they own', async () => {
    const store = await sessionStoreOn(backend);
    const inbox = new PersistentInbox(store);
    const day = 24 * 60 * 60 * 1000;
    await store.saveSession(record('old'));
    await store.saveSession(record('new'));
    await store.keyv.set('session:old', { ...record('old'), updatedAt: Date.now() - 40 * day });
    await store.appendMessage('old', { role: 'user', content: 'ancient' });
    const item = await inbox.open({ sessionId: 'old', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] });
    expect(await store.sweepExpired(30 * day)).toEqual(['old']);
    expect(await store.listSessionIds()).toEqual(['new']);
    expect(await store.loadTranscript('old')).toEqual([]);
    expect(await inbox.get(item.id)).toBeUndefined();
    expect(await inbox.findByCall('old', 'c1')).toBeUndefined();
  });
});

describe.each(backends)('the persistent inbox ($name)', (backend) => {
  it('opens idempotently even when two openers race, and the first answer wins', async () => {
    const store = await sessionStoreOn(backend);
    const inbox = new PersistentInbox(store);
    const [a, b] = await Promise.all([
      inbox.open({ sessionId: 's', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] }),
      inbox.open({ sessionId: 's', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] }),
    ]);
    expect(b.id).toBe(a.id);
    const [first, second] = await Promise.all([
      inbox.resolve(a.id, { kind: 'approval', outcome: 'deny' }, 'U1'),
      inbox.resolve(a.id, { kind: 'approval', outcome: 'once' }, 'U2'),
    ]);
    expect(first).toMatchObject({ ok: true });
    expect(second).toMatchObject({ ok: false, reason: 'already_resolved' });
    expect(await inbox.lookup('s', 'c1')).toEqual({ kind: 'approval', outcome: 'deny' });
  });

  it('a waiter wakes on the answer, including one given just before it started waiting', async () => {
    const store = await sessionStoreOn(backend);
    const inbox = new PersistentInbox(store);
    const item = await inbox.open({ sessionId: 's', toolCallId: 'c1', kind: 'question' });
    const waiting = inbox.wait(item.id, new AbortController().signal);
    await inbox.resolve(item.id, { kind: 'question', answer: '42' });
    expect(await waiting).toEqual({ kind: 'question', answer: '42' });
    expect(await inbox.wait(item.id, new AbortController().signal)).toEqual({ kind: 'question', answer: '42' });
    const stopped = new AbortController();
    const other = await inbox.open({ sessionId: 's', toolCallId: 'c2', kind: 'question' });
    const pending = inbox.wait(other.id, stopped.signal);
    stopped.abort();
    expect(await pending).toBeUndefined();
  });
});

describe.each(backends)('event de-duplication ($name)', (backend) => {
  it('claims an event once, also across a restart (the claim is persisted with a TTL)', async () => {
    const store = await sessionStoreOn(backend);
    const first = new InProcessCoordinator(store);
    expect(await Promise.all([first.claimEvent('Ev1'), first.claimEvent('Ev1')])).toEqual([true, false]);
    const afterRestart = new InProcessCoordinator(store);
    expect(await afterRestart.claimEvent('Ev1')).toBe(false);
    expect(await afterRestart.claimEvent('Ev2')).toBe(true);
  });

  it('one running turn per session', () => {
    const coordinator = new InProcessCoordinator({
      hasProcessedEvent: async () => false,
      markEventProcessed: async () => undefined,
    });
    const lease = coordinator.acquireTurn('s')!;
    expect(coordinator.acquireTurn('s')).toBeUndefined();
    lease.release();
    expect(coordinator.acquireTurn('s')).toBeDefined();
  });
});

describe.each(backends)('the tool ledger and the indexes ($name)', (backend) => {
  it('a recorded start survives a reopen; a new round replaces the old one; forgetting a thread removes it', async () => {
    const reopen = await backend.place();
    const first = await reopen();
    const store = new SessionStore(first.keyv);
    const ledger = new PersistentToolLedger(store);
    await ledger.markStarted('s1', 'call_a', ['call_a']);
    await ledger.markStarted('s1', 'call_a', ['call_b']);
    await first.close();

    const second = await reopen();
    opened.push(second);
    const reopened = new PersistentToolLedger(new SessionStore(second.keyv));
    expect([...(await reopened.started('s1', 'call_a'))]).toEqual(['call_a', 'call_b']);
    expect([...(await reopened.started('s1', 'call_z'))]).toEqual([]);
    await reopened.markStarted('s1', 'call_c', ['call_c']);
    expect(await new SessionStore(second.keyv).getToolRound('s1')).toEqual({ round: 'call_c', started: ['call_c'] });
    await new SessionStore(second.keyv).deleteSession('s1');
    expect(await new SessionStore(second.keyv).getToolRound('s1')).toBeUndefined();
  });

  it('a tool start is one store write', async () => {
    const store = await sessionStoreOn(backend);
    const ledger = new PersistentToolLedger(store);
    await ledger.markStarted('s1', 'r', ['a']);
    const writes: string[] = [];
    const set = store.keyv.set.bind(store.keyv);
    store.keyv.set = async (key: string, value: unknown, ttl?: number) => {
      writes.push(key);
      return set(key, value, ttl);
    };
    await ledger.markStarted('s1', 'r', ['b', 'c']);
    expect(writes).toEqual(['tools-started:s1']);
  });

  it('the open index: marked once, settled once, survives a reopen', async () => {
    const reopen = await backend.place();
    const first = await reopen();
    const store = new SessionStore(first.keyv);
    await store.markOpen('a');
    await store.markOpen('b');
    await store.markOpen('a');
    await store.markSettled('b');
    await first.close();
    const second = await reopen();
    opened.push(second);
    expect(await new SessionStore(second.keyv).openSessionIds()).toEqual(['a']);
  });

  it('1,000 sessions opened at once rewrite the open index a few times, not once each, and each is stored before its markOpen resolves', async () => {
    const store = await sessionStoreOn(backend);
    await store.markOpen('earlier');
    // Each write of the index as it completed: the list it stored.
    const stored: string[][] = [];
    const set = store.keyv.set.bind(store.keyv);
    store.keyv.set = async (key: string, value: unknown, ttl?: number) => {
      const done = await set(key, value, ttl);
      if (key === 'open-sessions') stored.push([...(value as string[])]);
      return done;
    };
    const ids = Array.from({ length: 1_000 }, (_, i) => `s${i}`);
    const storedOnReturn = await Promise.all(
      ids.map(async (id) => {
        await store.markOpen(id);
        return stored.some((list) => list.includes(id));
      }),
    );
    expect(storedOnReturn.every(Boolean)).toBe(true);
    // Before, every change rewrote the whole list: 1,000 writes of up to 1,000 ids.
    expect(stored.length).toBeLessThanOrEqual(5);
    expect((await new SessionStore(store.keyv).openSessionIds()).sort()).toEqual(['earlier', ...ids].sort());

    stored.length = 0;
    const settledOnReturn = await Promise.all(
      ids.map(async (id) => {
        await store.markSettled(id);
        return stored.some((list) => !list.includes(id));
      }),
    );
    expect(settledOnReturn.every(Boolean)).toBe(true);
    expect(stored.length).toBeLessThanOrEqual(5);
    expect(await new SessionStore(store.keyv).openSessionIds()).toEqual(['earlier']);
  });

  it('the session index is sharded, still reads a list written before sharding, and forgets deleted ids', async () => {
    const store = await sessionStoreOn(backend);
    await store.keyv.set('sessions', ['legacy']);
    for (let i = 0; i < 200; i++) await store.saveSession(record(`s${i}`));
    const ids = await store.listSessionIds();
    expect(ids).toHaveLength(201);
    expect(ids).toContain('legacy');
    // A new thread rewrites one shard, never a list of every thread.
    const biggest = Math.max(
      ...(await Promise.all(
        Array.from({ length: 64 }, async (_, i) => ((await store.keyv.get<string[]>(`sessions:${i}`)) ?? []).length),
      )),
    );
    expect(biggest).toBeLessThan(20);
    await store.deleteSession('legacy');
    await store.deleteSession('s7');
    expect(await store.listSessionIds()).toHaveLength(199);
  });
});
