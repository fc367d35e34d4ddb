// FakeCollector: an OTLP/HTTP trace receiver on 127.0.0.1, as a collector's port 4318 answers
// `POST /v1/traces`. It decodes both encodings for real: `application/json` as JSON, and
// `application/x-protobuf` with protobufjs over the OTLP .proto files vendored beside it
// (otlp-proto/, from open-telemetry/opentelemetry-proto, Apache-2.0), and flattens the spans
// into one shape so a test asserts the same way on either.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client. */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, unknown>;
}

export interface ReceivedExport {
  path: string;
  contentType: string;
  headers: IncomingHttpHeaders;
  spans: ReceivedSpan[];
}

const PROTO_ROOT = fileURLToPath(new URL('./otlp-proto/', import.meta.url));

let requestType: Promise<protobuf.Type> | undefined;

/** ExportTraceServiceRequest, loaded once from the vendored .proto files. */
function exportRequestType(): Promise<protobuf.Type> {
  requestType ??= (async () => {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => PROTO_ROOT + target;
    await root.load('opentelemetry/proto/collector/trace/v1/trace_service.proto');
    return root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  })();
  return requestType;
}

export class FakeCollector {
  readonly exports: ReceivedExport[] = [];
  private server: Server | undefined;

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        const contentType = String(request.headers['content-type'] ?? '');
        this.decode(contentType, body)
          .then((spans) => {
            this.exports.push({ path: request.url ?? '', contentType, headers: request.headers, spans });
            const json = contentType.includes('json');
            response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
            response.end(json ? '{}' : undefined);
          })
          .catch((error: unknown) => {
            response.writeHead(400, { 'content-type': 'text/plain' });
            response.end(String(error));
          });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** The base a bot is given as OTEL_EXPORTER_OTLP_ENDPOINT (it appends /v1/traces). */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  get spans(): ReceivedSpan[] {
    return this.exports.flatMap((received) => received.spans);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async decode(contentType: string, body: Buffer): Promise<ReceivedSpan[]> {
    if (contentType.startsWith('application/json'))
      return flatten(JSON.parse(body.toString('utf8')) as OtlpRequest, hexOfJson);
    if (contentType.startsWith('application/x-protobuf')) {
      const type = await exportRequestType();
      const decoded = type.toObject(type.decode(body), {
        longs: Number,
        enums: Number,
        bytes: Array,
        defaults: false,
        arrays: true,
      }) as OtlpRequest;
      return flatten(decoded, hexOfBytes);
    }
    throw new Error(`unexpected content-type ${contentType}`);
  }
}

// The request as both decoders give it (protobufjs' toObject and the JSON mapping share field names).
interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value?: OtlpValue;
}
interface OtlpSpan {
  name: string;
  traceId: unknown;
  spanId: unknown;
  parentSpanId?: unknown;
  kind?: number;
  startTimeUnixNano: number | string;
  endTimeUnixNano: number | string;
  attributes?: OtlpAttribute[];
  events?: { name: string; attributes?: OtlpAttribute[] }[];
  status?: { code?: number };
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function flatten(request: OtlpRequest, hex: (id: unknown) => string): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        name: span.name,
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        kind: span.kind ?? 0,
        startMs: Number(span.startTimeUnixNano) / 1e6,
        endMs: Number(span.endTimeUnixNano) / 1e6,
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        statusCode: span.status?.code ?? 0,
        resource,
      })),
    );
  });
}

function attributesOf(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

function valueOf(value: OtlpValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

/** OTLP/JSON carries ids as hex strings. */
function hexOfJson(id: unknown): string {
  return typeof id === 'string' ? id.toLowerCase() : '';
}

/** protobuf carries them as bytes. */
function hexOfBytes(id: unknown): string {
  return Array.isArray(id) || id instanceof Uint8Array ? Buffer.from(id as number[]).toString('hex') : '';
}
