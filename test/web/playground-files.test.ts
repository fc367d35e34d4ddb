// Files in the playground over real HTTP, as its page sends them: an upload behind the access
// token, capped by MAX_FILE_BYTES and streamed to a staging folder under a name the server
// makes; a message that carries uploads (or only uploads); the 'web' file source that reads
// staged uploads and nothing else; and a file the bot posts, downloaded by its id alone with
// the token. The bot is the real core against FakeOpenAI on a random loopback port.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingFile } from '../../src/engine/index.js';
import { FileTransferError } from '../../src/files/transfer.js';
import type { SessionKey } from '../../src/store/session-store.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { bootWebBot, messageOf, type WebBot } from './web-harness.js';

const bots: WebBot[] = [];
afterEach(async () => {
  for (const bot of bots.splice(0).reverse()) await bot.stop();
});

async function boot(env: Record<string, string> = {}): Promise<WebBot> {
  const bot = await bootWebBot({ env });
  bots.push(bot);
  return bot;
}

interface UploadAnswer {
  status: number;
  body: { ok: boolean; message?: string; upload?: { id: string; name: string; size: number; mimeType?: string } };
}

/** POST one file as the page does: its bytes as the body, its name URI-encoded in X-File-Name. */
async function upload(
  bot: WebBot,
  name: string,
  bytes: Buffer | Readable,
  options: { token?: string | null; type?: string } = {},
): Promise<UploadAnswer> {
  const token = options.token === undefined ? bot.token : options.token;
  const streamed = bytes instanceof Readable;
  const response = await fetch(`${bot.origin}/api/uploads`, {
    method: 'POST',
    headers: {
      'content-type': options.type ?? 'application/octet-stream',
      'x-file-name': encodeURIComponent(name),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    // A stream goes chunked: no Content-Length for the server to check first.
    body: streamed ? Readable.toWeb(bytes) : bytes,
    ...(streamed ? { duplex: 'half' } : {}),
  });
  return { status: response.status, body: (await response.json()) as UploadAnswer['body'] };
}

async function stagedNames(bot: WebBot): Promise<string[]> {
  const dir = join(bot.filesDir, 'uploads');
  return existsSync(dir) ? readdir(dir) : [];
}

async function readAll(body: unknown): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const incoming = (id: string, url = `web-upload:${id}`): IncomingFile => ({
  platform: 'web',
  id,
  name: 'data.csv',
  url,
});

describe('uploading a file', () => {
  it('needs the access token: none is refused (401), a wrong one too (403), and nothing is staged', async () => {
    const bot = await boot();
    const none = await upload(bot, 'a.txt', Buffer.from('hello'), { token: null });
    expect(none.status).toBe(401);
    expect(none.body.message).toMatch(/access token/);
    expect((await upload(bot, 'a.txt', Buffer.from('hello'), { token: 'wrong' })).status).toBe(403);
    expect(await stagedNames(bot)).toEqual([]);
  });

  it('a file over MAX_FILE_BYTES is refused with a message that names the cap, whether its length is announced or it comes chunked; nothing of it is kept', async () => {
    const bot = await boot({ MAX_FILE_BYTES: '1024' });
    const announced = await upload(bot, 'big.bin', randomBytes(4096));
    expect(announced.status).toBe(413);
    expect(announced.body.message).toBe(
      'big.bin is 4 KB, over 1 KB, the most the playground takes in one file (MAX_FILE_BYTES).',
    );

    // Chunked, so the server learns the size only while it streams: it stops at the cap.
    const chunks = Array.from({ length: 64 }, () => randomBytes(256));
    const chunked = await upload(bot, 'stream.bin', Readable.from(chunks));
    expect(chunked.status).toBe(413);
    expect(chunked.body.message).toBe(
      'stream.bin is larger than 1 KB, the most the playground takes in one file (MAX_FILE_BYTES).',
    );
    expect(await stagedNames(bot)).toEqual([]);

    // At the cap exactly, it is taken.
    const fits = await upload(bot, 'fits.bin', randomBytes(1024));
    expect(fits.status).toBe(200);
    expect(fits.body.upload?.size).toBe(1024);
  });

  it('a hostile name (../../.env) is staged under a random name inside the staging folder, and kept only as the name shown', async () => {
    const bot = await boot();
    const bytes = Buffer.from('SECRET=not-really\n');
    const answer = await upload(bot, '../../.env', bytes, { type: 'text/plain' });
    expect(answer.status).toBe(200);
    const staged = answer.body.upload!;
    expect(staged).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      name: '../../.env',
      size: bytes.length,
      mimeType: 'text/plain',
    });
    expect(await stagedNames(bot)).toEqual([staged.id]);
    expect(await readFile(join(bot.filesDir, 'uploads', staged.id))).toEqual(bytes);
    // Nothing landed where the name points, from the staging folder or from the bot's folder.
    expect(existsSync(join(bot.filesDir, '.env'))).toBe(false);
    expect(existsSync(join(bot.dir, '.env'))).toBe(false);
    // A name with control characters is shown without them.
    const bell = await upload(bot, 'a\u0007b\nc.txt', Buffer.from('x'));
    expect(bell.body.upload?.name).toBe('abc.txt');
  });
});

