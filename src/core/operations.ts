// The operations side (src/ops/): the event bus every turn, model call, tool call and platform
// call reports to, and its sinks: traces (over OTLP, when an endpoint is set), the audit trail,
// spend (recorded per call; BUDGET_* and the profiles' budgets held before each) and metrics.
import type { Config } from '../config.js';
import type { EngineLogger } from '../engine/index.js';
import { AuditTrail } from '../ops/audit/audit-trail.js';
import { AUDIT_KEY_PREFIX, auditStore } from '../ops/audit/audit-store.js';
import type { LoadSources } from '../ops/metrics/index.js';
import type { MetricsEndpoint } from '../ops/metrics/metrics-endpoint.js';
import { OpsBus } from '../ops/ops-events.js';
import { OpsObserver } from '../ops/ops-observer.js';
import { ModelPrices } from '../ops/pricing.js';
import { spendFrom, type SpendSetup } from '../ops/spend/spend-setup.js';
import { tracingFrom } from '../ops/traces/index.js';
import type { Profiles } from '../profiles/profiles.js';
import type { ObserverHub } from '../sessions/observer-hub.js';
import type { CoreStorage } from './storage.js';

export interface CoreOperations {
  ops: OpsBus;
  /** Turns the sessions' observer calls into operations events (registered everywhere on the hub). */
  opsObserver: OpsObserver;
  /** Whether traces are exported (the engines then may capture message content for them). */
  traced: boolean;
  audit: AuditTrail;
  prices: ModelPrices;
  spend: SpendSetup;
}

export async function startOperations(
  config: Config,
  deps: {
    storage: CoreStorage;
    observers: ObserverHub;
    mask: (text: string) => string;
    /** Metrics and traces name a tool only if it is registered (the bot's own, an MCP server's): the model chooses the name. */
    knownTools: (name: string) => boolean;
    /** Read at each model call: a profile's budgets replace BUDGET_* in its place, and a reload holds at once. */
    profiles: () => Profiles;
    logger: EngineLogger;
    spendClock?: (() => number) | undefined;
  },
): Promise<CoreOperations> {
  const { storage, observers, mask, knownTools, logger } = deps;
  const { opened, shared, keys, store, fence } = storage;
  const ops = new OpsBus(logger);
  const opsObserver = new OpsObserver(ops, { mask });
  observers.addEverywhere(opsObserver);
  // OpenTelemetry is not even loaded without an endpoint.
  const traces = await tracingFrom(config, { mask, logger, knownTools });
  if (traces) ops.add(traces);
  // Written at shutdown too, past the write fence (what it records happened).
  const audit = new AuditTrail(auditStore(opened.keyv, shared ? { redis: shared, keys } : undefined), {
    retentionDays: config.AUDIT_RETENTION_DAYS,
    logger,
    mask,
  });
  ops.add(audit);
  fence.keep(AUDIT_KEY_PREFIX);
  const prices = new ModelPrices(config.MODEL_PRICES ?? {});
  const spend = spendFrom(config, {
    keyv: opened.keyv,
    ...(shared ? { redis: shared } : {}),
    prices,
    ops,
    logger,
    ...(deps.spendClock ? { now: deps.spendClock } : {}),
    budgetsAt: (place) => deps.profiles().settingsAt(place).budgets,
    notify: async (place, text) => {
      const record = await store.getSession(place.sessionId);
      if (record) await observers.onNotice(record, { kind: 'budget_warning', text });
    },
  });
  ops.add(spend.guard);
  return { ops, opsObserver, traced: traces !== undefined, audit, prices, spend };
}

/** GET /metrics: a sink on the operations bus, its gauges read from the sessions and the model-call gate; absent with METRICS=off. */
export async function metricsFor(
  config: Config,
  ops: OpsBus,
  sources: LoadSources,
  knownTools: (name: string) => boolean,
): Promise<MetricsEndpoint | undefined> {
  // With METRICS=off the metrics room (prom-client with it) is not even loaded.
  return config.METRICS
    ? (await import('../ops/metrics/index.js')).metricsOn(config, ops, sources, knownTools)
    : undefined;
}
