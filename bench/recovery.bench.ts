// The recovery suite: what start-up costs when the store holds many quiet threads.
//   - 10,000 stored idle sessions (a short finished conversation each) and 10 that a crash
//     left mid-tool (a started call without a result): `recover()` on a freshly opened
//     store, as at start-up. It should read only the 10 (the open index), so its time and
//     memory should not grow with the idle ones.
//   - the same store read the way recovery worked before the open index existed (every
//     stored session built and examined), for comparison: that is also the one-time cost of
//     the first start on a store written by an older version.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineTool, type Message } from '../src/engine/index.js';
import { openKeyvStore } from '../src/store/keyv-factory.js';
import { PersistentToolLedger } from '../src/store/persistent-tool-ledger.js';
import { SessionStore, type SessionRecord } from '../src/store/session-store.js';
import { benchSessionManager, ZeroLatencyProvider } from './fixtures.js';
import type { BenchRow, BenchSuite } from './suite.js';

const CHILD = fileURLToPath(new URL('./recovery-child.ts', import.meta.url));
const IDLE = 10_000;
const NEEDY = 10;
const WRITE_BATCH = 200;

function recordOf(id: string): SessionRecord {
  const now = Date.now();
  return {
    id,
    key: { platform: 'bench', workspace: 'W', channel: 'C', thread: id },
    model: 'bench',
    grants: { tools: [], commands: [] },
    compaction: null,
    startedBy: 'U1',
    steerers: [],
    directories: [],
    createdAt: now,
    updatedAt: now,
  };
}

function finishedConversation(id: string): Message[] {
  const call = { id: `${id}-c1`, type: 'function' as const, function: { name: 'migrate', arguments: '{}' } };
  return [
    { role: 'user', content: 'please migrate the table', ts: 1 },
    { role: 'assistant', content: 'on it', tool_calls: [call], ts: 2 },
    { role: 'tool', tool_call_id: call.id, content: 'migrated 120 rows', ts: 3 },
    { role: 'assistant', content: 'Done: 120 rows migrated.', ts: 4 },
  ];
}

/** Write the sessions as the bot would have left them: idle ones settled, needy ones open mid-tool. */
async function populate(store: SessionStore): Promise<void> {
  await store.openSessionIds(); // a store this version started: the open index exists (empty)
  const ids = Array.from({ length: IDLE }, (_, i) => `idle-${i}`);
  for (let start = 0; start < ids.length; start += WRITE_BATCH) {
    await Promise.all(
      ids.slice(start, start + WRITE_BATCH).map(async (id) => {
        await store.saveSession(recordOf(id));
        for (const message of finishedConversation(id)) await store.appendMessage(id, message);
      }),
    );
  }
  const ledger = new PersistentToolLedger(store);
  for (let i = 0; i < NEEDY; i++) {
    const id = `needy-${i}`;
    await store.markOpen(id);
    await store.saveSession(recordOf(id));
    const [user, assistant] = finishedConversation(id);
    await store.appendMessage(id, user!);
    await store.appendMessage(id, assistant!);
    await ledger.markStarted(id, `${id}-c1`, [`${id}-c1`]);
  }
}

interface Measured {
  ms: number;
  rssMb: number;
  /** Resident memory just before recover() began (the runtime, the modules, the open store). */
  baselineMb: number;
  examined: number;
  resumed: number;
}

/**
 * Recover in a fresh process, as at start-up: cold caches, and a resident-memory figure
 * that is recovery's own (this process has just written 10,000 sessions).
 */
function measureRecovery(url: string, fullScan: boolean): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', CHILD, url, fullScan ? 'full-scan' : 'indexed'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`the recovery process exited with ${code}: ${out}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Measured);
    });
  });
}

