// Traces' public surface for the core: the settings (no OpenTelemetry in them) and a start
// that loads OpenTelemetry only when an endpoint is set, so a bot without traces pays nothing.
import type { EngineLogger } from '../../engine/index.js';
import type { OpsSink } from '../ops-events.js';
import type { KnownTools } from '../tool-names.js';
import { traceSettingsFrom, type TraceConfig } from './trace-settings.js';

export { type TraceConfig } from './trace-settings.js';

/** The trace sink when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set, else undefined (and nothing loaded). */
export async function tracingFrom(
  config: TraceConfig,
  options: { mask: (text: string) => string; logger: EngineLogger; knownTools: KnownTools },
): Promise<OpsSink | undefined> {
  const settings = traceSettingsFrom(config);
  if (!settings) return undefined;
  const { startTracing } = await import('./trace-pipeline.js');
  const sink = await startTracing(settings, options);
  // The URL, never the headers (they hold the backend's key).
  options.logger.info(
    { url: settings.url, encoding: settings.encoding, content: settings.captureContent },
    'traces are exported over OTLP',
  );
  return sink;
}
