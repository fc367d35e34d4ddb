// The standard OpenTelemetry exporter settings as the bot reads them: off without an endpoint,
// the generic endpoint a base and the traces one a whole URL, the traces protocol first,
// grpc and malformed headers refused at start with a reason (that never repeats a header's
// value), and the headers' values known to the secret masker.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { traceSettingsFrom } from '../../../src/ops/traces/trace-settings.js';
import { configSecretValues } from '../../../src/secrets/index.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('trace settings', () => {
  it('are off with no endpoint set, whatever else is', () => {
    expect(
      traceSettingsFrom(
        loadConfig({
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: 'x',
          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        }),
      ),
    ).toBeUndefined();
  });

  it('the generic endpoint gets /v1/traces after its own path; the defaults: protobuf, chat-agent, no content', () => {
    expect(traceSettingsFrom(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/otlp/' }))).toEqual({
      url: 'https://otel.example.com/otlp/v1/traces',
      encoding: 'http/protobuf',
      headers: {},
      serviceName: 'chat-agent',
      captureContent: false,
    });
  });

  it('the traces endpoint is used as given and wins; the traces protocol wins too', () => {
    const settings = traceSettingsFrom(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/custom',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'team-bot',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      }),
    );
    expect(settings).toMatchObject({
      url: 'http://tempo:4318/custom',
      encoding: 'http/json',
      serviceName: 'team-bot',
      captureContent: true,
    });
  });

  it('grpc stops the start with the reason and what to use instead', () => {
    for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
      expect(problemsOf({ [name]: 'grpc' })).toEqual([
        `${name}: grpc is not supported: use http/protobuf (the default) or http/json, on the collector's OTLP/HTTP port (4318)`,
      ]);
    }
    expect(problemsOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'protobuf' })).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL: must be http/protobuf or http/json',
    ]);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' })[0]).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: must be a URL starting with http:\/\/ or https:\/\//,
    );
  });

  it('headers: name=value pairs, values percent-decoded; a malformed list is refused without repeating it', () => {
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D123, Authorization=Bearer%20tok-987654' })
        .OTEL_EXPORTER_OTLP_HEADERS,
    ).toEqual({ 'x-api-key': 'abc=123', Authorization: 'Bearer tok-987654' });
    for (const bad of ['just-a-key-9f8e7d', 'x-api-key=', 'bad name=v9f8e7d', 'x=%E0%A4%A-9f8e7d']) {
      const problems = problemsOf({ OTEL_EXPORTER_OTLP_HEADERS: bad });
      expect(problems, bad).toEqual([
        'OTEL_EXPORTER_OTLP_HEADERS: must be header=value pairs separated by commas, e.g. api-key=abc123,x-team=ops',
      ]);
      expect(problems.join(' ')).not.toContain('9f8e7d');
    }
  });

  it("the headers' values are secrets, whatever their names (and the token after a scheme)", () => {
    const values = configSecretValues(
      loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=hc-team-key-123,Authorization=Bearer tok-987654' }),
    );
    expect(values).toEqual(expect.arrayContaining(['hc-team-key-123', 'Bearer tok-987654', 'tok-987654']));
  });
});
