import http from 'node:http';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { fetch as undiciFetch } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchUrlTool } from '../../src/tools/fetch-url.js';
import { specialPurposeRange, type HostLookup } from '../../src/tools/network-guard.js';
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
  sandbox = await createSandbox({
    fetchTimeoutMs: 500,
    fetchMaxBytes: 64 * 1024,
    maxOutputChars: 5_000,
    fetchAllowPrivate: true,
  });
});

afterEach(async () => {
  await sandbox.cleanup();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const fetchUrl = async (url: string) => asRecord(await sandbox.run('fetch_url', { url }));

describe('fetch_url', () => {
  it('returns the status, content type and text of a plain-text page', async () => {
    routes.set('/hello.txt', (_request, response) =>
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('héllo\nworld\n'),
    );
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
    routes.set('/logo.png', (_request, response) =>
      response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0, 1, 2])),
    );
    expect(await fetchUrl(`${base}/logo.png`)).toMatchObject({
      text: '',
      note: 'binary content (5 bytes read) is not shown',
    });
  });

  it.each(['file:///etc/passwd', 'ftp://example.com/x', 'javascript:alert(1)', 'data:text/plain,hi'])(
    'refuses %s: only http and https',
    async (url) => {
      await expect(fetchUrl(url)).rejects.toThrow(/only http and https URLs can be fetched/);
    },
  );

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
  const call = { signal: new AbortController().signal, toolCallId: 'c', sessionId: 's' };
  const testDns: Record<string, string[]> = { 'internal.example': ['127.0.0.1'], 'public.example': ['93.184.215.14'] };
  const testResolver: HostLookup = async (host) => {
    const addresses = testDns[host];
    if (!addresses) throw Object.assign(new Error(`unknown test name ${host}`), { code: 'ENOTFOUND' });
    return addresses;
  };

  it('refuses loopback, private, link-local and metadata addresses by default', async () => {
    const guarded = await createSandbox({ fetchTimeoutMs: 500 });
    try {
      for (const url of [
        'http://127.0.0.1:9/',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.1.2.3/',
        'http://[::1]/',
        'http://localhost/',
      ]) {
        await expect(guarded.run('fetch_url', { url })).rejects.toThrow(/private or local address/);
      }
    } finally {
      await guarded.cleanup();
    }
  });

  // Every refused form, end to end through the tool, aimed at the local test server's port:
  // were the guard to let one through, the server (or the recording fetch) would see it.
  const refused = [
    '127.0.0.1',
    '2130706433',
    '0177.0.0.1',
    '0x7f.0.0.1',
    '0x7f.1',
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '192.0.0.8',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '224.0.0.1',
    '255.255.255.255',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:127.0.0.1]',
    '[::ffff:169.254.169.254]',
    '[64:ff9b::7f00:1]',
    '[2002:7f00:1::]',
    '[fe80::1]',
    '[fc00::1]',
    'localhost',
    'internal.example',
  ];
  it.each(refused)('refuses http://%s end to end, and nothing is sent', async (host) => {
    const fetched: string[] = [];
    const tool = fetchUrlTool({
      // A name goes through the real client (its lookup is the guard); an IP address never
      // leaves this process, even if the guard under test were broken.
      fetchImpl: async (url, init) => {
        fetched.push(url);
        return /^\[|^[\d.]+$|^0x/i.test(host) ? new Response('reached') : undiciFetch(url, init);
      },
      timeoutMs: 2_000,
      maxBytes: 1024,
      maxOutputChars: 5_000,
      resolveHost: testResolver,
    });
    const port = new URL(base).port;
    await expect(tool.execute({ url: `http://${host}:${port}/secret` }, call)).rejects.toThrow(
      /^refused: .* is a private or local address \(.+\); fetch_url only reaches the public internet unless FETCH_ALLOW_PRIVATE=true$/,
    );
    // A name is refused by the connection's own lookup; anything else before fetch is called.
    expect(fetched).toEqual(host === 'internal.example' ? [`http://internal.example:${port}/secret`] : []);
    expect(seen).toEqual([]);
  });

  it.each(['1.1.1.1', '8.8.8.8', '93.184.216.34', '[2606:4700:4700::1111]', 'public.example'])(
    'lets http://%s through to the fetch',
    async (host) => {
      const fetched: string[] = [];
      const tool = fetchUrlTool({
        fetchImpl: async (url) => {
          fetched.push(url);
          return new Response('a public page', { headers: { 'content-type': 'text/plain' } });
        },
        timeoutMs: 500,
        maxBytes: 1024,
        maxOutputChars: 5_000,
        resolveHost: testResolver,
      });
      expect(await tool.execute({ url: `http://${host}/` }, call)).toMatchObject({
        status: 200,
        text: 'a public page',
      });
      expect(fetched).toEqual([`http://${host}/`]);
    },
  );

  it('resolves a name once and connects to the address it judged: a rebinding answer never reaches the internal server', async () => {
    // 127.0.0.2 plays a public web server; 127.0.0.1, on the same port, the internal one.
    const sites = await listenPair();
    try {
      sites.public.route = (_request, response) =>
        response.writeHead(200, { 'content-type': 'text/plain' }).end('public page');
      sites.internal.route = (_request, response) =>
        response.writeHead(200, { 'content-type': 'text/plain' }).end('internal secrets');
      const answers: string[] = [];
      const rebinding: HostLookup = async () => {
        const answer = answers.length === 0 ? '127.0.0.2' : '127.0.0.1';
        answers.push(answer);
        return [answer];
      };
      const tool = fetchUrlTool({
        timeoutMs: 2_000,
        maxBytes: 1024,
        maxOutputChars: 5_000,
        resolveHost: rebinding,
        addressPolicy: (address) => (address === '127.0.0.2' ? undefined : specialPurposeRange(address)),
      });
      const result = await tool.execute({ url: `http://rebind.example:${sites.port}/` }, call);
      expect(result).toMatchObject({ status: 200, text: 'public page' });
      expect(answers).toEqual(['127.0.0.2']);
      expect(sites.public.requests).toEqual([{ url: '/', host: `rebind.example:${sites.port}` }]);
      expect(sites.internal.requests).toEqual([]);
    } finally {
      await sites.close();
    }
  });

  it('judges the name again for each new connection of a same-site redirect', async () => {
    const sites = await listenPair();
    try {
      // The public server closes the connection, so the next hop must connect (and resolve) again.
      sites.public.route = (_request, response) =>
        response.writeHead(302, { location: '/next', connection: 'close' }).end();
      sites.internal.route = (_request, response) =>
        response.writeHead(200, { 'content-type': 'text/plain' }).end('internal secrets');
      let lookups = 0;
      const tool = fetchUrlTool({
        timeoutMs: 2_000,
        maxBytes: 1024,
        maxOutputChars: 5_000,
        resolveHost: async () => [lookups++ === 0 ? '127.0.0.2' : '127.0.0.1'],
        addressPolicy: (address) => (address === '127.0.0.2' ? undefined : specialPurposeRange(address)),
      });
      await expect(tool.execute({ url: `http://rebind.example:${sites.port}/start` }, call)).rejects.toThrow(
        /^refused: rebind\.example \(127\.0\.0\.1\) is a private or local address \(127\.0\.0\.0\/8 loopback\)/,
      );
      expect(lookups).toBe(2);
      expect(sites.public.requests.map((request) => request.url)).toEqual(['/start']);
      expect(sites.internal.requests).toEqual([]);
    } finally {
      await sites.close();
    }
  });
});

