// Files through the assembled core: a message's files are fetched over HTTP by the platform's
// source when a turn takes it, saved under the conversation's uploads/, named to the model,
// and an image reaches the model as an image part (from a reference: the transcript never
// holds the bytes). Caps, hostile names, sign-in pages, retries, steering, /forget, a restart,
// and attach_file posting through the platform's sink.
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import type { EngineEvent, InboxItem } from '../../src/engine/index.js';
import type { FileSink, OutgoingFile } from '../../src/files/index.js';
import { sessionIdOf } from '../../src/store/session-store.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { threadFolder } from '../support/conversation-folders.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { FileHost, TINY_PNG } from '../support/file-host.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };

interface Posted {
  file: OutgoingFile;
  bytes: Buffer;
}

async function boot(env: Record<string, string> = {}, reuse?: { dir: string; fake: FakeOpenAI; host: FileHost }) {
  let dir = reuse?.dir;
  if (dir === undefined) {
    const made = await tempDir();
    cleanups.push(made.remove);
    dir = made.path;
  }
  const fake = reuse?.fake ?? (await new FakeOpenAI().start());
  if (!reuse) cleanups.push(() => fake.stop());
  const host = reuse?.host ?? (await new FileHost().start());
  if (!reuse) cleanups.push(() => host.stop());
  const config = loadConfig({ ...coreTestEnv(dir, fake), ANTHROPIC_API_KEY: 'sekrit-value-0123456789', ...env });
  const core: Core = await startCore(config, { logger: memoryLogger() });
  let closed = false;
  const close = async () => {
    if (!closed) await core.close();
    closed = true;
  };
  cleanups.push(close);
  const shown: { event: EngineEvent; prompt?: InboxItem }[] = [];
  core.observers.add('test', {
    onEvent: (_s, event, prompt) => void shown.push({ event, ...(prompt ? { prompt } : {}) }),
  });
  core.files.registerSource('test', host.source());
  const posted: Posted[] = [];
  const sink: FileSink = {
    maxBytes: async () => 64 * 1024,
    post: async (_thread, file) => {
      posted.push({ file, bytes: await readFile(file.path) });
      return { link: `https://files.example/${file.name}` };
    },
  };
  core.files.registerSink('test', sink);
  await core.recover();
  const workspace = join(dir, 'workspace');
  return { core, fake, host, shown, posted, dir, close, uploads: join(threadFolder(workspace, key), 'uploads') };
}

type Part = { type: string; text?: string; image_url?: { url: string } };
function userParts(fake: FakeOpenAI, request: number): Part[] {
  const messages = fake.bodies[request]!.messages.filter((m) => m.role === 'user');
  return messages.flatMap((m) =>
    typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Part[]),
  );
}

