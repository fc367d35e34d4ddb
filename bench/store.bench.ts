// The store and session suite: what persistence costs as conversations grow and as
// sessions multiply.
//   - append cost at the 10th and the 10,000th message: appends must not rewrite the
//     transcript, so the two should cost about the same (a ratio near 1);
//   - loading a 10,000-message session (a rebuild after eviction or a restart);
//   - SQLite with its default journal (an fsync per write) against WAL, which we use;
//   - 1,000 sessions each running a short scripted turn at once: total time, peak memory,
//     and the memory an idle session's engine keeps. In a fresh process (concurrent-child.ts),
//     with the V8 settings the bot runs with (bin/v8-flags.mjs): measured in this one, the peak
//     was what the suites before it had left in the heap (450 MB after the engine and provider
//     suites, 308 MB when this suite ran alone), not what the turns take.
//     The session layer only: bench/process.bench.ts measures the whole bot doing the same.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { V8_FLAGS } from '../bin/v8-flags.mjs';
import { defineTool, type Message } from '../src/engine/index.js';
import { openKeyvStore } from '../src/store/keyv-factory.js';
import { SessionStore } from '../src/store/session-store.js';
import { benchSessionManager, ZeroLatencyProvider } from './fixtures.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const CHILD = fileURLToPath(new URL('./concurrent-child.ts', import.meta.url));

const message = (i: number): Message => ({
  role: 'user',
  content: `message number ${i} with a little text to make it realistic`,
  ts: Date.now(),
});

async function withStore<T>(work: (store: SessionStore, url: string) => Promise<T>, wal = true): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-store-'));
  const url = `sqlite://${dir}/bench.sqlite`;
  const opened = await openKeyvStore(url, 'bot', { wal });
  try {
    return await work(new SessionStore(opened.keyv), url);
  } finally {
    await opened.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Mean ms per append over a window of appends starting at `from`. */
async function appendWindow(store: SessionStore, id: string, from: number, count: number): Promise<number> {
  const started = performance.now();
  for (let i = from; i < from + count; i++) await store.appendMessage(id, message(i));
  return (performance.now() - started) / count;
}

async function appendRows(): Promise<BenchRow[]> {
  return withStore(async (store) => {
    const window = 50;
    const early = await appendWindow(store, 'long', 0, 20);
    for (let i = 20; i < 9_975; i++) await store.appendMessage('long', message(i));
    const late = await appendWindow(store, 'long', 9_975, window);
    const loads: number[] = [];
    for (let i = 0; i < 3; i++) {
      const fresh = new SessionStore(store.keyv);
      const started = performance.now();
      const loaded = await fresh.loadTranscript('long');
      loads.push(performance.now() - started);
      if (loaded.length !== 10_025) throw new Error(`loaded ${loaded.length} messages, expected 10,025`);
    }
    return [
      { key: 'store.append_ms_at_10', value: early, unit: 'ms', note: 'mean of appends 1-20, SQLite WAL' },
      {
        key: 'store.append_ms_at_10000',
        value: late,
        unit: 'ms',
        note: `mean of ${window} appends around the 10,000th`,
      },
      {
        key: 'store.append_ratio_10000_vs_10',
        value: late / early,
        unit: 'x',
        note: 'append cost at 10,000 messages / at 10 (1 = no growth)',
      },
      {
        key: 'store.load_10000_ms',
        value: median(loads),
        unit: 'ms',
        note: 'load and validate a 10,025-message transcript; median of 3',
      },
    ];
  });
}

async function journalRows(): Promise<BenchRow[]> {
  const rate = (wal: boolean) =>
    withStore(async (store) => {
      const count = 500;
      const started = performance.now();
      for (let i = 0; i < count; i++) await store.appendMessage('journal', message(i));
      return count / ((performance.now() - started) / 1000);
    }, wal);
  const fsyncEach = await rate(false);
  const wal = await rate(true);
  return [
    {
      key: 'store.sqlite_default_appends_per_s',
      value: fsyncEach,
      unit: '/s',
      note: 'SQLite default journal (an fsync per write), 500 appends',
    },
    {
      key: 'store.sqlite_wal_appends_per_s',
      value: wal,
      unit: '/s',
      note: 'WAL + synchronous=NORMAL (what the bot uses), 500 appends',
    },
  ];
}

interface Concurrent {
  sessions: number;
  totalMs: number;
  baselineMb: number;
  peakMb: number;
  idleKbPerSession: number;
  live: number;
}

/** The child's side: 1,000 threads each start a turn at once on a fresh store; the figures. */
export async function measureConcurrentTurns(): Promise<Concurrent> {
  return withStore(async (store) => {
    const sessions = 1_000;
    const tool = defineTool({
      name: 'noop',
      description: 'noop',
      schema: z.object({}),
      metadata: { risk: 'low' },
      execute: async () => 'ok',
    });
    // One tool round then an answer: a short but complete turn.
    const manager = benchSessionManager(store, () => new ZeroLatencyProvider(1, 'noop'), tool);
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: sessions }, (_, i) =>
        manager.deliver(
          { platform: 'bench', workspace: 'W', channel: 'C', thread: `T${i}` },
          { text: 'go', userId: 'U1', eventId: `e${i}` },
        ),
      ),
    );
    await manager.idle();
    const totalMs = performance.now() - started;
    global.gc?.();
    const idleHeap = process.memoryUsage().heapUsed;
    const live = manager.liveCount;
    await manager.shutdown(0);
    global.gc?.();
    const emptyHeap = process.memoryUsage().heapUsed;
    return {
      sessions,
      totalMs,
      baselineMb: baseline / 1024 / 1024,
      // maxRSS: the process's peak resident set (kilobytes), so no peak between samples is missed.
      peakMb: process.resourceUsage().maxRSS / 1024,
      idleKbPerSession: (idleHeap - emptyHeap) / 1024 / Math.max(1, live),
      live,
    };
  });
}

function inFreshProcess(): Promise<Concurrent> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', ...V8_FLAGS, '--import', 'tsx', CHILD], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`the concurrent-turns process exited with ${code}: ${out}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Concurrent);
    });
  });
}

async function concurrentRows(): Promise<BenchRow[]> {
  const run = await inFreshProcess();
  return [
    {
      key: 'sessions.concurrent_1000_total_ms',
      value: run.totalMs,
      unit: 'ms',
      note: `${run.sessions} threads each start a turn (one tool round + answer) at once, SQLite WAL`,
    },
    {
      key: 'sessions.concurrent_1000_peak_rss_mb',
      value: run.peakMb,
      unit: 'MB',
      note: `peak resident memory of a fresh process running them (the session layer, under tsx; ${run.baselineMb.toFixed(0)} MB before the turns began)`,
    },
    {
      key: 'sessions.idle_kb_per_session',
      value: run.idleKbPerSession,
      unit: 'KB',
      note: `heap held per idle in-memory session (${run.live} cached engines)`,
    },
  ];
}

export const storeSuite: BenchSuite = {
  name: 'store',
  async run() {
    return [...(await appendRows()), ...(await journalRows()), ...(await concurrentRows())];
  },
};