describe('fetch_url fetches only the site that was approved', () => {
  it('does not follow a redirect to another host: the answer names it and asks for a new call', async () => {
    routes.set('/away', (_request, response) =>
      response.writeHead(302, { location: 'http://elsewhere.example/landing' }).end('moved'),
    );
    expect(await fetchUrl(`${base}/away`)).toEqual({
      url: `${base}/away`,
      status: 302,
      statusText: 'Found',
      redirectsTo: 'http://elsewhere.example/landing',
      text: '',
      note:
        `${base}/away redirects to another site, http://elsewhere.example/landing, which was not fetched: this call was ` +
        `approved for ${base} only. To read it, call fetch_url again with that URL (a new call, with its own approval).`,
    });
    expect(seen).toHaveLength(1);
  });

  it.each([
    ['another port', (port: string) => `http://127.0.0.1:${Number(port) === 65535 ? 1024 : Number(port) + 1}/x`],
    ['another scheme', (port: string) => `https://127.0.0.1:${port}/x`],
    ['another name for the same address', (port: string) => `http://localhost:${port}/x`],
  ])('treats %s as another site', async (_what, target) => {
    const to = target(new URL(base).port);
    routes.set('/away', (_request, response) => response.writeHead(301, { location: to }).end());
    expect(await fetchUrl(`${base}/away`)).toMatchObject({ status: 301, redirectsTo: to });
    expect(seen).toHaveLength(1);
  });

  it('still follows redirects within the site, up to the limit', async () => {
    routes.set('/a', (_request, response) => response.writeHead(302, { location: `${base}/b` }).end());
    routes.set('/b', (_request, response) => response.writeHead(307, { location: '/c' }).end());
    routes.set('/c', (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('arrived'));
    expect(await fetchUrl(`${base}/a`)).toMatchObject({ url: `${base}/c`, status: 200, text: 'arrived' });
    routes.set('/loop', (_request, response) => response.writeHead(302, { location: '/loop' }).end());
    await expect(fetchUrl(`${base}/loop`)).rejects.toThrow(/too many redirects \(more than 5\)/);
  });

  it('connects a name to the address its resolver gave, with the name in the Host header', async () => {
    routes.set('/hello.txt', (_request, response) =>
      response.writeHead(200, { 'content-type': 'text/plain' }).end('hi'),
    );
    const tool = fetchUrlTool({
      timeoutMs: 2_000,
      maxBytes: 1024,
      maxOutputChars: 5_000,
      allowPrivateNetworks: true,
      resolveHost: async () => ['127.0.0.1'],
    });
    const port = new URL(base).port;
    const result = await tool.execute(
      { url: `http://named.example:${port}/hello.txt` },
      { signal: new AbortController().signal, toolCallId: 'c', sessionId: 's' },
    );
    expect(result).toMatchObject({ status: 200, text: 'hi' });
    expect(seen.map((headers) => headers.host)).toEqual([`named.example:${port}`]);
  });

  it('over https, sends the host name for TLS (SNI) while connecting to the vetted address', async () => {
    const servernames: string[] = [];
    // No certificate at all: the handshake stops after the server has read the name asked for.
    const tlsServer = tls.createServer({
      SNICallback: (servername, done) => {
        servernames.push(servername);
        done(new Error('no certificate in this test'), undefined);
      },
    });
    tlsServer.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    try {
      const port = (tlsServer.address() as AddressInfo).port;
      const tool = fetchUrlTool({
        timeoutMs: 2_000,
        maxBytes: 1024,
        maxOutputChars: 5_000,
        allowPrivateNetworks: true,
        resolveHost: async () => ['127.0.0.1'],
      });
      await expect(
        tool.execute(
          { url: `https://secure.example:${port}/` },
          { signal: new AbortController().signal, toolCallId: 'c', sessionId: 's' },
        ),
      ).rejects.toThrow(/could not fetch https:\/\/secure\.example/);
      expect(servernames).toEqual(['secure.example']);
    } finally {
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    }
  });
});

interface RecordingSite {
  route: Route;
  requests: Array<{ url: string | undefined; host: string | undefined }>;
}

/** Two servers on one port: 127.0.0.2 (a stand-in for a public site) and 127.0.0.1 (internal). */
async function listenPair(): Promise<{
  port: number;
  public: RecordingSite;
  internal: RecordingSite;
  close(): Promise<void>;
}> {
  const site = (): RecordingSite & { server: http.Server } => {
    const recorded: RecordingSite & { server: http.Server } = {
      route: (_request, response) => response.writeHead(404).end(),
      requests: [],
      server: http.createServer((request, response) => {
        recorded.requests.push({ url: request.url, host: request.headers.host });
        recorded.route(request, response);
      }),
    };
    return recorded;
  };
  const listen = (server: http.Server, port: number, host: string): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = (server: http.Server): Promise<void> => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  for (let attempt = 0; ; attempt++) {
    const publicSite = site();
    const internalSite = site();
    await listen(publicSite.server, 0, '127.0.0.2');
    const port = (publicSite.server.address() as AddressInfo).port;
    try {
      await listen(internalSite.server, port, '127.0.0.1');
    } catch (error) {
      // The port is taken on 127.0.0.1 by someone else: try another.
      await stop(publicSite.server);
      if (attempt >= 5) throw error;
      continue;
    }
    return {
      port,
      public: publicSite,
      internal: internalSite,
      close: async () => {
        await Promise.all([stop(publicSite.server), stop(internalSite.server)]);
      },
    };
  }
}
