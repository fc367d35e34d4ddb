// Whether traces are on, and where they go: the standard OpenTelemetry exporter settings read
// as the specification reads them. Nothing here imports OpenTelemetry: with no endpoint set
// the bot never loads it (index.ts).
import type { Config } from '../../config.js';

type OtlpEncoding = 'http/protobuf' | 'http/json';

export interface TraceSettings {
  /** Where spans are POSTed, whole (`…/v1/traces`). */
  url: string;
  encoding: OtlpEncoding;
  headers: Record<string, string>;
  serviceName: string;
  /** Record the messages sent and the answer on model-call spans (masked). */
  captureContent: boolean;
}

export type TraceConfig = Pick<
  Config,
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_PROTOCOL'
  | 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
  | 'OTEL_EXPORTER_OTLP_HEADERS'
  | 'OTEL_SERVICE_NAME'
  | 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'
>;

const DEFAULT_SERVICE_NAME = 'chat-agent';

/** The settings when an endpoint is set; undefined (traces off) otherwise. */
export function traceSettingsFrom(config: TraceConfig): TraceSettings | undefined {
  const url =
    config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (config.OTEL_EXPORTER_OTLP_ENDPOINT ? signalUrl(config.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined);
  if (!url) return undefined;
  return {
    url,
    encoding: config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    headers: config.OTEL_EXPORTER_OTLP_HEADERS ?? {},
    serviceName: config.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAME,
    captureContent: config.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === true,
  };
}

/** The generic endpoint is a base: the traces path goes after whatever path it has (`/otlp` → `/otlp/v1/traces`). */
function signalUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}