describe('a message with files', () => {
  it('carries its uploads (shown on the message); the web source reads each upload, exactly, and nothing else', async () => {
    const bot = await boot();
    const live = await bot.stream();
    bot.llm.replyText('Got your file.');
    const csv = Buffer.from('city,people\nLyon,522000\n');
    const { upload: staged } = (await upload(bot, 'cities.csv', csv, { type: 'text/csv' })).body;
    const posted = await bot.act('/api/messages', { text: '@bot summarise this', files: [staged!.id] });
    expect(posted.status).toBe(200);
    await bot.idle();
    const root = bot.connector.threads.get(posted.body.thread as string)!.messages[0]!;
    expect(root).toMatchObject({
      kind: 'input',
      files: [{ id: staged!.id, name: 'cities.csv', size: csv.length, mimeType: 'text/csv' }],
    });
    await live.next((event) => messageOf(event)?.kind === 'answer');
    // The model was told of the file, saved in the conversation's uploads/.
    const told = JSON.stringify(bot.llm.bodies[0]!.messages.filter((message) => message.role === 'user'));
    expect(told).toContain('summarise this');
    expect(told).toContain('uploads/cities.csv');

    const source = bot.core.files.source('web')!;
    const download = await source.open({ ...incoming(staged!.id), mimeType: 'text/csv' }, new AbortController().signal);
    expect(await readAll(download.body)).toEqual(csv);
    expect(download).toMatchObject({ size: csv.length, contentType: 'text/csv' });

    // An id never staged, a URL that is not a staged upload's, or one that points elsewhere.
    const refusals: IncomingFile[] = [
      incoming(randomBytes(16).toString('base64url')),
      incoming(staged!.id, `https://files.example/${staged!.id}`),
      incoming(staged!.id, 'web-upload:../../.env'),
      incoming('../../.env', 'web-upload:../../.env'),
      incoming(staged!.id, `web-upload:${randomBytes(16).toString('base64url')}`),
      { ...incoming(staged!.id), platform: 'slack' },
    ];
    for (const file of refusals) {
      const error = await source.open(file, new AbortController().signal).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error, file.url).toBeInstanceOf(FileTransferError);
      expect((error as FileTransferError).retryable, file.url).toBe(false);
    }
  });

  it('files past MAX_FILES_PER_MESSAGE are not taken: the answer carries the private line naming the setting, and the rest reach the model', async () => {
    const bot = await boot({ MAX_FILES_PER_MESSAGE: '1' });
    bot.llm.replyText('One file seen.');
    const first = (await upload(bot, 'a.csv', Buffer.from('a\n'))).body.upload!;
    const second = (await upload(bot, 'b.csv', Buffer.from('b\n'))).body.upload!;
    const posted = await bot.act('/api/messages', { text: '@bot read both', files: [first.id, second.id] });
    expect(posted.status).toBe(200);
    expect(posted.body.notice).toBe(
      'This file was not taken, so the bot does not see it:\n• b.csv: a message may bring at most 1 file (MAX_FILES_PER_MESSAGE)',
    );
    await bot.idle();
    const asked = JSON.stringify(bot.llm.bodies[0]!.messages.at(-1));
    expect(asked).toContain('uploads/a.csv');
    expect(asked).not.toContain('b.csv');
  });

  it('a message made only of files is a message: in a thread it reaches the bot; an upload is taken by one message only', async () => {
    const bot = await boot();
    bot.llm.replyText('Hello.');
    bot.llm.replyText('I see a file.');
    const started = await bot.act('/api/messages', { text: '@bot hello' });
    await bot.idle();
    const thread = started.body.thread as string;
    const { upload: staged } = (await upload(bot, 'notes.md', Buffer.from('# notes\n'))).body;
    const only = await bot.act('/api/messages', { thread, files: [staged!.id] });
    expect(only.status).toBe(200);
    expect(only.body.status).not.toBe('posted');
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(2);
    expect(JSON.stringify(bot.llm.bodies[1]!.messages.at(-1))).toContain('uploads/notes.md');
    const message = bot.connector.threads
      .get(thread)!
      .messages.find((candidate) => candidate.id === only.body.message)!;
    expect(message).toMatchObject({ kind: 'input', text: '', files: [{ name: 'notes.md' }] });

    const again = await bot.act('/api/messages', { thread, text: 'and again', files: [staged!.id] });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/no longer waiting to be sent.*attach it again/);
    // Neither text nor files: refused with the reason.
    const empty = await bot.act('/api/messages', { thread, text: '  ' });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/Write a message or attach a file/);
  });

  it('files on a channel message that does not mention the bot are shown and not kept: nothing will fetch them', async () => {
    const bot = await boot();
    const { upload: staged } = (await upload(bot, 'photo.png', randomBytes(64), { type: 'image/png' })).body;
    expect(await stagedNames(bot)).toEqual([staged!.id]);
    const posted = await bot.act('/api/messages', { text: 'look at this, everyone', files: [staged!.id] });
    expect(posted.body.status).toBe('posted');
    expect(bot.connector.threads.get(posted.body.thread as string)!.messages[0]).toMatchObject({
      files: [{ name: 'photo.png' }],
    });
    expect(await stagedNames(bot)).toEqual([]);
    expect(bot.llm.requests).toHaveLength(0);
  });
});

