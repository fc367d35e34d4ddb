// The Slack file source and sink against the fake Slack, with the real WebClient: a shared
// file is fetched with the bot token and streamed; Slack's sign-in page (what a download
// without a usable token gets, with status 200) is refused and never handed on; a file URL
// on any other host is refused before a request, the token never leaving; attach_file's
// upload reaches the thread with its comment through files.uploadV2.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { SlackFileSink } from '../../connectors/slack/file-sink.js';
import { SlackFileSource } from '../../connectors/slack/file-source.js';
import { incomingFilesOf } from '../../connectors/slack/inbound-files.js';
import { guardedFetch } from '../../connectors/slack/outbound-guard.js';
import { silentLogger, type IncomingFile } from '../../src/engine/index.js';
import { FileTransferError, type FileDownload } from '../../src/files/transfer.js';
import type { SlackFileObject } from '../fakes/slack-files.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { tempDir } from '../support/test-connector.js';

const TOKEN = 'xoxb-test';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function fakeSlack(options: ConstructorParameters<typeof FakeSlack>[0] = {}): Promise<FakeSlack> {
  const fake = await new FakeSlack(options).start();
  cleanups.push(() => fake.stop());
  return fake;
}

function client(fake: FakeSlack, token: string = TOKEN): webApi.WebClient {
  return new webApi.WebClient(token, {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: webApi.LogLevel.ERROR,
    fetch: guardedFetch(),
  });
}

function source(fake: FakeSlack, options: { token?: string | undefined; apiUrl?: string } = {}): SlackFileSource {
  return new SlackFileSource({
    token: 'token' in options ? options.token : TOKEN,
    apiUrl: options.apiUrl ?? fake.apiUrl,
    client: client(fake),
  });
}

/** The file as the connector hands it to the session layer. */
function incoming(file: SlackFileObject): IncomingFile {
  const [described] = incomingFilesOf([file], silentLogger);
  if (!described) throw new Error(`no incoming file for ${file.id}`);
  return described;
}

async function bytesOf(download: FileDownload): Promise<Buffer> {
  const body =
    download.body instanceof Readable ? download.body : Readable.from(download.body as AsyncIterable<Uint8Array>);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

async function refusal(promise: Promise<unknown>): Promise<FileTransferError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FileTransferError);
  return error as FileTransferError;
}

const signal = () => new AbortController().signal;

