// Cluster mode, measured: two instances in this process, each with its own RedisCoordinator
// and Redis connections, on one real redis-server (Debian's, started on a random loopback
// port). The multi-process acceptance suite (test/cluster) checks the same paths through
// Bolt and SIGKILL; here they are timed.
//
// - route: a reply delivered to the instance that does not own the thread → queued on the
//   owner's running turn (its "queued" mark).
// - stop: 🛑 delivered to the other instance → the owner's turn reports it stopped.
// - failover: the owner stops renewing (a death, with CLUSTER_LEASE_MS 2,000 and
//   CLUSTER_SWEEP_MS 200 here) → the other instance's first action on the thread (its card
//   drawn again). With the defaults (15,000 / 2,000) add about 13 s.
// - Redis commands per turn, from INFO's command count.
// - A mixed run (messages to either instance, every fourth event delivered to both):
//   duplicate turns, duplicate tool runs and lost messages, which must all be 0.
import { Redis } from 'ioredis';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../src/engine/index.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../test/fakes/scripted-provider.js';
import { lowRisk, recordingTool, risky, waitFor } from '../test/support/engine-kit.js';
import { RedisServer } from '../test/support/redis-server.js';
import { tempDir, TestBot } from '../test/support/test-connector.js';
import { median, percentile } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const ROUNDS = 30;
const FAILOVERS = 5;
const MIXED_THREADS = 60;
const FAIR_USE = {
  maxQueuedInputs: 1_000,
  maxQueuedBytes: 1 << 24,
  turnsPerUserPerMinute: Number.MAX_SAFE_INTEGER,
  threadsPerUser: Number.MAX_SAFE_INTEGER,
};

interface Pair {
  a: TestBot;
  b: TestBot;
  stop(): Promise<void>;
}

async function pair(
  redisUrl: string,
  steps: () => Step[],
  tools: () => ToolDefinition[],
  timings = { leaseMs: 2_000, sweepMs: 200, pollMs: 1_000 },
): Promise<Pair> {
  const dir = await tempDir('bench-cluster-');
  const storeUrl = `sqlite://${dir.path}/shared.sqlite`;
  const start = () =>
    TestBot.start({
      provider: new ScriptedProvider(steps()),
      tools: tools(),
      storeUrl,
      cluster: { url: redisUrl, timings },
      manager: { fairUse: FAIR_USE },
    });
  const a = await start();
  const b = await start();
  return {
    a,
    b,
    stop: async () => {
      await b.stop();
      await a.stop();
      await dir.remove();
    },
  };
}

