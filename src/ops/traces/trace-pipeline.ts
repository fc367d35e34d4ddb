// The OpenTelemetry side of traces: a tracer provider of the bot's own (never registered as
// the global one), a batch processor and the OTLP/HTTP exporter in the encoding asked for,
// with the trace sink on top. Imported only when an endpoint is set (index.ts): a bot without
// traces loads none of this.
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { EngineLogger } from '../../engine/index.js';
import type { OpsSink, OpsEvent } from '../ops-events.js';
import type { KnownTools } from '../tool-names.js';
import { TraceSink } from './trace-sink.js';
import type { TraceSettings } from './trace-settings.js';

export interface TracingOptions {
  mask: (text: string) => string;
  /** The tools the bot registered: spans name only these (tool-names.ts). */
  knownTools: KnownTools;
  /** Where the SDK's own warnings go (an export the collector refused, a collector down). */
  logger?: EngineLogger;
}

/** The sink the core adds to its operations bus: spans out, flushed and shut down with the bus. */
export async function startTracing(settings: TraceSettings, options: TracingOptions): Promise<OpsSink> {
  const { logger } = options;
  // OpenTelemetry reports a failed export on its diagnostics channel, silent by default: warnings and errors go to the log.
  if (logger)
    diag.setLogger(
      {
        error: (message) => logger.warn({ detail: message }, 'traces: an export failed'),
        warn: (message) => logger.warn({ detail: message }, 'traces: OpenTelemetry warns'),
        info: () => undefined,
        debug: () => undefined,
        verbose: () => undefined,
      },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  const exporter = await otlpExporter(settings);
  const processor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [processor],
  });
  const sink = new TraceSink(provider.getTracer('chat-agent'), {
    agentName: settings.serviceName,
    captureContent: settings.captureContent,
    mask: options.mask,
    knownTools: options.knownTools,
  });
  // A collector that is down must not stop the bot's shutdown, nor leave it without a word:
  // the failure is logged here (the exporter has retried for its timeout by then).
  const settle = async (work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (error) {
      logger?.warn({ err: error, url: settings.url }, 'traces: the last spans could not be exported');
    }
  };
  return {
    handle: (event: OpsEvent) => sink.handle(event),
    flush: () => settle(() => provider.forceFlush()),
    close: async () => {
      sink.endOpen();
      await settle(() => provider.shutdown());
    },
  };
}

/** Both exporters take the whole URL and the headers; each reads the OTEL_* variables too, under what is given here. */
async function otlpExporter(settings: TraceSettings): Promise<SpanExporter> {
  const config = { url: settings.url, headers: settings.headers };
  if (settings.encoding === 'http/json')
    return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(config);
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(config);
}