describe('with the demo model (the playground without MODEL)', () => {
  it('a shared CSV is said to be saved, and posted back with attach_file once approved: the link downloads the same bytes', async () => {
    const bot = await boot({ MODEL: 'demo' });
    const csv = Buffer.from('city,people\nLyon,522000\n');
    const { upload: staged } = (await upload(bot, 'cities.csv', csv, { type: 'text/csv' })).body;
    const started = await bot.act('/api/messages', { text: '@bot hello', files: [staged!.id] });
    const thread = started.body.thread as string;
    const messages = () => bot.connector.threads.get(thread)!.messages;
    await waitFor(
      () => messages().some((message) => message.kind === 'card' && message.card.buttons.length > 0),
      15_000,
    );
    const card = messages().find((message) => message.kind === 'card')!;
    if (card.kind !== 'card') throw new Error('no card');
    expect(card.card.name).toBe('attach_file');
    expect(messages().find((message) => message.kind === 'answer')).toMatchObject({
      text: expect.stringContaining('You shared `uploads/cities.csv`') as unknown,
    });
    expect((await bot.act('/api/click', { item: card.card.itemId, choice: 'once' })).status).toBe(200);
    await waitFor(
      () => messages().some((message) => message.kind === 'answer' && message.text.startsWith('Posted:')),
      15_000,
    );
    await bot.idle();
    const file = messages().find((message) => message.kind === 'file');
    if (file?.kind !== 'file') throw new Error('no file message');
    expect(file).toMatchObject({
      comment: 'Your file, back from the demo model.',
      file: { name: 'cities.csv', size: csv.length },
    });
    const response = await fetch(`${bot.origin}/api/files/${file.file.id}`, {
      headers: { authorization: `Bearer ${bot.token}` },
    });
    expect(Buffer.from(await response.arrayBuffer())).toEqual(csv);
  });
});

describe('while an approval waits', () => {
  it('a reply with a file answers the card (declined) and the file reaches the model with the reply', async () => {
    const bot = await boot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'plan.txt', content: 'the plan' } }]);
    bot.llm.replyText('I will use your notes.');
    const started = await bot.act('/api/messages', { text: '@bot write the plan' });
    const thread = started.body.thread as string;
    await waitFor(
      () =>
        bot.connector.threads
          .get(thread)!
          .messages.some((message) => message.kind === 'card' && message.card.buttons.length > 0),
      8_000,
    );
    const { upload: staged } = (await upload(bot, 'notes.md', Buffer.from('# notes\n'))).body;
    expect(
      (await bot.act('/api/messages', { thread, text: 'use these notes instead', files: [staged!.id] })).status,
    ).toBe(200);
    await waitFor(
      () =>
        bot.connector.threads
          .get(thread)!
          .messages.some((message) => message.kind === 'answer' && message.text === 'I will use your notes.'),
      8_000,
    );
    await bot.idle();
    const card = bot.connector.threads.get(thread)!.messages.find((message) => message.kind === 'card');
    expect(card).toMatchObject({ card: { phase: 'denied' } });
    expect(JSON.stringify(bot.llm.bodies[1]!.messages)).toMatch(/use these notes instead[\s\S]*uploads\/notes\.md/);
  });
});

