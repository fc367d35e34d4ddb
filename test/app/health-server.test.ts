// GET /healthz on HEALTH_PORT: 200 while the bot runs, 503 once it stops, 404 elsewhere.
import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from '../../src/app/health-server.js';

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
