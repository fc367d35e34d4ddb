// Traces (src/ops/traces/), in the standard OpenTelemetry settings: exported over OTLP/HTTP
// when an endpoint is set, off otherwise. The generic endpoint gets `/v1/traces` appended; the
// traces one is used as is, and each traces-only setting wins over its generic one.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { httpUrl } from './setting-values.js';

/** OTLP encodings the bot exports in (both over HTTP); grpc is named apart, since it is a common setting to carry over. */
const otlpProtocol = z
  .string()
  .trim()
  .transform((value, context): 'http/protobuf' | 'http/json' => {
    if (value === 'http/protobuf' || value === 'http/json') return value;
    context.addIssue({
      code: 'custom',
      message:
        value === 'grpc'
          ? "grpc is not supported: use http/protobuf (the default) or http/json, on the collector's OTLP/HTTP port (4318)"
          : 'must be http/protobuf or http/json',
    });
    return z.NEVER;
  });

/** `key=value,key2=value2`, values percent-decoded (the OpenTelemetry format). The message never repeats a value: they are keys. */
const otlpHeaders = z.string().transform((text, context): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const entry of text.split(',')) {
    if (!entry.trim()) continue;
    const equals = entry.indexOf('=');
    const name = equals > 0 ? entry.slice(0, equals).trim() : '';
    let value: string | undefined;
    try {
      value = equals > 0 ? decodeURIComponent(entry.slice(equals + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || !value) {
      context.addIssue({
        code: 'custom',
        message: 'must be header=value pairs separated by commas, e.g. api-key=abc123,x-team=ops',
      });
      return z.NEVER;
    }
    headers[name] = value;
  }
  return headers;
});

export const traceSettings = {
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl('http://localhost:4318')
    .optional()
    .register(settingDocs, {
      section: 'Operations: health, metrics, traces, logs',
      description:
        'traces: the OTLP/HTTP collector to export to (`http://localhost:4318`; `/v1/traces` is appended). Unset ' +
        '(with the next one unset too), no traces and OpenTelemetry is not even loaded',
      unset: 'no traces',
    }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl('http://localhost:4318/v1/traces').optional().register(settingDocs, {
    section: 'Operations: health, metrics, traces, logs',
    description: 'traces: the whole URL spans are sent to, used as given (wins over the one above)',
    unset: 'none',
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional().register(settingDocs, {
    section: 'Operations: health, metrics, traces, logs',
    description:
      "traces' encoding: `http/protobuf` or `http/json` (`grpc` is not supported: the bot refuses to start with " +
      'it)',
    unset: '`http/protobuf`',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional().register(settingDocs, {
    section: 'Operations: health, metrics, traces, logs',
    description: 'the same, for traces only (wins over the one above)',
    unset: 'none',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders.optional().register(settingDocs, {
    section: 'Operations: health, metrics, traces, logs',
    description:
      'headers sent with every export, `name=value` pairs separated by commas, values percent-encoded ' +
      '(`x-api-key=abc123`); the values are treated as secrets: masked in logs, threads and traces',
    unset: 'none',
  }),
  OTEL_SERVICE_NAME: z.string().trim().min(1).optional().register(settingDocs, {
    section: 'Operations: health, metrics, traces, logs',
    description: "the service name traces carry, and the agent name of each turn's `invoke_agent` span",
    unset: '`chat-agent`',
  }),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .register(settingDocs, {
      section: 'Operations: health, metrics, traces, logs',
      description:
        '`true`: model-call spans carry the messages sent and the answer (`gen_ai.input.messages`, ' +
        '`gen_ai.output.messages`), with the configured secrets masked. They hold what people wrote: turn it on ' +
        'only where the trace store may keep that',
    }),
};
