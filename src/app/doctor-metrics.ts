// `npm run doctor`'s metrics line: where GET /metrics would be answered and who may read it
// (src/ops/metrics/metrics-placement.ts decides, for the start too), and whether its own port
// on 127.0.0.1 is free now. A METRICS_PORT that was set and is taken stops a start (✗); the
// default one taken only costs the metrics (!), as at start.
import { createServer } from 'node:net';
import type { Config } from '../config.js';
import { metricsPlacement, placementWords } from '../ops/metrics/metrics-placement.js';
import type { CheckResult } from './preflight.js';

export async function checkMetrics(config: Config): Promise<CheckResult> {
  const name = 'metrics';
  const words = placementWords(config);
  const placement = metricsPlacement(config);
  if (!placement || placement.port === 0) return { name, status: 'ok', detail: words };
  const taken = await portTaken(placement.host, placement.port);
  if (!taken) return { name, status: 'ok', detail: words };
  const problem = `${placement.host}:${placement.port} is taken now (another program, or another instance of the bot on this machine)`;
  return placement.portSet
    ? {
        name,
        status: 'fail',
        detail: `${words}; but ${problem}: a start would stop there. Set METRICS_PORT to a free port (0: any)`,
      }
    : {
        name,
        status: 'warn',
        detail: `${words}; but ${problem}: the bot would run without /metrics. Set METRICS_PORT to a free port (0: any)`,
      };
}

/** Whether something listens there already: try to take the port, and give it back at once. */
function portTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' || error.code === 'EACCES'),
    );
    probe.listen(port, host, () => probe.close(() => resolve(false)));
  });
}
