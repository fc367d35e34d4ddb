// GET /healthz on HEALTH_PORT, for a process manager or a container's HEALTHCHECK when the bot
// has no HTTP server of its own (Slack Socket Mode, Discord). HTTP mode also answers /healthz
// on PORT. 200 while the bot runs; 503 once it is stopping, so a load balancer or an
// orchestrator stops sending it work before it is gone. GET /metrics too, when it is given the
// endpoint: run-bot.ts does only behind METRICS_TOKEN (src/ops/metrics/metrics-placement.ts).
// Anything else is 404.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMetricsRequest, type MetricsEndpoint } from '../ops/metrics/metrics-endpoint.js';

export interface HealthServer {
  readonly port: number;
  /** From now on, answer 503 (the bot is stopping). */
  stopping(): void;
  close(): Promise<void>;
}

export async function startHealthServer(
  port: number,
  options: { metrics?: MetricsEndpoint } = {},
): Promise<HealthServer> {
  let stopping = false;
  const server: Server = createServer((request, response) => {
    if (options.metrics && isMetricsRequest(request)) {
      void options.metrics.answer(request, response);
      return;
    }
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/healthz') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"ok":false,"error":"not found"}');
      return;
    }
    response.writeHead(stopping ? 503 : 200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(stopping ? '{"ok":false,"stopping":true}' : '{"ok":true}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    stopping: () => {
      stopping = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