describe('the Slack file source', () => {
  it('fetches a shared file from url_private_download with the bot token, as a stream with its type and size', async () => {
    const fake = await fakeSlack({ botToken: TOKEN });
    const file = fake.files.add({ bytes: PNG, name: 'screenshot.png', mimetype: 'image/png' });
    const download = await source(fake).open(incoming(file), signal());
    expect(download).toMatchObject({ contentType: 'image/png', size: PNG.length });
    expect((await bytesOf(download)).equals(PNG)).toBe(true);
    expect(fake.files.downloadsOf(file.id)).toMatchObject([{ served: 'file', authorized: true }]);
  });

  it('without a token, or with another one, Slack answers its sign-in page: refused for good, naming files:read, and never handed on', async () => {
    const fake = await fakeSlack({ botToken: TOKEN });
    const file = fake.files.add({ bytes: 'a,b\n1,2\n', name: 'data.csv', mimetype: 'text/csv' });
    for (const token of [undefined, 'xoxb-another-app']) {
      const error = await refusal(source(fake, { token }).open(incoming(file), signal()));
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('Slack sent its sign-in page instead of the file');
      expect(error.message).toContain('files:read');
      if (token) expect(error.message).not.toContain(token);
    }
    expect(fake.files.downloadsOf(file.id).map((d) => d.served)).toEqual(['sign-in page', 'sign-in page']);
  });

  it('an app installed without files:read gets the sign-in page with the right token: the same refusal', async () => {
    const fake = await fakeSlack({ botToken: TOKEN });
    fake.revokeScope('files:read');
    const file = fake.files.add({ bytes: PNG, name: 'screenshot.png', mimetype: 'image/png' });
    const error = await refusal(source(fake).open(incoming(file), signal()));
    expect([error.retryable, error.message.includes('files:read'), error.message.includes(TOKEN)]).toEqual([
      false,
      true,
      false,
    ]);
  });

  it("a file URL on another host is refused before any request: the token goes only to Slack's file hosts or SLACK_API_URL", async () => {
    const fake = await fakeSlack();
    const file = fake.files.add({ bytes: PNG, name: 'screenshot.png', mimetype: 'image/png' });
    // The same fake under another host name: not the configured origin, not a Slack file host.
    const elsewhere = { ...incoming(file), url: file.url_private_download!.replace('127.0.0.1', 'localhost') };
    const foreign = await refusal(source(fake).open(elsewhere, signal()));
    expect([foreign.retryable, foreign.message]).toEqual([
      false,
      'not fetched: its address is not on a Slack file host (it points to localhost), and the bot sends its Slack token nowhere else',
    ]);
    for (const url of [
      'https://files.slack.com.evil.example/files-pri/T-F/x.png',
      'https://evil.example/files.slack.com/x.png',
      'not a url',
    ]) {
      expect((await refusal(source(fake).open({ ...incoming(file), url }, signal()))).retryable).toBe(false);
    }
    // Slack's own file host, but over plain HTTP: the token would travel in the clear.
    expect(
      (
        await refusal(
          source(fake).open({ ...incoming(file), url: 'http://files.slack.com/files-pri/T-F/x.png' }, signal()),
        )
      ).message,
    ).toContain('not HTTPS');
    expect(fake.files.downloads).toEqual([]);
  });

  it("the token goes only to Slack's documented file hosts, over HTTPS on port 443: not to a *.slack-edge.com name, another port or plain HTTP, nor after a redirect there", async () => {
    // Every request the source makes goes to a local server that records it (its URL as asked
    // and its Authorization header), whatever host the URL names: nothing reaches the internet,
    // and a token sent where it must not go is seen here.
    const seen: { asked: string; authorization: string | undefined }[] = [];
    let redirectTo: string | undefined;
    const recorder: Server = createServer((req, res) => {
      seen.push({ asked: String(req.headers['x-asked-url']), authorization: req.headers.authorization });
      if (redirectTo) res.writeHead(302, { location: redirectTo }).end();
      else res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PNG.length) }).end(PNG);
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => recorder.close(resolve)));
    const local = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    const routed: typeof fetch = (input, init) => {
      const asked = input instanceof URL ? input.href : typeof input === 'string' ? input : input.url;
      return fetch(`${local}/`, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), 'x-asked-url': asked },
      });
    };
    const fake = await fakeSlack();
    const file = fake.files.add({ bytes: PNG, name: 'screenshot.png', mimetype: 'image/png' });
    const slackSource = new SlackFileSource({ token: TOKEN, apiUrl: fake.apiUrl, client: client(fake), fetch: routed });
    const at = (url: string) => slackSource.open({ ...incoming(file), url }, signal());

    // The documented hosts get the token (the port written out as 443 is the same port).
    for (const url of [
      'https://files.slack.com/files-pri/T1-F1/x.png',
      'https://files.slack.com:443/files-pri/T1-F1/x.png',
      'https://files.slack-gov.com/files-pri/T1-F1/x.png',
    ]) {
      expect((await bytesOf(await at(url))).equals(PNG)).toBe(true);
    }
    expect(seen).toEqual([
      { asked: 'https://files.slack.com/files-pri/T1-F1/x.png', authorization: `Bearer ${TOKEN}` },
      { asked: 'https://files.slack.com/files-pri/T1-F1/x.png', authorization: `Bearer ${TOKEN}` },
      { asked: 'https://files.slack-gov.com/files-pri/T1-F1/x.png', authorization: `Bearer ${TOKEN}` },
    ]);
    seen.length = 0;

    const refusals: Record<string, string> = {
      'https://evil.slack-edge.com/files-pri/T1-F1/x.png':
        'not on a Slack file host (it points to evil.slack-edge.com)',
      'https://a.slack-edge.com/files-pri/T1-F1/x.png': 'not on a Slack file host (it points to a.slack-edge.com)',
      'https://files.slack.com:8443/files-pri/T1-F1/x.png':
        'names port 8443 of a Slack file host, and the bot sends its Slack token to port 443 only',
      'http://files.slack.com/files-pri/T1-F1/x.png': 'not HTTPS',
      'http://files.slack.com:443/files-pri/T1-F1/x.png': 'not HTTPS',
      'https://team.slack.com/files-pri/T1-F1/x.png': 'not on a Slack file host (it points to team.slack.com)',
    };
    for (const [url, words] of Object.entries(refusals)) {
      const error = await refusal(at(url));
      expect([url, error.retryable, error.message]).toEqual([url, false, expect.stringContaining(words)]);
      expect(error.message).not.toContain(TOKEN);
    }
    expect(seen).toEqual([]);

    // files.slack.com answering with a redirect to another port of itself, or to the CDN: the hop gets nothing.
    for (const hop of ['https://files.slack.com:8443/elsewhere', 'https://evil.slack-edge.com/elsewhere']) {
      redirectTo = hop;
      await refusal(at('https://files.slack.com/files-pri/T1-F1/x.png'));
    }
    expect(seen.map((one) => one.asked)).toEqual([
      'https://files.slack.com/files-pri/T1-F1/x.png',
      'https://files.slack.com/files-pri/T1-F1/x.png',
    ]);
  });

  it('a redirect is followed only to an allowed host: one elsewhere is refused and gets no request', async () => {
    const fake = await fakeSlack();
    const file = fake.files.add({ bytes: PNG, name: 'screenshot.png', mimetype: 'image/png' });
    // A proxy at SLACK_API_URL that sends the download on: once to the fake (allowed), once to another host.
    const hops: string[] = [];
    let target = '';
    const proxy: Server = createServer((req, res) => {
      hops.push(req.url ?? '');
      res.writeHead(302, { location: target }).end();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
    const proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const viaProxy = { ...incoming(file), url: `${proxyOrigin}/files-pri/${file.id}` };

    target = file.url_private_download!.replace('127.0.0.1', 'localhost');
    const refused = await refusal(source(fake, { apiUrl: `${proxyOrigin}/api/` }).open(viaProxy, signal()));
    expect(refused.message).toContain('it points to localhost');
    expect(fake.files.downloads).toEqual([]);

    // The proxy itself redirecting to the file on its own origin is followed.
    target = `${proxyOrigin}/again`;
    expect((await refusal(source(fake, { apiUrl: `${proxyOrigin}/api/` }).open(viaProxy, signal()))).message).toContain(
      'redirected the download too many times',
    );
    expect(hops.length).toBeGreaterThan(2);
  });

  it('a Slack Connect file (check_file_info) is looked up with files.info, then fetched', async () => {
    const fake = await fakeSlack();
    const file = fake.files.add({
      bytes: 'notes',
      name: 'notes.txt',
      mimetype: 'text/plain',
      fileAccess: 'check_file_info',
    });
    const described = incoming(file);
    expect(described).toEqual({ platform: 'slack', id: file.id, name: file.id, url: '' });
    const opened = await source(fake).open(described, signal());
    // The event named it by id only: the download names it, and the intake saves it so.
    expect(opened.name).toBe('notes.txt');
    expect(await bytesOf(opened)).toEqual(Buffer.from('notes'));
    expect(fake.callsOf('files.info')).toHaveLength(1);
  });

  it("a file hidden by the plan, or a deleted one, is refused with Slack's reason; a tombstone is no file at all", async () => {
    const fake = await fakeSlack();
    const hidden = fake.files.add({ bytes: 'old', name: 'old.txt', mimetype: 'text/plain', mode: 'hidden_by_limit' });
    expect(incoming(hidden).url).toBe('');
    expect((await refusal(source(fake).open(incoming(hidden), signal()))).message).toContain(
      "hidden by the workspace's Slack plan",
    );
    const tombstone = fake.files.add({ bytes: '', name: 'gone.txt', mode: 'tombstone' });
    expect(incomingFilesOf([tombstone], silentLogger)).toEqual([]);
    const deleted = { platform: 'slack', id: tombstone.id, name: 'gone.txt', url: '' };
    expect((await refusal(source(fake).open(deleted, signal()))).message).toContain('no longer on Slack');
  });

  it('a 503 is worth a retry; a 404 is not', async () => {
    const fake = await fakeSlack();
    const file = fake.files.add({ bytes: PNG, name: 'screenshot.png', mimetype: 'image/png' });
    fake.failNext('url_private_download', { status: 503 });
    expect((await refusal(source(fake).open(incoming(file), signal()))).retryable).toBe(true);
    const missing = { ...incoming(file), url: file.url_private_download!.replace(file.id, 'F0NOSUCH') };
    expect((await refusal(source(fake).open(missing, signal()))).retryable).toBe(false);
  });

  it('an HTML file shared on purpose is taken: its length is the size Slack announced', async () => {
    const fake = await fakeSlack();
    const page = '<!DOCTYPE html><html><body>my report</body></html>';
    const file = fake.files.add({ bytes: page, name: 'report.html', mimetype: 'text/html' });
    expect((await bytesOf(await source(fake).open(incoming(file), signal()))).toString()).toBe(page);
  });

  it('one malformed file object is skipped, not the message: the others are described in order', async () => {
    const fake = await fakeSlack();
    const a = fake.files.add({ bytes: PNG, name: 'a.png', mimetype: 'image/png' });
    const b = fake.files.add({ bytes: 'x', name: 'b.csv', mimetype: 'text/csv' });
    expect(incomingFilesOf([a, { id: 42 }, null, b], silentLogger).map((f) => [f.name, f.mimeType, f.size])).toEqual([
      ['a.png', 'image/png', PNG.length],
      ['b.csv', 'text/csv', 1],
    ]);
    expect(incomingFilesOf({ id: a.id }, silentLogger)).toEqual([]);
    expect(incomingFilesOf(null, silentLogger)).toEqual([]);
  });
});

