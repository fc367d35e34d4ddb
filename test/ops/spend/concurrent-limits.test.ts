// Many turns spending against one limit at once, through two instances (two BudgetGuards,
// each with its own connection) on one real Redis, and through one process on SQLite: the
// limit is never passed by more than one call's estimate (here, where no call uses more
// than its estimate, never passed at all), and it is really reached (calls were refused
// near it), so the test would see a check-then-reserve race if there were one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../support/seeded-random.js';
import { RedisServer } from '../../support/redis-server.js';
import { Backends, Clock, estimate, guardOn, place, tokens, type GuardKit } from './spend-kit.js';

let redis: RedisServer;
const backends = new Backends(() => redis.url);
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await backends.close();
  await redis?.dispose();
});

const SEED = 2323;
const WORKERS = 24;
const CALLS_PER_WORKER = 40;
const CAP_USD = 2;

interface Run {
  spentUsd: number;
  admitted: number;
  refused: number;
  largestEstimateUsd: number;
}

/** Workers spread over the guards, each a turn of up to CALLS_PER_WORKER calls. */
async function race(kits: GuardKit[]): Promise<Run> {
  const random = mulberry32(SEED);
  const pause = () => new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 3)));
  const run: Run = { spentUsd: 0, admitted: 0, refused: 0, largestEstimateUsd: 0 };
  const here = place('s-race', 'C-race', 'T-race');
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, worker) => {
      const kit = kits[worker % kits.length]!;
      for (let call = 0; call < CALLS_PER_WORKER; call++) {
        const input = 1_000 + Math.floor(random() * 40_000);
        const output = 500 + Math.floor(random() * 8_000);
        // gpt-4.1: $2 in, $8 out per million tokens.
        run.largestEstimateUsd = Math.max(run.largestEstimateUsd, (input * 2 + output * 8) / 1e6);
        const admission = await kit.guard.admit(
          estimate({ ...here, sessionId: `s-${worker}` }, `U${worker}`, input, output),
        );
        if (!admission.ok) {
          run.refused++;
          await pause();
          continue;
        }
        run.admitted++;
        await pause();
        // What the call really used: up to its estimate.
        await kit.guard.settle(
          admission.ticket,
          tokens(Math.floor(input * (0.5 + random() / 2)), Math.floor(output * random())),
        );
      }
    }),
  );
  const usage = await kits[0]!.ledger.usage({
    kind: 'workspace',
    platform: 'slack',
    workspace: 'T-race',
    id: 'T-race',
  });
  run.spentUsd = usage.today.usd;
  return run;
}

describe('concurrent calls against one limit', () => {
  it('two instances on one Redis never overspend it', async () => {
    const clock = new Clock(Date.UTC(2026, 11, 3, 12));
    const { counters: a, prefix } = await backends.counters('redis', clock);
    const { counters: b } = await backends.counters('redis', clock, prefix);
    const limits = { workspace_daily: { usd: CAP_USD } };
    const run = await race([guardOn(a, clock, limits), guardOn(b, clock, limits)]);
    expect(run.refused).toBeGreaterThan(0);
    expect(run.spentUsd).toBeLessThanOrEqual(CAP_USD + 1e-9);
    // Reached, not merely approached from afar: the last refusals were near the cap.
    expect(run.spentUsd).toBeGreaterThan(CAP_USD - 2 * run.largestEstimateUsd);
  });

  it('one process on SQLite never overspends it', async () => {
    const clock = new Clock(Date.UTC(2026, 11, 3, 12));
    const { counters } = await backends.counters('sqlite', clock);
    const limits = { workspace_daily: { usd: CAP_USD } };
    const run = await race([guardOn(counters, clock, limits), guardOn(counters, clock, limits)]);
    expect(run.refused).toBeGreaterThan(0);
    expect(run.spentUsd).toBeLessThanOrEqual(CAP_USD + 1e-9);
    expect(run.spentUsd).toBeGreaterThan(CAP_USD - 2 * run.largestEstimateUsd);
  });
});