describe('files shared in a thread', () => {
  it('a PNG and a CSV land in uploads/, the PNG reaches the model as an image part, and the transcript keeps a reference only', async () => {
    const { core, fake, host, uploads } = await boot();
    const csv = Buffer.from('name,count\nalpha,1\nbeta,2\n');
    const png = host.add('screen shot.png', TINY_PNG, 'image/png');
    const table = host.add('data.csv', csv, 'text/csv');
    fake.replyText('I see a screenshot and a table.');
    await core.manager.deliver(key, {
      text: "what's wrong here?",
      userId: 'U1',
      eventId: 'e1',
      attachments: [png, table],
    });
    await core.manager.idle();

    expect(await readFile(join(uploads, 'screen shot.png'))).toEqual(TINY_PNG);
    expect(await readFile(join(uploads, 'data.csv'))).toEqual(csv);
    const parts = userParts(fake, 0);
    const image = parts.find((part) => part.type === 'image_url');
    expect(image?.image_url?.url).toBe(`data:image/png;base64,${TINY_PNG.toString('base64')}`);
    const text = parts
      .filter((part) => part.type === 'text')
      .map((part) => part.text)
      .join('\n');
    expect(text).toContain("what's wrong here?");
    expect(text).toContain('uploads/screen shot.png (');
    expect(text).toContain('uploads/data.csv ("data.csv"; text/csv, 26 bytes): text; read it with your file tools');

    const transcript = await core.store.loadTranscript(sessionIdOf(key));
    const stored = JSON.stringify(transcript);
    expect(stored).not.toContain(TINY_PNG.toString('base64'));
    expect(stored).toContain('"type":"attachment"');
  });

  it('on Anthropic, the PNG goes as an image block and a PDF as a document block', async () => {
    const claude = await new FakeAnthropic().start();
    cleanups.push(() => claude.stop());
    const { core, host } = await boot({
      MODEL: 'anthropic:claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789',
      ANTHROPIC_BASE_URL: claude.baseURL,
    });
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
    claude.replyText('A screenshot and a report.');
    await core.manager.deliver(key, {
      text: 'read these',
      userId: 'U1',
      eventId: 'e1',
      attachments: [host.add('shot.png', TINY_PNG, 'image/png'), host.add('report.pdf', pdf, 'application/pdf')],
    });
    await core.manager.idle();
    const body = claude.requests[0]!.body as {
      messages: {
        role: string;
        content: { type: string; source?: { type: string; media_type: string; data: string } }[];
      }[];
    };
    const blocks = body.messages.filter((m) => m.role === 'user').flatMap((m) => m.content);
    expect(blocks).toContainEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: TINY_PNG.toString('base64') },
    });
    expect(blocks).toContainEqual(
      expect.objectContaining({
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') },
      }),
    );
  });

  it('an image changed in the workspace since it was shared is named, not sent: a later call cannot be made to fail', async () => {
    const first = await boot();
    first.fake.replyText('a dot').replyText('ok');
    await first.core.manager.deliver(key, {
      text: 'look',
      userId: 'U1',
      eventId: 'e1',
      attachments: [first.host.add('dot.png', TINY_PNG, 'image/png')],
    });
    await first.core.manager.idle();
    await first.close();
    await writeFile(join(first.uploads, 'dot.png'), Buffer.alloc(5 * 1024 * 1024, 1));
    // After a restart (or an eviction) the image is read again, and checked again.
    const second = await boot({}, { dir: first.dir, fake: first.fake, host: first.host });
    await second.core.manager.deliver(key, { text: 'again', userId: 'U1', eventId: 'e2' });
    await second.core.manager.idle();
    const again = userParts(second.fake, 1);
    expect(again.some((part) => part.type === 'image_url')).toBe(false);
    expect(again.map((part) => part.text).join('\n')).toContain(
      '[image uploads/dot.png changed since it was shared and is no longer sent]',
    );
  });

  it('a model without vision is told an image was shared and where it is', async () => {
    const { core, fake, host } = await boot({ MODEL: 'openai:some-local-model' });
    fake.replyText('ok');
    await core.manager.deliver(key, {
      text: 'look',
      userId: 'U1',
      eventId: 'e1',
      attachments: [host.add('a.png', TINY_PNG, 'image/png')],
    });
    await core.manager.idle();
    const parts = userParts(fake, 0);
    expect(parts.some((part) => part.type === 'image_url')).toBe(false);
    expect(parts.map((part) => part.text).join('\n')).toContain(
      '[image uploads/a.png was shared; this model cannot view images]',
    );
  });

  it('caps, hostile names, empty files, archives and sign-in pages: each a clear line, nothing lost, nothing unsafe saved', async () => {
    const { core, fake, host, shown, uploads, dir } = await boot({
      MAX_FILE_BYTES: '1000',
      MAX_FILES_PER_MESSAGE: '4',
    });
    const big = host.add('big.bin', Buffer.alloc(5000, 1), 'application/octet-stream');
    const hostile = host.add('../../.env', Buffer.from('A=1\n'), 'text/plain');
    const empty = host.add('empty.txt', Buffer.alloc(0), 'text/plain');
    const zip = host.add('bundle.zip', Buffer.from('PK\u0003\u0004rest-of-a-zip'), 'application/zip');
    const login = host.add('report.pdf', Buffer.from('%PDF-1.4'), 'application/pdf', { signIn: true });
    const sixth = host.add('sixth.txt', Buffer.from('x'), 'text/plain');
    fake.replyText('noted');
    const delivered = await core.manager.deliver(key, {
      text: '',
      userId: 'U1',
      eventId: 'e1',
      attachments: [big, hostile, empty, zip, login, sixth],
    });
    await core.manager.idle();
    // Past a cap by what the platform says of them: refused to the person who shared them (the connector whispers it).
    expect(delivered).toMatchObject({
      status: 'started',
      filesRefused: [
        'These files were not taken, so the bot does not see them:',
        '• big.bin: 4.9 KB is over the 1000 bytes one file may be (MAX_FILE_BYTES)',
        '• sixth.txt: a message may bring at most 4 files (MAX_FILES_PER_MESSAGE)',
      ].join('\n'),
    });

    // Over MAX_FILE_BYTES by its declared size: never downloaded. Past MAX_FILES_PER_MESSAGE: never downloaded.
    expect(host.downloads(big)).toBe(0);
    expect(host.downloads(sixth)).toBe(0);
    // `../../.env` is saved as a plain name inside uploads/, nothing above it.
    expect(await readFile(join(uploads, 'env'), 'utf8')).toBe('A=1\n');
    expect(existsSync(join(dir, '.env'))).toBe(false);
    expect(existsSync(join(uploads, 'empty.txt'))).toBe(true);
    expect(existsSync(join(uploads, 'bundle.zip'))).toBe(true);
    // The sign-in page is refused and not saved under the PDF's name.
    expect(existsSync(join(uploads, 'report.pdf'))).toBe(false);
    expect((await readdir(uploads)).sort()).toEqual(['bundle.zip', 'empty.txt', 'env']);

    const note = shown.find((s) => s.event.type === 'input_files')?.event as Extract<
      EngineEvent,
      { type: 'input_files' }
    >;
    expect(note.problems).toEqual([
      'empty.txt: the file is empty (0 bytes)',
      'report.pdf: not saved: the download gave a web page instead of the file (a sign-in page: the bot may lack the files:read permission)',
    ]);
    const text = userParts(fake, 0)
      .map((part) => part.text)
      .join('\n');
    expect(text).toContain(
      'uploads/bundle.zip ("bundle.zip"; application/zip, 17 bytes): kept as it is; this type cannot be read here (archives are not unpacked)',
    );
    expect(text).toContain('- report.pdf: not saved');
    expect(text).not.toContain('big.bin');
    expect(text).toContain('uploads/empty.txt ("empty.txt"; text/plain, 0 bytes): the file is empty');
  });

  it('a download that fails is tried once more; one that fails twice is named in the thread and the turn goes on', async () => {
    const { core, fake, host, shown, uploads } = await boot();
    const flaky = host.add('flaky.csv', Buffer.from('a,b\n'), 'text/csv', { failures: 1 });
    const broken = host.add('broken.csv', Buffer.from('c,d\n'), 'text/csv', { failures: 2 });
    fake.replyText('done');
    await core.manager.deliver(key, { text: 'two tables', userId: 'U1', eventId: 'e1', attachments: [flaky, broken] });
    await core.manager.idle();
    expect(host.downloads(flaky)).toBe(2);
    expect(host.downloads(broken)).toBe(2);
    expect(await readFile(join(uploads, 'flaky.csv'), 'utf8')).toBe('a,b\n');
    expect(existsSync(join(uploads, 'broken.csv'))).toBe(false);
    const note = shown.find((s) => s.event.type === 'input_files')?.event as Extract<
      EngineEvent,
      { type: 'input_files' }
    >;
    expect(note.problems).toEqual(['broken.csv: the download failed (HTTP 500)']);
    expect(fake.bodies).toHaveLength(1);
  });

  it('a message of nothing but files past the caps is refused whole, privately; the intake still holds a size nobody announced', async () => {
    const { core, fake, host, shown } = await boot({ MAX_FILE_BYTES: '1000' });
    const big = host.add('big.bin', Buffer.alloc(5000, 1), 'application/octet-stream');
    expect(await core.manager.deliver(key, { text: '', userId: 'U1', eventId: 'e1', attachments: [big] })).toEqual({
      status: 'refused',
      reason:
        'This file was not taken, so the bot does not see it:\n• big.bin: 4.9 KB is over the 1000 bytes one file may be (MAX_FILE_BYTES)',
    });
    const { size: _size, ...unsized } = host.add('quiet.bin', Buffer.alloc(5000, 2), 'application/octet-stream');
    fake.replyText('ok');
    await core.manager.deliver(key, { text: 'this one', userId: 'U1', eventId: 'e2', attachments: [unsized] });
    await core.manager.idle();
    expect(host.downloads(big)).toBe(0);
    const note = shown.find((s) => s.event.type === 'input_files')?.event as Extract<
      EngineEvent,
      { type: 'input_files' }
    >;
    expect(note.problems).toEqual(['quiet.bin: not fetched: 4.9 KB is over the 1000 bytes it may be']);
  });

  it('the conversation cap counts what uploads/ already holds', async () => {
    const { core, fake, host, shown } = await boot({ MAX_CONVERSATION_FILE_BYTES: '100' });
    fake.replyText('one').replyText('two');
    await core.manager.deliver(key, {
      text: 'first',
      userId: 'U1',
      eventId: 'e1',
      attachments: [host.add('a.txt', Buffer.alloc(80, 97), 'text/plain')],
    });
    await core.manager.idle();
    const second = host.add('b.txt', Buffer.alloc(40, 98), 'text/plain');
    await core.manager.deliver(key, { text: 'second', userId: 'U1', eventId: 'e2', attachments: [second] });
    await core.manager.idle();
    expect(host.downloads(second)).toBe(0);
    const notes = shown
      .filter((s) => s.event.type === 'input_files')
      .map((s) => (s.event as Extract<EngineEvent, { type: 'input_files' }>).problems);
    expect(notes).toEqual([
      [
        "b.txt: not fetched: this conversation's files would pass the 100 bytes they may take together (MAX_CONVERSATION_FILE_BYTES; 20 bytes left)",
      ],
    ]);
  });

  it('a file shared while a turn runs steers it: the next model request carries the image', async () => {
    const { core, fake, host } = await boot();
    const held = fake.replyTextHeld('Working on it', 1);
    fake.replyText('Now I see the screenshot.');
    await core.manager.deliver(key, { text: 'start', userId: 'U1', eventId: 'e1' });
    await waitFor(() => fake.requests.length === 1);
    const result = await core.manager.deliver(key, {
      text: 'here it is',
      userId: 'U1',
      eventId: 'e2',
      attachments: [host.add('later.png', TINY_PNG, 'image/png')],
    });
    expect(result).toMatchObject({ status: 'queued' });
    held.release();
    await core.manager.idle();
    expect(fake.requests).toHaveLength(2);
    expect(userParts(fake, 1).some((part) => part.type === 'image_url')).toBe(true);
    expect(userParts(fake, 0).some((part) => part.type === 'image_url')).toBe(false);
  });

  it('files shared with the reply that answers a question are not lost with it: they follow the answer', async () => {
    const { core, fake, host, shown } = await boot();
    fake.replyToolCalls([{ name: 'ask_user', arguments: { question: 'Which file?' } }]);
    fake.replyText('Thanks, I have the answer and the file.');
    await core.manager.deliver(key, { text: 'help', userId: 'U1', eventId: 'e1' });
    await waitFor(() => shown.some((s) => s.prompt?.kind === 'question'));
    const result = await core.manager.deliver(key, {
      text: 'this one',
      userId: 'U1',
      eventId: 'e2',
      attachments: [host.add('answer.png', TINY_PNG, 'image/png')],
    });
    expect(result).toMatchObject({ status: 'answered' });
    await core.manager.idle();
    const last = fake.bodies.at(-1)!.messages;
    expect(JSON.stringify(last)).toContain('this one');
    expect(userParts(fake, fake.bodies.length - 1).some((part) => part.type === 'image_url')).toBe(true);
  });

  it('a file from someone who may not steer is never downloaded', async () => {
    const { core, host } = await boot({ ALLOWED_USERS: 'U1' });
    const file = host.add('x.png', TINY_PNG, 'image/png');
    const result = await core.manager.deliver(key, { text: 'mine', userId: 'U2', eventId: 'e1', attachments: [file] });
    expect(result).toMatchObject({ status: 'refused' });
    await core.manager.idle();
    expect(host.downloads(file)).toBe(0);
  });

  it('a restart replays the conversation with its image, and /forget removes the uploads', async () => {
    const first = await boot();
    first.fake.replyText('a cat');
    await first.core.manager.deliver(key, {
      text: 'what is this?',
      userId: 'U1',
      eventId: 'e1',
      attachments: [first.host.add('cat.png', TINY_PNG, 'image/png')],
    });
    await first.core.manager.idle();
    await first.close();

    const second = await boot({}, { dir: first.dir, fake: first.fake, host: first.host });
    second.fake.replyText('still a cat');
    await second.core.manager.deliver(key, { text: 'and now?', userId: 'U1', eventId: 'e2' });
    await second.core.manager.idle();
    const parts = userParts(second.fake, 1);
    expect(parts.filter((part) => part.type === 'image_url')).toHaveLength(1);

    expect(existsSync(join(second.uploads, 'cat.png'))).toBe(true);
    expect(await second.core.manager.controls.forget(sessionIdOf(key), 'U1')).toMatchObject({ status: 'done' });
    expect(existsSync(second.uploads)).toBe(false);
  });

  it('with a shared channel folder, each thread keeps its uploads apart and /forget removes only its own', async () => {
    const { core, fake, host, dir } = await boot({ WORKSPACE_SCOPE: 'channel' });
    const other = { ...key, thread: 'T2' };
    fake.replyText('one').replyText('two');
    await core.manager.deliver(key, {
      text: 'a',
      userId: 'U1',
      eventId: 'e1',
      attachments: [host.add('a.txt', Buffer.from('a'), 'text/plain')],
    });
    await core.manager.idle();
    await core.manager.deliver(other, {
      text: 'b',
      userId: 'U1',
      eventId: 'e2',
      attachments: [host.add('b.txt', Buffer.from('b'), 'text/plain')],
    });
    await core.manager.idle();
    const text = userParts(fake, 0)
      .map((part) => part.text)
      .join('\n');
    const path = /(uploads\/[^ ]+\/a\.txt)/.exec(text)?.[1];
    expect(path).toBeDefined();
    const workspace = join(dir, 'workspace');
    const channelFolder = (await readdir(workspace))[0]!;
    expect(existsSync(join(workspace, channelFolder, path!))).toBe(true);
    await core.manager.controls.forget(sessionIdOf(key), 'U1');
    expect(existsSync(join(workspace, channelFolder, path!))).toBe(false);
    const otherPath = /(uploads\/[^ ]+\/b\.txt)/.exec(
      userParts(fake, 1)
        .map((part) => part.text)
        .join('\n'),
    )?.[1];
    expect(existsSync(join(workspace, channelFolder, otherPath!))).toBe(true);
  });
});