/** The child's side: open, recover, let the resumed turns finish, report. */
export async function recoverAndReport(url: string, fullScan: boolean): Promise<Measured> {
  const opened = await openKeyvStore(url);
  try {
    const store = new SessionStore(opened.keyv);
    if (fullScan) await opened.keyv.delete('open-sessions'); // as a store from before the index
    const migrate = defineTool({
      name: 'migrate',
      description: 'migrate',
      schema: z.object({}),
      metadata: { risk: 'low', category: 'write' },
      execute: async () => 'ok',
    });
    const manager = benchSessionManager(store, () => new ZeroLatencyProvider(0, 'migrate'), migrate);
    global.gc?.();
    const baselineMb = process.memoryUsage().rss / 1024 / 1024;
    const started = performance.now();
    const report = await manager.recover();
    const ms = performance.now() - started;
    await manager.idle();
    await manager.shutdown(0);
    if (report.resumed.length !== NEEDY)
      throw new Error(`recovery resumed ${report.resumed.length} sessions, expected ${NEEDY}`);
    // maxRSS is the process's peak resident set, in kilobytes.
    return {
      ms,
      rssMb: process.resourceUsage().maxRSS / 1024,
      baselineMb,
      examined: report.examined,
      resumed: report.resumed.length,
    };
  } finally {
    await opened.close();
  }
}

export const recoverySuite: BenchSuite = {
  name: 'recovery',
  async run(): Promise<BenchRow[]> {
    const dir = await mkdtemp(join(tmpdir(), 'bench-recovery-'));
    const url = `sqlite://${dir}/bench.sqlite`;
    try {
      const opened = await openKeyvStore(url);
      const setupStarted = performance.now();
      await populate(new SessionStore(opened.keyv));
      const setupMs = performance.now() - setupStarted;
      await opened.close();
      const indexed = await measureRecovery(url, false);
      // The needy sessions are repaired now; make ten new ones for the comparison run.
      const reopened = await openKeyvStore(url);
      const store = new SessionStore(reopened.keyv);
      const ledger = new PersistentToolLedger(store);
      for (let i = 0; i < NEEDY; i++) {
        const id = `needy-${i}`;
        const call = { id: `${id}-c2`, type: 'function' as const, function: { name: 'migrate', arguments: '{}' } };
        await store.appendMessage(id, { role: 'user', content: 'again', ts: 5 });
        await store.appendMessage(id, { role: 'assistant', content: null, tool_calls: [call], ts: 6 });
        await ledger.markStarted(id, call.id, [call.id]);
      }
      await reopened.close();
      const scanned = await measureRecovery(url, true);
      return [
        {
          key: 'sessions.recover_ms_10000_stored',
          value: indexed.ms,
          unit: 'ms',
          note: `recover() with ${IDLE.toLocaleString('en')} idle and ${NEEDY} mid-tool sessions stored; read ${indexed.examined}, resumed ${indexed.resumed} (SQLite WAL, cold caches)`,
        },
        {
          key: 'sessions.recover_rss_mb_10000_stored',
          value: indexed.rssMb,
          unit: 'MB',
          note: `peak resident memory of a fresh process that opens the store, recovers and finishes the 10 resumed turns (${indexed.baselineMb.toFixed(0)} MB before recovery began)`,
        },
        {
          key: 'sessions.recover_full_scan_ms_10000_stored',
          value: scanned.ms,
          unit: 'ms',
          note: `the same store examined session by session (no open index: the old way, and a first start on an older store); read ${scanned.examined}`,
        },
        {
          key: 'sessions.recover_full_scan_rss_mb_10000_stored',
          value: scanned.rssMb,
          unit: 'MB',
          note: `peak resident memory of a fresh process doing that full scan (${scanned.baselineMb.toFixed(0)} MB before it began)`,
        },
        {
          key: 'sessions.recover_setup_ms',
          value: setupMs,
          unit: 'ms',
          note: `writing the ${(IDLE + NEEDY).toLocaleString('en')} sessions (4 messages each), for scale`,
        },
      ];
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