async function commandsProcessed(client: Redis): Promise<number> {
  const info = await client.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

export const clusterSuite: BenchSuite = {
  name: 'cluster',
  async run(): Promise<BenchRow[]> {
    const redis = await RedisServer.start();
    const admin = new Redis(redis.url);
    try {
      // ---- route and stop ----------------------------------------------------------------
      const route: number[] = [];
      const stop: number[] = [];
      // A tool that honours its stop signal: the stop's figure is the route, not a tool's grace period.
      const owned = await pair(
        redis.url,
        () => Array.from({ length: ROUNDS }, () => callTools(call('work'))),
        () => [recordingTool('work', lowRisk, { delayMs: 60_000 })],
      );
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const thread = `R${round}`;
          await owned.a.say(thread, 'U1', 'work on it');
          await owned.a.waitForEvent(thread, 'tool_started');
          const before = owned.a.inputs.filter((input) => input.disposition === 'queued').length;
          const sent = performance.now();
          await owned.b.say(thread, 'U1', 'also this');
          await waitFor(() => owned.a.inputs.filter((input) => input.disposition === 'queued').length > before, 10_000);
          route.push(performance.now() - sent);
          const stopped = performance.now();
          await owned.b.manager.interrupt(owned.a.sessionId(thread), 'U1');
          await owned.a.waitForEvent(thread, 'interrupted');
          stop.push(performance.now() - stopped);
        }
      } finally {
        await owned.stop();
      }

      // ---- Redis commands per turn ------------------------------------------------------
      const quiet = await pair(
        redis.url,
        () => Array.from({ length: ROUNDS }, () => say('done')),
        () => [],
      );
      let opsPerTurn = Number.NaN;
      try {
        const before = await commandsProcessed(admin);
        for (let round = 0; round < ROUNDS; round++) {
          await quiet.a.say(`Q${round}`, 'U1', 'hello');
          await quiet.a.manager.idle();
          await waitFor(() => !quiet.a.coordinator!.owns(quiet.a.sessionId(`Q${round}`)), 5_000);
        }
        // INFO itself counts once per call.
        opsPerTurn = ((await commandsProcessed(admin)) - before - 1) / ROUNDS;
      } finally {
        await quiet.stop();
      }

      // ---- failover ---------------------------------------------------------------------
      const failover: number[] = [];
      for (let round = 0; round < FAILOVERS; round++) {
        const dying = await pair(
          redis.url,
          () => [callTools(call('write'))],
          () => [
            defineTool({
              name: 'write',
              description: 'write',
              schema: z.record(z.string(), z.unknown()),
              metadata: risky,
              execute: async () => ({ ok: true }),
            }),
          ],
        );
        try {
          await dying.a.say('F', 'U1', 'write it');
          await dying.a.waitForPrompt('F');
          // A death: no more renewals; the lease runs out on its own.
          const died = performance.now();
          dying.a.coordinator!.halt();
          await waitFor(() => dying.b.shown.some((shown) => shown.event.type === 'permission_required'), 20_000);
          failover.push(performance.now() - died);
        } finally {
          await dying.stop();
        }
      }

      // ---- a mixed run: nothing duplicated, nothing lost --------------------------------
      const toolRuns = new Map<string, number>();
      const countingTool = (): ToolDefinition =>
        defineTool({
          name: 'note',
          description: 'note',
          schema: z.object({ thread: z.string() }),
          metadata: lowRisk,
          execute: async ({ thread }) => {
            toolRuns.set(thread, (toolRuns.get(thread) ?? 0) + 1);
            return { ok: true };
          },
        });
      const mixedSteps = (): Step[] =>
        Array.from({ length: MIXED_THREADS * 2 }, () => (request) => {
          const last = request.messages.at(-1);
          if (last?.role === 'tool') return { text: 'noted' };
          const thread = typeof last?.content === 'string' ? (/thread (\S+)/.exec(last.content)?.[1] ?? '?') : '?';
          return { toolCalls: [{ name: 'note', arguments: { thread } }] };
        });
      const mixed = await pair(redis.url, mixedSteps, () => [countingTool()]);
      let duplicateTurns = 0;
      let duplicateToolRuns = 0;
      let lost = 0;
      try {
        await Promise.all(
          Array.from({ length: MIXED_THREADS }, async (_, i) => {
            const thread = `M${i}`;
            const eventId = `mixed-${i}`;
            const text = `thread ${thread}`;
            if (i % 4 === 0)
              await Promise.all([mixed.a.say(thread, 'U1', text, eventId), mixed.b.say(thread, 'U1', text, eventId)]);
            else await (i % 2 === 0 ? mixed.a : mixed.b).say(thread, 'U1', text, eventId);
          }),
        );
        await waitFor(() => toolRuns.size === MIXED_THREADS || Date.now() < 0, 30_000).catch(() => undefined);
        await mixed.a.manager.idle();
        await mixed.b.manager.idle();
        for (let i = 0; i < MIXED_THREADS; i++) {
          const thread = `M${i}`;
          const turns = [mixed.a, mixed.b].reduce(
            (sum, bot) => sum + bot.events(thread).filter((event) => event.type === 'turn_start').length,
            0,
          );
          if (turns === 0) lost++;
          if (turns > 1) duplicateTurns += turns - 1;
          const ran = toolRuns.get(thread) ?? 0;
          if (ran > 1) duplicateToolRuns += ran - 1;
        }
      } finally {
        await mixed.stop();
      }

      const note = `two instances in one process, one redis-server on loopback; ${ROUNDS} rounds`;
      return [
        {
          key: 'cluster.route_ms_p50',
          value: median(route),
          unit: 'ms',
          note: `reply on the non-owner → queued on the owner; ${note}`,
        },
        { key: 'cluster.route_ms_p99', value: percentile(route, 99), unit: 'ms', note: 'same' },
        {
          key: 'cluster.stop_cross_instance_ms_p50',
          value: median(stop),
          unit: 'ms',
          note: "🛑 on the non-owner → the owner's turn reports it stopped",
        },
        { key: 'cluster.stop_cross_instance_ms_p99', value: percentile(stop, 99), unit: 'ms', note: 'same' },
        {
          key: 'cluster.failover_ms_p50',
          value: median(failover),
          unit: 'ms',
          note: `owner stops renewing → the other draws the card again; lease 2,000 ms, sweep 200 ms; ${FAILOVERS} deaths`,
        },
        {
          key: 'cluster.failover_ms_p99',
          value: percentile(failover, 99),
          unit: 'ms',
          note: 'same; with the defaults (15 s / 2 s) add about 13 s',
        },
        {
          key: 'cluster.redis_ops_per_turn',
          value: opsPerTurn,
          unit: 'commands',
          note: 'one message → one answered turn → lease released; INFO total_commands_processed',
        },
        {
          key: 'cluster.duplicate_turns',
          value: duplicateTurns,
          unit: 'turns',
          note: `${MIXED_THREADS} threads, every fourth event delivered to both instances; must be 0`,
        },
        { key: 'cluster.duplicate_tool_runs', value: duplicateToolRuns, unit: 'runs', note: 'must be 0' },
        {
          key: 'cluster.lost_messages',
          value: lost,
          unit: 'messages',
          note: 'a message that started no turn; must be 0',
        },
      ];
    } finally {
      admin.disconnect();
      await redis.dispose();
    }
  },
};
