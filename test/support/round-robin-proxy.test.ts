// The cluster tests' load balancer: each request to the next instance in turn, byte for byte;
// a pin for "this one lands on a non-owner"; a 502 (and no retry elsewhere) for an instance
// that is down; a backend that moved to a new port can be followed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RoundRobinProxy } from './round-robin-proxy.js';

interface Seen {
  backend: number;
  method: string;
  path: string;
  signature: string | undefined;
  body: string;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A bot instance stand-in: answers with who it is and what it received. */
async function instance(backend: number, seen: Seen[]): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const header = request.headers['x-slack-signature'];
      seen.push({
        backend,
        method: request.method ?? '',
        path: request.url ?? '',
        signature: typeof header === 'string' ? header : undefined,
        body: Buffer.concat(chunks).toString('latin1'),
      });
      response.writeHead(201, { 'content-type': 'text/plain', 'x-instance': String(backend) });
      response.end(`instance ${backend}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closed = false;
  closers.push(async () => {
    if (!closed) await new Promise<void>((resolve) => server.close(() => resolve()));
    closed = true;
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function proxyFor(urls: string[]): Promise<RoundRobinProxy> {
  const proxy = await RoundRobinProxy.start(urls);
  closers.push(() => proxy.close());
  return proxy;
}

async function post(
  proxy: RoundRobinProxy,
  path: string,
  body: string | Buffer = 'payload',
): Promise<{ status: number; text: string; instance: string | null }> {
  const answer = await fetch(proxy.url + path, {
    method: 'POST',
    headers: { 'x-slack-signature': 'v0=abc', 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  return { status: answer.status, text: await answer.text(), instance: answer.headers.get('x-instance') };
}

describe('the round-robin proxy', () => {
  it('hands requests to each instance in turn, passing method, path, headers and the raw body, and returns the answer as is', async () => {
    const seen: Seen[] = [];
    const instances = await Promise.all([0, 1, 2].map((i) => instance(i, seen)));
    const proxy = await proxyFor(instances.map((each) => each.url));
    const raw = Buffer.from([0x70, 0x3d, 0xe9, 0x00, 0xff, 0x26, 0x71, 0x3d, 0x25, 0x32, 0x30]);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await post(proxy, `/slack/events?n=${i}`, raw));
    expect(answers.map((answer) => [answer.status, answer.text, answer.instance])).toEqual([
      [201, 'instance 0', '0'],
      [201, 'instance 1', '1'],
      [201, 'instance 2', '2'],
      [201, 'instance 0', '0'],
    ]);
    expect(seen.map((request) => request.backend)).toEqual([0, 1, 2, 0]);
    expect(seen[1]).toEqual({
      backend: 1,
      method: 'POST',
      path: '/slack/events?n=1',
      signature: 'v0=abc',
      body: raw.toString('latin1'),
    });
  });

  it('pinNext sends the next request to a chosen instance, then the rotation goes on', async () => {
    const seen: Seen[] = [];
    const instances = await Promise.all([0, 1, 2].map((i) => instance(i, seen)));
    const proxy = await proxyFor(instances.map((each) => each.url));
    await post(proxy, '/a');
    proxy.pinNext(2);
    await post(proxy, '/b');
    await post(proxy, '/c');
    expect(seen.map((request) => [request.path, request.backend])).toEqual([
      ['/a', 0],
      ['/b', 2],
      ['/c', 1],
    ]);
    expect(() => proxy.pinNext(3)).toThrow(/no backend 3/);
  });

  it('answers 502 for an instance that is down without trying another, and follows one that came back on a new port', async () => {
    const seen: Seen[] = [];
    const instances = await Promise.all([0, 1].map((i) => instance(i, seen)));
    const proxy = await proxyFor(instances.map((each) => each.url));
    await new Promise<void>((resolve) => instances[0]!.server.close(() => resolve()));
    const down = await post(proxy, '/x');
    expect(down.status).toBe(502);
    expect(down.text).toMatch(/backend 0 unreachable/);
    expect(seen).toEqual([]);
    expect((await post(proxy, '/y')).instance).toBe('1');

    const restarted = await instance(0, seen);
    proxy.setBackend(0, restarted.url);
    expect((await post(proxy, '/z')).instance).toBe('0');
    expect(proxy.forwarded.map((request) => [request.path, request.backend, request.status])).toEqual([
      ['/x', 0, 502],
      ['/y', 1, 201],
      ['/z', 0, 201],
    ]);
  });
});
