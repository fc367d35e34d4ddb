// GET /healthz on HEALTH_PORT: 200 while the bot runs, 503 once it stops, 404 elsewhere; GET /metrics beside it when metrics are on.
import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from '../../src/app/health-server.js';
import { metricsEndpoint, MetricsSink } from '../../src/ops/metrics/index.js';
import { startMetricsServer, type MetricsServer } from '../../src/app/metrics-server.js';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the health endpoint', () => {
  it('answers 200 while running, 503 once stopping, and 404 for anything else', async () => {
    server = await startHealthServer(0);
    const url = `http://127.0.0.1:${server.port}`;
    const running = await fetch(`${url}/healthz`);
    expect(running.status).toBe(200);
    expect(await running.json()).toEqual({ ok: true });
    expect((await fetch(`${url}/`)).status).toBe(404);
    expect((await fetch(`${url}/healthz`, { method: 'POST' })).status).toBe(404);
    server.stopping();
    const stopping = await fetch(`${url}/healthz`);
    expect(stopping.status).toBe(503);
    expect(await stopping.json()).toEqual({ ok: false, stopping: true });
  });

  it('refuses a port that is taken with the error, not a crash later', async () => {
    server = await startHealthServer(0);
    await expect(startHealthServer(server.port)).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('/metrics on HEALTH_PORT', () => {
  it('answers the metrics page beside /healthz, 405 to anything but GET, and keeps /healthz as it was', async () => {
    const sink = new MetricsSink();
    sink.handle({
      type: 'steered',
      at: 1,
      place: { sessionId: 's', platform: 'discord', workspace: 'g', channel: 'c' },
    });
    server = await startHealthServer(0, { metrics: metricsEndpoint(sink) });
    const url = `http://127.0.0.1:${server.port}`;
    const page = await fetch(`${url}/metrics`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await page.text()).toContain('chat_agent_steering_inputs_total{platform="discord"} 1');
    expect((await fetch(`${url}/metrics`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    server.stopping();
    expect((await fetch(`${url}/healthz`)).status).toBe(503);
  });

  it('without metrics, /metrics is 404 like any other path', async () => {
    server = await startHealthServer(0);
    expect((await fetch(`http://127.0.0.1:${server.port}/metrics`)).status).toBe(404);
  });
});

describe("the metrics' own listener", () => {
  let metrics: MetricsServer | undefined;
  afterEach(async () => {
    await metrics?.close();
    metrics = undefined;
  });

  it('answers /metrics on 127.0.0.1 and nothing else; a port already taken is an error naming METRICS_PORT', async () => {
    const sink = new MetricsSink();
    sink.handle({ type: 'steered', at: 1, place: { sessionId: 's', platform: 'slack', workspace: 'T', channel: 'C' } });
    metrics = await startMetricsServer(metricsEndpoint(sink), { host: '127.0.0.1', port: 0 });
    expect(metrics.host).toBe('127.0.0.1');
    const url = `http://127.0.0.1:${metrics.port}`;
    expect(await (await fetch(`${url}/metrics`)).text()).toContain(
      'chat_agent_steering_inputs_total{platform="slack"} 1',
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(404);
    await expect(startMetricsServer(metricsEndpoint(sink), { host: '127.0.0.1', port: metrics.port })).rejects.toThrow(
      `METRICS_PORT ${metrics.port} is taken`,
    );
  });
});