describe('a file the bot posts', () => {
  async function postedFile(bot: WebBot, bytes: Buffer, name = 'cleaned data.csv') {
    bot.llm.replyText('Ready.');
    const started = await bot.act('/api/messages', { text: '@bot clean it' });
    await bot.idle();
    const thread = started.body.thread as string;
    const key: SessionKey = { platform: 'web', workspace: 'playground', channel: 'general', thread };
    const path = join(bot.dir, 'to-post.bin');
    await writeFile(path, bytes);
    const result = await bot.core.files
      .sink('web')!
      .post(
        key,
        { path, name, mimeType: 'text/csv', size: bytes.length, comment: 'Here it is.' },
        new AbortController().signal,
      );
    return { thread, result, path };
  }

  it('shows in the thread as a file message whose link downloads the exact bytes, with the token, as an attachment', async () => {
    const bot = await boot();
    const bytes = Buffer.concat([Buffer.from('a,b\n1,2\n'), randomBytes(300_000)]);
    const { thread, result, path } = await postedFile(bot, bytes);
    const link = new URL(result.link!);
    expect(link.origin).toBe(bot.origin);
    expect(link.pathname).toMatch(/^\/api\/files\/[A-Za-z0-9_-]{22}$/);
    expect(link.href).not.toContain(bot.token);
    const message = bot.connector.threads.get(thread)!.messages.at(-1)!;
    expect(message).toMatchObject({
      kind: 'file',
      comment: 'Here it is.',
      file: { id: link.pathname.split('/').at(-1), name: 'cleaned data.csv', size: bytes.length },
    });

    // What was posted is a copy: the conversation's file changing later does not change it.
    await writeFile(path, 'changed');
    const response = await fetch(link, { headers: { authorization: `Bearer ${bot.token}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="cleaned data.csv"; filename*=UTF-8''cleaned%20data.csv`,
    );
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);

    expect((await fetch(link)).status).toBe(401);
    expect((await fetch(link, { headers: { authorization: 'Bearer wrong' } })).status).toBe(403);
  });

  it('is served by its id only: an unknown id, a path, or an upload of the person is refused', async () => {
    const bot = await boot();
    await postedFile(bot, Buffer.from('the bytes the bot posted'));
    const { upload: staged } = (await upload(bot, 'mine.txt', Buffer.from("the person's own upload"))).body;
    const get = (path: string) => fetch(`${bot.origin}${path}`, { headers: { authorization: `Bearer ${bot.token}` } });
    for (const path of [
      `/api/files/${randomBytes(16).toString('base64url')}`,
      `/api/files/${staged!.id}`,
      '/api/files/..%2F..%2F.env',
      '/api/files/%2e%2e%2fto-post.bin',
      '/api/files/../to-post.bin',
      '/api/files/',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      const text = await response.text();
      expect(text, path).not.toContain('the bytes the bot posted');
      expect(text, path).not.toContain("the person's own upload");
    }
  });

  it('after /forget the thread and its files are gone: the link answers 404 with the reason', async () => {
    const bot = await boot();
    const { thread, result } = await postedFile(bot, Buffer.from('bye'));
    expect(await readdir(join(bot.filesDir, 'posted'))).toHaveLength(1);
    await bot.act('/api/messages', { thread, text: '/forget' });
    await bot.idle();
    const response = await fetch(result.link!, { headers: { authorization: `Bearer ${bot.token}` } });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { message: string }).message).toMatch(/no such file.*attach it again/);
    expect(await readdir(join(bot.filesDir, 'posted'))).toHaveLength(0);
  });

  it('lives as long as the run: after a restart the thread still shows it, and its link says why it is gone', async () => {
    const dir = await tempDir();
    const llm = await new FakeOpenAI().start();
    try {
      const first = await bootWebBot({ dir: dir.path, llm });
      const { thread, result } = await postedFile(first, Buffer.from('posted before the restart'));
      await first.stop();
      expect(existsSync(first.filesDir)).toBe(false);

      const second = await bootWebBot({ dir: dir.path, llm });
      bots.push(second);
      expect(second.connector.threads.get(thread)!.messages.at(-1)).toMatchObject({
        kind: 'file',
        file: { name: 'cleaned data.csv' },
      });
      const link = new URL(result.link!);
      const response = await fetch(`${second.origin}${link.pathname}`, {
        headers: { authorization: `Bearer ${second.token}` },
      });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { message: string }).message).toMatch(/while it runs.*attach it again/);
      await second.stop();
      bots.splice(bots.indexOf(second), 1);
    } finally {
      await llm.stop();
      await dir.remove();
    }
  });

  it('into a thread that does not exist: refused, not retryable', async () => {
    const bot = await boot();
    const key: SessionKey = { platform: 'web', workspace: 'playground', channel: 'general', thread: 'nope' };
    const error = await bot.core.files
      .sink('web')!
      .post(key, { path: join(bot.dir, 'x'), name: 'x', mimeType: 'text/plain', size: 1 }, new AbortController().signal)
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(FileTransferError);
    expect((error as FileTransferError).retryable).toBe(false);
  });
});
