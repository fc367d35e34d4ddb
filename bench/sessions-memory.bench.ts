// How much memory the bot holds after answering many threads: 10,000 threads, each
// answered once and then idle, on SQLite. Goal: bounded by MAX_LIVE_SESSIONS (the cache of
// engines), not by the thread count: the heap after 10,000 threads should be about what it
// is after 1,000.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AccessPolicy, parseAccessConfig } from '../src/sessions/access-policy.js';
import { InProcessCoordinator } from '../src/sessions/coordination.js';
import { SessionManager } from '../src/sessions/session-manager.js';
import { openKeyvStore } from '../src/store/keyv-factory.js';
import { PersistentInbox } from '../src/store/persistent-inbox.js';
import { SessionStore } from '../src/store/session-store.js';
import { noopTool, ZeroLatencyProvider } from './fixtures.js';
import type { BenchRow, BenchSuite } from './suite.js';

const THREADS = 10_000;
const CHECKPOINT = 1_000;
const MAX_LIVE = 500;

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

export const sessionsMemorySuite: BenchSuite = {
  name: 'sessions-memory',
  async run(): Promise<BenchRow[]> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-bench-memory-'));
    const opened = await openKeyvStore(`sqlite://${path.join(dir, 'bot.sqlite')}`);
    const store = new SessionStore(opened.keyv);
    const tool = noopTool('noop');
    const manager = new SessionManager({
      store,
      inbox: new PersistentInbox(store),
      coordinator: new InProcessCoordinator(store),
      access: new AccessPolicy(parseAccessConfig('*', '')),
      defaultModel: 'bench',
      engineSetup: () => ({ provider: new ZeroLatencyProvider(0, 'noop'), tools: [tool] }),
      maxLiveSessions: MAX_LIVE,
      fairUse: {
        maxQueuedInputs: 20,
        maxQueuedBytes: 1 << 20,
        turnsPerUserPerMinute: Number.MAX_SAFE_INTEGER,
        threadsPerUser: Number.MAX_SAFE_INTEGER,
      },
    });
    try {
      const baseline = heapMb();
      let atCheckpoint = 0;
      const started = performance.now();
      for (let i = 0; i < THREADS; i++) {
        const key = { platform: 'bench', workspace: 'W', channel: 'C', thread: `t${i}` };
        await manager.deliver(key, { text: `question ${i}`, userId: `U${i % 50}`, eventId: `e${i}` });
        await manager.idle();
        if (i + 1 === CHECKPOINT) atCheckpoint = heapMb() - baseline;
      }
      const seconds = (performance.now() - started) / 1000;
      const after = heapMb() - baseline;
      const note = `${THREADS.toLocaleString('en-US')} threads answered once, idle; MAX_LIVE_SESSIONS=${MAX_LIVE}; heap above baseline after GC`;
      return [
        { key: 'sessions.memory_mb_after_1000_threads', value: atCheckpoint, unit: 'MB', note },
        {
          key: 'sessions.memory_mb_after_10000_threads',
          value: after,
          unit: 'MB',
          note: 'goal: bounded by the cache, about the 1,000-thread figure',
        },
        {
          key: 'sessions.live_after_10000_threads',
          value: manager.liveCount,
          unit: 'sessions',
          note: `at most ${MAX_LIVE} kept`,
        },
        {
          key: 'sessions.turns_per_s_sequential',
          value: THREADS / seconds,
          unit: 'turns/s',
          note: 'one thread after another, SQLite',
        },
      ];
    } finally {
      await manager.shutdown(0);
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
