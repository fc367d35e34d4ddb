// The test Redis does what the cluster tests lean on: it answers on its own loopback port,
// pause holds the connection and answers nothing, stop/kill end it, and restart brings it back
// on the same port (keeping the data when durable).
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisServer } from './redis-server.js';

const servers: RedisServer[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  for (const server of servers.splice(0)) await server.dispose();
});

async function started(options: { durable?: boolean } = {}): Promise<RedisServer> {
  const server = await RedisServer.start(options);
  servers.push(server);
  return server;
}

/** A client that fails fast, so a stopped server shows as an error, not a hang. */
function clientOf(server: RedisServer): Redis {
  const client = new Redis(server.url, {
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    commandTimeout: 300,
    lazyConnect: true,
  });
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

describe('the test Redis', () => {
  it('two servers run side by side on their own loopback ports, each with its own data', async () => {
    const [a, b] = await Promise.all([started(), started()]);
    expect(a.port).not.toBe(b.port);
    expect(a.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    const [clientA, clientB] = [clientOf(a), clientOf(b)];
    await Promise.all([clientA.connect(), clientB.connect()]);
    await clientA.set('k', 'a');
    expect(await clientB.get('k')).toBeNull();
  });

  it('a paused server answers nothing until resumed', async () => {
    const server = await started();
    const client = clientOf(server);
    await client.connect();
    server.pause();
    await expect(client.ping()).rejects.toThrow(/timed out/);
    server.resume();
    expect(await client.ping()).toBe('PONG');
  });

  it('restart brings it back on the same port, keeping the data when durable; stop and kill end it', async () => {
    const server = await started({ durable: true });
    const port = server.port;
    const client = clientOf(server);
    await client.connect();
    await client.set('kept', 'yes');
    await server.restart();
    expect(server.port).toBe(port);
    const again = clientOf(server);
    await again.connect();
    expect(await again.get('kept')).toBe('yes');
    await server.kill();
    expect(server.running).toBe(false);
    await expect(clientOf(server).connect()).rejects.toThrow();
  });
});