describe('the Slack file sink', () => {
  it('posts a file into the thread with files.uploadV2: the bytes, channel_id, thread_ts and the comment reach Slack', async () => {
    const fake = await fakeSlack();
    const root = fake.addMessage({ channel: SLACK_IDS.channelId, text: 'clean the data for me' });
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const path = `${dir.path}/clean.csv`;
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path, 'a,b\n1,2\n');
    const sink = new SlackFileSink(() => client(fake));
    const thread = { platform: 'slack', workspace: SLACK_IDS.teamId, channel: SLACK_IDS.channelId, thread: root.ts };
    await sink.post(
      thread,
      { path, name: 'clean.csv', mimeType: 'text/csv', size: 8, comment: 'The cleaned data' },
      signal(),
    );

    const [upload] = fake.files.uploads;
    expect(upload).toMatchObject({
      filename: 'clean.csv',
      length: 8,
      completed: { channelId: SLACK_IDS.channelId, threadTs: root.ts, initialComment: 'The cleaned data' },
    });
    expect(upload!.bytes!.toString()).toBe('a,b\n1,2\n');
    expect(fake.thread(SLACK_IDS.channelId, root.ts).at(-1)).toMatchObject({
      user: SLACK_IDS.botUserId,
      text: 'The cleaned data',
      files: [{ name: 'clean.csv' }],
    });
    expect(await sink.maxBytes()).toBe(1024 ** 3);
  });

  it('an app without files:write is refused for good, saying which scope to add', async () => {
    const fake = await fakeSlack();
    fake.revokeScope('files:write');
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${dir.path}/x.txt`, 'x');
    const sink = new SlackFileSink(() => client(fake));
    const error = await refusal(
      sink.post(
        { platform: 'slack', workspace: SLACK_IDS.teamId, channel: SLACK_IDS.channelId, thread: '1795974906.000001' },
        { path: `${dir.path}/x.txt`, name: 'x.txt', mimeType: 'text/plain', size: 1 },
        signal(),
      ),
    );
    expect([error.retryable, error.message]).toEqual([
      false,
      'Slack refused to take x.txt (missing_scope): the Slack app needs the files:write scope (manifest/slack.yaml lists it); add it and reinstall the app.',
    ]);
  });
});
