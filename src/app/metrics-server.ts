// GET /metrics on a listener of its own, bound to 127.0.0.1:METRICS_PORT (where and why:
// src/ops/metrics/metrics-placement.ts). It answers that one path (the endpoint asks for
// METRICS_TOKEN when one is set); anything else is 404. A port already taken is an error that
// says which setting to change.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMetricsRequest, type MetricsEndpoint } from '../ops/metrics/metrics-endpoint.js';
import type { MetricsPlacement } from '../ops/metrics/metrics-placement.js';

export interface MetricsServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(
  metrics: MetricsEndpoint,
  placement: Pick<MetricsPlacement, 'host' | 'port'>,
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (isMetricsRequest(request)) {
      void metrics.answer(request, response);
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${placement.host}:${placement.port}`;
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `METRICS_PORT ${placement.port} is taken (${where}): another program, or another instance of the bot on this machine, listens there; set METRICS_PORT to a free port (0: any)`,
            )
          : error,
      );
    });
    server.listen(placement.port, placement.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
