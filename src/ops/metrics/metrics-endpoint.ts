// GET /metrics: the metrics sink's registry in Prometheus text format, answered by the metrics'
// own listener on 127.0.0.1 (src/app/metrics-server.ts) and, behind METRICS_TOKEN, by the bot's
// other HTTP servers (HEALTH_PORT's, and the Slack HTTP receiver's on PORT): where and why in
// metrics-placement.ts. The servers only route the path here.
//
// With METRICS_TOKEN set it answers only `Authorization: Bearer <token>` (compared in constant
// time), whichever port it is reached on. The labels are kinds and counts, never an id or
// anything a person or the model wrote.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The path scrapers ask for. */
export const METRICS_PATH = '/metrics';

export interface MetricsSource {
  render(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsEndpoint {
  /** Answer a request for METRICS_PATH (any method: a non-GET gets 405). */
  answer(request: IncomingMessage, response: ServerResponse): Promise<void>;
}

export function metricsEndpoint(source: MetricsSource, options: { token?: string } = {}): MetricsEndpoint {
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : undefined;
  const authorised = (header: string | undefined): boolean => {
    if (!expected) return true;
    const given = Buffer.from(header ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return {
    async answer(request, response) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response
          .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
          .end('method not allowed\n');
        return;
      }
      if (!authorised(request.headers.authorization)) {
        response
          .writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'content-type': 'text/plain; charset=utf-8' })
          .end('unauthorized\n');
        return;
      }
      try {
        const text = await source.render();
        response.writeHead(200, { 'content-type': source.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      } catch {
        // A collect callback that threw: the scrape fails visibly, the bot goes on.
        if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('could not collect the metrics\n');
      }
    },
  };
}

/** Whether a request is for /metrics (the query string aside). */
export function isMetricsRequest(request: IncomingMessage): boolean {
  return (request.url ?? '').split('?')[0] === METRICS_PATH;
}
