// The metrics room's one entry for the core: with METRICS on, a MetricsSink on the operations
// bus and the /metrics endpoint the HTTP servers answer with; with METRICS=off, nothing (no
// sink: the bus does not even build the events nobody reads).
import type { OpsBus } from '../ops-events.js';
import type { KnownTools } from '../tool-names.js';
import { metricsEndpoint, type MetricsEndpoint } from './metrics-endpoint.js';
import { MetricsSink } from './metrics-sink.js';

export { MetricsSink, LABEL_CAPS } from './metrics-sink.js';
export { metricsEndpoint, isMetricsRequest, METRICS_PATH, type MetricsEndpoint } from './metrics-endpoint.js';
export type { LoadReading } from './metric-families.js';

/** The cheap readings the gauges take at each scrape. */
export interface LoadSources {
  sessions(): { live: number; working: number; queuedSteering: number };
  modelCalls(): { running: number; waiting: number };
}

export function metricsOn(
  settings: { METRICS: boolean; METRICS_TOKEN?: string | undefined },
  ops: OpsBus,
  sources: LoadSources,
  knownTools: KnownTools,
): MetricsEndpoint | undefined {
  if (!settings.METRICS) return undefined;
  const sink = new MetricsSink({
    knownTools,
    load: () => {
      const sessions = sources.sessions();
      const calls = sources.modelCalls();
      return {
        liveSessions: sessions.live,
        workingSessions: sessions.working,
        queuedSteering: sessions.queuedSteering,
        modelCallsRunning: calls.running,
        modelCallsWaiting: calls.waiting,
      };
    },
  });
  ops.add(sink);
  return metricsEndpoint(sink, settings.METRICS_TOKEN ? { token: settings.METRICS_TOKEN } : {});
}