describe('attach_file', () => {
  async function attach(
    env: Record<string, string>,
    setup: (folder: string) => Promise<void>,
    args: Record<string, unknown>,
  ) {
    const booted = await boot({ PERMISSION_MODE: 'interactive', ...env });
    const folder = threadFolder(join(booted.dir, 'workspace'), key);
    booted.fake.replyText('first');
    await booted.core.manager.deliver(key, { text: 'hi', userId: 'U1', eventId: 'e1' });
    await booted.core.manager.idle();
    await setup(folder);
    booted.fake.replyToolCalls([{ name: 'attach_file', arguments: args }]);
    booted.fake.replyText('posted');
    await booted.core.manager.deliver(key, { text: 'send it', userId: 'U1', eventId: 'e2' });
    await waitFor(() => booted.shown.some((s) => s.prompt));
    const asked = booted.shown.find((s) => s.event.type === 'permission_required')!.event as Extract<
      EngineEvent,
      { type: 'permission_required' }
    >;
    const prompt = booted.shown.find((s) => s.prompt)!.prompt!;
    await booted.core.manager.resolve(prompt.id, { choice: 'once' }, 'U1');
    await booted.core.manager.idle();
    const finished = booted.shown.find((s) => s.event.type === 'tool_finished')!.event as Extract<
      EngineEvent,
      { type: 'tool_finished' }
    >;
    return { ...booted, asked, finished };
  }

  it('asks like a write, the card shows name, size, type and first lines, and the file is posted with secrets masked', async () => {
    const { asked, finished, posted } = await attach(
      {},
      async (folder) => writeFile(join(folder, 'report.csv'), 'id,token\n1,sekrit-value-0123456789\n2,plain\n'),
      { path: 'report.csv', comment: 'the cleaned data' },
    );
    expect(asked.arguments).toMatchObject({
      file: 'report.csv',
      name: 'report.csv',
      size: '43 bytes',
      type: 'text/csv',
      comment: 'the cleaned data',
    });
    expect(String((asked.arguments as { first_lines: string }).first_lines)).toContain('id,token\n1,');
    expect(JSON.stringify(asked.arguments)).not.toContain('sekrit-value-0123456789');
    expect(finished.status).toBe('ok');
    expect(posted).toHaveLength(1);
    expect(posted[0]!.file).toMatchObject({ name: 'report.csv', mimeType: 'text/csv', comment: 'the cleaned data' });
    expect(posted[0]!.bytes.toString()).not.toContain('sekrit-value-0123456789');
    expect(posted[0]!.bytes.toString()).toContain('2,plain');
    expect(finished.resultPreview).toContain('https://files.example/report.csv');
  });

  it('a binary file holding a secret value is refused', async () => {
    const secretBinary = await attach(
      {},
      async (folder) =>
        writeFile(
          join(folder, 'blob.bin'),
          Buffer.concat([Buffer.from([0, 1, 2, 0]), Buffer.from('sekrit-value-0123456789'), Buffer.from([0, 0])]),
        ),
      { path: 'blob.bin' },
    );
    expect(secretBinary.finished.status).toBe('error');
    expect(secretBinary.finished.resultPreview).toContain('holds a configured secret value');
    expect(secretBinary.posted).toHaveLength(0);
  });

  it('a file holding the secret as UTF-16 is refused: little- and big-endian, with and without a byte-order mark', async () => {
    const le = Buffer.from('sekrit-value-0123456789', 'utf16le');
    const variants: Record<string, Buffer> = {
      'le-bom.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('token: ', 'utf16le'), le]),
      'le.bin': Buffer.concat([Buffer.from([7, 0, 0]), le]),
      'be-bom.txt': Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(le).swap16()]),
      'be.bin': Buffer.from(le).swap16(),
    };
    for (const [name, bytes] of Object.entries(variants)) {
      const { finished, posted } = await attach({}, async (folder) => writeFile(join(folder, name), bytes), {
        path: name,
      });
      expect([name, finished.status, finished.resultPreview]).toEqual([
        name,
        'error',
        expect.stringContaining('holds a configured secret value'),
      ]);
      expect(posted).toHaveLength(0);
    }
  });

  it('a text file: the secret reversed or in ROT13 is masked, and as UTF-16 past the first 8 KB too', async () => {
    const reversed = [...'sekrit-value-0123456789'].reverse().join('');
    const rot13 = 'frxevg-inyhr-0123456789';
    const tail = Buffer.from('sekrit-value-0123456789', 'utf16le');
    const { finished, posted } = await attach(
      {},
      async (folder) =>
        writeFile(
          join(folder, 'notes.txt'),
          Buffer.concat([Buffer.from(`a: ${reversed}\nb: ${rot13}\n${'filler line\n'.repeat(800)}`), tail]),
        ),
      { path: 'notes.txt' },
    );
    expect(finished.status).toBe('ok');
    const sent = posted[0]!.bytes.toString('latin1');
    expect(sent).toContain('a: [secret]\nb: [secret]\n');
    expect(sent).not.toContain(reversed);
    expect(sent).not.toContain(rot13);
    expect(sent).not.toContain(tail.toString('latin1').slice(4, -4));
  });

  it('a compressed file is known by its first bytes, whatever its name, opened and checked; what cannot be read is refused unless ATTACH_COMPRESSED=allow, the card saying so before the click', async () => {
    const gzipped = gzipSync(Buffer.from('ANTHROPIC_API_KEY=sekrit-value-0123456789\n'));
    const refused = await attach({}, async (folder) => writeFile(join(folder, 'report.dat'), gzipped), {
      path: 'report.dat',
    });
    expect(refused.asked.arguments).toMatchObject({
      compressed: expect.stringContaining(
        'a gzip file: it will be opened and what is inside checked for secret values',
      ),
    });
    expect(refused.finished.status).toBe('error');
    expect(refused.finished.resultPreview).toContain('report.dat, inflated, holds a configured secret value');
    expect(refused.posted).toHaveLength(0);

    // A .docx whose bytes after the zip signature are no zip: it cannot be read.
    const brokenDocx = Buffer.concat([
      Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00]),
      Buffer.alloc(200, 1),
    ]);
    const docx = await attach({}, async (folder) => writeFile(join(folder, 'summary.docx'), brokenDocx), {
      path: 'summary.docx',
    });
    expect(docx.finished.resultPreview).toContain(
      'summary.docx is a zip archive the check cannot read (it has no end of central directory record: damaged, or no zip)',
    );
    expect(docx.finished.resultPreview).toContain('ATTACH_COMPRESSED=allow');
    expect(docx.posted).toHaveLength(0);

    // Allowed: what cannot be read goes unchecked; a secret it can read is still refused.
    const allowed = await attach(
      { ATTACH_COMPRESSED: 'allow' },
      async (folder) => writeFile(join(folder, 'summary.docx'), brokenDocx),
      { path: 'summary.docx' },
    );
    expect(allowed.asked.arguments).toMatchObject({
      compressed: expect.stringContaining('what cannot be read goes unchecked (ATTACH_COMPRESSED=allow)'),
    });
    expect(allowed.finished.status).toBe('ok');
    expect(allowed.posted[0]!.bytes.equals(brokenDocx)).toBe(true);
    const stillRead = await attach(
      { ATTACH_COMPRESSED: 'allow' },
      async (folder) => writeFile(join(folder, 'report.dat'), gzipped),
      { path: 'report.dat' },
    );
    expect(stillRead.finished.status).toBe('error');
    expect(stillRead.posted).toHaveLength(0);
  });

  it('a file over the platform limit is refused naming both sizes', async () => {
    const tooBig = await attach({}, async (folder) => writeFile(join(folder, 'big.bin'), Buffer.alloc(70 * 1024, 7)), {
      path: 'big.bin',
    });
    expect(tooBig.finished.status).toBe('error');
    expect(tooBig.finished.resultPreview).toContain('big.bin is 70 KB, over the 64 KB this test thread accepts');
    expect(tooBig.posted).toHaveLength(0);
  });
});
