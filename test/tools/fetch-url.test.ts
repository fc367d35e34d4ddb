import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRecord, createSandbox, type Sandbox } from './tool-kit.js';

type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void;

let server: http.Server;
let base: string;
let sandbox: Sandbox;
const routes = new Map<string, Route>();
const seen: http.IncomingHttpHeaders[] = [];

beforeEach(async () => {
  routes.clear();
  seen.length = 0;
  server = http.createServer((request, response) => {
    seen.push(request.headers);
    const route = routes.get(request.url ?? '');
    if (route) route(request, response);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The local test server is a private address: allowed here, refused by default (tested below).
  sandbox = await createSandbox({ fetchTimeoutMs: 500, fetchMaxBytes: 64 * 1024, maxOutputChars: 5_000, fetchAllowPrivate: true });
});

afterEach(async () => {
  await sandbox.cleanup();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const fetchUrl = async (url: string) => asRecord(await sandbox.run('fetch_url', { url }));

describe('fetch_url', () => {
  it('returns the status, content type and text of a plain-text page', async () => {
    routes.set('/hello.txt', (_request, response) => response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('héllo\nworld\n'));
    expect(await fetchUrl(`${base}/hello.txt`)).toEqual({
      url: `${base}/hello.txt`,
      status: 200,
      statusText: 'OK',
      contentType: 'text/plain; charset=utf-8',
      text: 'héllo\nworld\n',
    });
    expect(seen[0]?.['user-agent']).toBe('chat-agent fetch_url');
  });

  it('reduces HTML to readable text: no tags, scripts or styles', async () => {
    routes.set('/page', (_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html>
        <html><head><title>The &amp; Title</title><style>body { color: red }</style>
        <script>var secret = "do not show";</script></head>
        <body><!-- a comment --><h1>Heading</h1><p>First <b>bold</b> paragraph &mdash; with&nbsp;entities &#169; &#x263A;.</p>
        <ul><li>one</li><li>two</li></ul><script type="module">alert(1)</script><noscript>enable js</noscript>
        <p>Last<br>line</p></body></html>`),
    );
    const result = await fetchUrl(`${base}/page`);
    expect(result).toMatchObject({ status: 200, title: 'The & Title', contentType: 'text/html' });
    expect(result.text).toBe('Heading\n\nFirst bold paragraph — with entities © ☺.\n\n- one\n- two\n\nLast\nline');
  });

  it('reports error statuses as they are', async () => {
    expect(await fetchUrl(`${base}/missing`)).toMatchObject({ status: 404, text: 'not here' });
  });

  it('follows redirects and reports where it ended', async () => {
    routes.set('/old', (_request, response) => response.writeHead(302, { location: '/new' }).end());
    routes.set('/new', (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('moved'));
    expect(await fetchUrl(`${base}/old`)).toMatchObject({ url: `${base}/new`, status: 200, text: 'moved' });
  });

  it('reads at most the size cap of a large body, and says so', async () => {
    routes.set('/huge', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      // Far past the cap: the tool must stop reading, not download it all.
      const chunk = 'x'.repeat(16 * 1024);
      let sent = 0;
      const pump = (): void => {
        while (sent < 512 && response.write(chunk)) sent++;
        if (sent < 512) response.once('drain', pump);
        else response.end();
      };
      pump();
    });
    const result = await fetchUrl(`${base}/huge`);
    expect(result.note).toBe('the body is larger than 65,536 bytes; only the start was read');
    const text = String(result.text);
    expect(text.length).toBeLessThanOrEqual(5_000);
    expect(text.startsWith('xxxx')).toBe(true);
    // 65,536 read, 4,420 kept (the 5,000 budget less room for the notes).
    expect(text.slice(-40)).toMatch(/\n\[… 61,116 more characters cut\]$/);
  });

  it('does not show binary content', async () => {
    routes.set('/logo.png', (_request, response) => response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0, 1, 2])));
    expect(await fetchUrl(`${base}/logo.png`)).toMatchObject({ text: '', note: 'binary content (5 bytes read) is not shown' });
  });

  it.each(['file:///etc/passwd', 'ftp://example.com/x', 'javascript:alert(1)', 'data:text/plain,hi'])('refuses %s: only http and https', async (url) => {
    await expect(fetchUrl(url)).rejects.toThrow(/only http and https URLs can be fetched/);
  });

  it('refuses text that is not a URL', async () => {
    await expect(fetchUrl('not a url')).rejects.toThrow('not a valid URL: "not a url"');
  });

  it('gives up after the timeout on a server that never answers', async () => {
    routes.set('/stall', () => undefined);
    await expect(fetchUrl(`${base}/stall`)).rejects.toThrow(`timed out after 0.5 s: ${base}/stall`);
  });

  it('gives up after the timeout on a body that never ends', async () => {
    routes.set('/drip', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('first bytes');
    });
    await expect(fetchUrl(`${base}/drip`)).rejects.toThrow(/timed out after 0.5 s/);
  });

  it('says why a connection failed', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(fetchUrl(`http://127.0.0.1:${port}/`)).rejects.toThrow(/could not fetch .*ECONNREFUSED/);
  });

  it('stops when the turn is stopped', async () => {
    routes.set('/stall', () => undefined);
    const controller = new AbortController();
    const pending = sandbox.run('fetch_url', { url: `${base}/stall` }, controller.signal);
    setTimeout(() => controller.abort(new Error('interrupted by user')), 20);
    await expect(pending).rejects.toThrow();
  });
});

describe('fetch_url stays on the public internet by default', () => {
  it('refuses loopback, private, link-local and metadata addresses, also behind a redirect', async () => {
    const guarded = await createSandbox({ fetchTimeoutMs: 500 });
    try {
      for (const url of ['http://127.0.0.1:9/', 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/', 'http://[::1]/', 'http://localhost/']) {
        await expect(guarded.run('fetch_url', { url })).rejects.toThrow(/private or local address/);
      }
    } finally {
      await guarded.cleanup();
    }
    // A public-looking host that resolves to a private address is refused too.
    const { assertPublicUrl, isPrivateAddress } = await import('../../src/tools/network-guard.js');
    await expect(assertPublicUrl(new URL('http://internal.example/'), async () => ['192.168.1.5'])).rejects.toThrow(/192\.168\.1\.5/);
    await expect(assertPublicUrl(new URL('http://example.com/'), async () => ['93.184.215.14'])).resolves.toBeUndefined();
    expect(['::ffff:127.0.0.1', 'fd00::1', 'fe80::1', '100.64.0.1', '0.0.0.0'].every(isPrivateAddress)).toBe(true);
    expect(['8.8.8.8', '2606:4700::1111', '172.32.0.1'].some(isPrivateAddress)).toBe(false);
  });

  it('checks every redirect hop', async () => {
    const { fetchUrlTool } = await import('../../src/tools/fetch-url.js');
    const hops: string[] = [];
    const fakeFetch = (async (input: string | URL) => {
      const url = input.toString();
      hops.push(url);
      return new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } });
    }) as typeof fetch;
    const tool = fetchUrlTool({ fetchImpl: fakeFetch, timeoutMs: 500, maxBytes: 1024, maxOutputChars: 5_000, resolveHost: async () => ['93.184.215.14'] });
    await expect(tool.execute({ url: 'http://example.com/start' }, { signal: new AbortController().signal, toolCallId: 'c', sessionId: 's' })).rejects.toThrow(/169\.254\.169\.254/);
    expect(hops).toEqual(['http://example.com/start']);
  });
});
