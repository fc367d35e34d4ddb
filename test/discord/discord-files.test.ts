// Discord's files through the connector, against the fake Discord (real discord.js client and
// REST): what a message shares reaches `deliver` as attachments (a message of files alone, a
// forward's text and files), what must not be fetched is not, the Discord file source fetches
// only from Discord's CDN (or the configured API's host) and the sink posts a file into the
// thread, or refuses one over the server's upload limit before any upload.
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingFile } from '../../src/engine/index.js';
import { FileTransferError, type FileSink, type FileSource } from '../../src/files/transfer.js';
import type { InboundMessage } from '../../src/sessions/session-manager.js';
import type { SessionKey } from '../../src/store/session-store.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { waitFor } from '../support/engine-kit.js';
import { bootDiscordBot, DISCORD_IDS, mention, waitForBotMessage, type DiscordBot } from './discord-harness.js';

const GENERAL = DISCORD_IDS.generalChannelId;
const ADA = DISCORD_IDS.humanUserId;
const GRACE = DISCORD_IDS.otherHumanUserId;
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const CSV = 'city,temp\nOslo,3\nLima,19\n';

let bot: DiscordBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

/** Every message the connector hands to the session layer, recorded on its way (it still goes through). */
function recordDeliveries(b: DiscordBot): { key: SessionKey; message: InboundMessage }[] {
  const seen: { key: SessionKey; message: InboundMessage }[] = [];
  const manager = b.core.manager;
  const deliver = manager.deliver.bind(manager);
  manager.deliver = (key, message) => {
    seen.push({ key, message });
    return deliver(key, message);
  };
  return seen;
}

function source(b: DiscordBot): FileSource {
  const found = b.core.files.source('discord');
  if (!found) throw new Error('the Discord connector registered no file source');
  return found;
}

function sink(b: DiscordBot): FileSink {
  const found = b.core.files.sink('discord');
  if (!found) throw new Error('the Discord connector registered no file sink');
  return found;
}

async function bytesOf(file: IncomingFile, b: DiscordBot): Promise<Buffer> {
  const download = await source(b).open(file, new AbortController().signal);
  const chunks: Buffer[] = [];
  for await (const chunk of download.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function refusal(promise: Promise<unknown>): Promise<FileTransferError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(FileTransferError);
  return error as FileTransferError;
}

describe('files people share reach the session', () => {
  it('a mention with a PNG and a CSV is delivered with both as Discord files, which the source fetches byte for byte', async () => {
    bot = await bootDiscordBot();
    const seen = recordDeliveries(bot);
    bot.llm.replyText('Got them.');
    const asked = bot.fake.sendMessage({
      content: `${mention(DISCORD_IDS.botUserId)} what do these show?`,
      attachments: [
        { name: 'shot.png', data: PNG, contentType: 'image/png' },
        { name: 'temps.csv', data: CSV, contentType: 'text/csv' },
      ],
    });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Got them.'));
    await bot.idle();
    expect(seen).toHaveLength(1);
    const { message } = seen[0]!;
    expect(message.text).toBe('what do these show?');
    expect(message.attachments).toEqual([
      {
        platform: 'discord',
        id: asked.attachments[0]!.id,
        name: 'shot.png',
        url: asked.attachments[0]!.url,
        mimeType: 'image/png',
        size: PNG.length,
      },
      {
        platform: 'discord',
        id: asked.attachments[1]!.id,
        name: 'temps.csv',
        url: asked.attachments[1]!.url,
        mimeType: 'text/csv',
        size: CSV.length,
      },
    ]);
    expect(await bytesOf(message.attachments![0]!, bot)).toEqual(PNG);
    expect((await bytesOf(message.attachments![1]!, bot)).toString('utf8')).toBe(CSV);
  });

  it('a mention made only of a file is a message: delivered with no text, its thread named after the file', async () => {
    bot = await bootDiscordBot();
    const seen = recordDeliveries(bot);
    bot.llm.replyText('A screenshot, I see.');
    const asked = bot.fake.sendMessage({
      content: mention(DISCORD_IDS.botUserId),
      attachments: [{ name: 'error.png', data: PNG, contentType: 'image/png' }],
    });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('A screenshot'));
    await bot.idle();
    expect(seen.map((s) => [s.message.text, s.message.attachments?.map((a) => a.name)])).toEqual([['', ['error.png']]]);
    expect(bot.fake.rest.callsTo('POST /channels/:channel/messages/:message/threads')[0]).toMatchObject({
      body: { name: 'error.png' },
    });
  });

  it("a file alone in the bot's thread, without a mention, is delivered as the next message", async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('First answer.');
    const asked = bot.mention('first question');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('First answer.'));
    await bot.idle();
    const seen = recordDeliveries(bot);
    bot.llm.replyText('Second answer.');
    bot.fake.sendMessage({
      channelId: asked.id,
      content: '',
      attachments: [{ name: 'temps.csv', data: CSV, contentType: 'text/csv' }],
    });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Second answer.'));
    await bot.idle();
    expect(seen.map((s) => [s.key.thread, s.message.text, s.message.attachments?.map((a) => a.name)])).toEqual([
      [asked.id, '', ['temps.csv']],
    ]);
  });

  it("a forward into the bot's thread counts with the forwarded text and files", async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('First answer.');
    const asked = bot.mention('look at what I forward');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('First answer.'));
    await bot.idle();
    const original = bot.fake.sendMessage({
      content: `deploy failed at step 3, ${mention(ADA)}`,
      authorId: GRACE,
      attachments: [{ name: 'deploy.log', data: 'step 3: exit 1\n', contentType: 'text/plain' }],
    });
    const seen = recordDeliveries(bot);
    bot.llm.replyText('Step 3 failed.');
    bot.fake.forwardMessage({ messageId: original.id, channelId: asked.id });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Step 3 failed.'));
    await bot.idle();
    expect(seen).toHaveLength(1);
    // Mentions in the forwarded text read as names, as in a message's own text.
    expect(seen[0]!.message.text).toBe('[Forwarded message]\ndeploy failed at step 3, @Ada Lovelace');
    expect(seen[0]!.message.attachments).toEqual([
      expect.objectContaining({ platform: 'discord', name: 'deploy.log', url: original.attachments[0]!.url, size: 15 }),
    ]);
    const last = (bot.llm.requests.at(-1)!.body as { messages: { role: string; content?: unknown }[] }).messages.at(
      -1,
    )!;
    expect(JSON.stringify(last.content)).toContain('deploy failed at step 3');
  });

  it('a file from someone who may not use the bot, or in a thread the bot does not own, is never fetched nor delivered', async () => {
    bot = await bootDiscordBot({ env: { ALLOWED_USERS: ADA } });
    bot.llm.replyText('First answer.');
    const asked = bot.mention('first question');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('First answer.'));
    await bot.idle();
    const seen = recordDeliveries(bot);
    const bystander = bot.fake.sendMessage({
      channelId: asked.id,
      authorId: GRACE,
      content: 'mine too',
      attachments: [{ name: 'grace.png', data: PNG, contentType: 'image/png' }],
    });
    const elsewhere = bot.fake.sendMessage({
      channelId: DISCORD_IDS.seededThreadId,
      content: 'unrelated',
      attachments: [{ name: 'other.csv', data: CSV }],
    });
    // Grace is told privately that she may not use the bot: her message was judged, and refused.
    await waitFor(() =>
      bot!.fake.rest
        .callsTo('POST /users/@me/channels')
        .some((c) => (c.body as { recipient_id?: string }).recipient_id === GRACE),
    );
    await bot.idle();
    expect(seen).toEqual([]);
    expect(bot.fake.cdn.requestsFor(bystander.attachments[0]!.id)).toEqual([]);
    expect(bot.fake.cdn.requestsFor(elsewhere.attachments[0]!.id)).toEqual([]);
    expect(bot.llm.requests).toHaveLength(1);
  });
});

describe('a file past a cap', () => {
  it('is refused privately to the person who shared it, naming the setting, and never fetched; the words still go to the model', async () => {
    bot = await bootDiscordBot({ env: { MAX_FILE_BYTES: '10' } });
    bot.llm.replyText('Read your words.');
    const sent = bot.fake.sendMessage({
      content: `<@${DISCORD_IDS.botUserId}> summarise the rain`,
      attachments: [{ name: 'rain.csv', data: CSV }],
    });
    await waitFor(() =>
      bot!.fake.rest
        .callsTo('POST /channels/:channel/messages')
        .some((call) => JSON.stringify(call.body).includes('MAX_FILE_BYTES')),
    );
    await bot.idle();
    const whisper = bot.fake.rest
      .callsTo('POST /channels/:channel/messages')
      .find((call) => JSON.stringify(call.body).includes('MAX_FILE_BYTES'))!;
    expect(JSON.stringify(whisper.body)).toContain('rain.csv:');
    expect(bot.fake.cdn.requestsFor(sent.attachments[0]!.id)).toEqual([]);
    expect(JSON.stringify(bot.llm.requests[0]!.body)).toContain('summarise the rain');
  });
});

describe('the Discord file source', () => {
  it("fetches only from Discord's CDN or the configured API's host: any other URL is refused for good, and never requested", async () => {
    bot = await bootDiscordBot();
    const other = await new FakeDiscord().start();
    try {
      const elsewhere = other.sendMessage({ content: 'x', attachments: [{ name: 'a.png', data: PNG }] })
        .attachments[0]!;
      const base = { platform: 'discord', id: '1', name: 'shot.png' };
      const signal = new AbortController().signal;
      for (const url of [
        elsewhere.url,
        'https://evil.example/attachments/1/2/shot.png',
        'http://cdn.discordapp.com/attachments/1/2/shot.png',
        'https://cdn.discordapp.com.evil.example/a.png',
        'not a url',
      ]) {
        const refused = await refusal(source(bot).open({ ...base, url }, signal));
        expect(refused.retryable, url).toBe(false);
        expect(refused.message).toContain('shot.png');
        expect(refused.message).not.toContain('hm=');
      }
      expect(other.cdn.requests).toEqual([]);
    } finally {
      await other.stop();
    }
  });

  it('a 503 is worth a retry; an expired link is refreshed through the API and fetched; a redirect or a deleted file is a refusal for good; no error carries the signed URL', async () => {
    bot = await bootDiscordBot();
    const file = bot.fake.sendMessage({
      content: 'x',
      attachments: [{ name: 'data.csv', data: CSV, contentType: 'text/csv' }],
    }).attachments[0]!;
    const incoming: IncomingFile = { platform: 'discord', id: file.id, name: 'data.csv', url: file.url };
    bot.fake.cdn.failNext({ status: 503 });
    const busy = await refusal(source(bot).open(incoming, new AbortController().signal));
    expect(busy).toMatchObject({ retryable: true, message: 'Could not download data.csv from Discord: HTTP 503.' });

    // A day later the link no longer works: the source asks Discord for a fresh one, with the bot's token.
    bot.fake.cdn.expireLinks(file.id);
    expect((await fetch(file.url)).status).toBe(404);
    expect((await bytesOf(incoming, bot)).toString('utf8')).toBe(CSV);
    const refresh = bot.fake.rest.callsTo('POST /attachments/refresh-urls');
    expect(refresh).toHaveLength(1);
    expect(refresh[0]).toMatchObject({
      status: 200,
      body: { attachment_urls: [file.url] },
      headers: { authorization: `Bot ${bot.fake.token}` },
    });
    expect(bot.fake.cdn.requestsFor(file.id).map((r) => r.status)).toEqual([503, 404, 404, 200]);

    // A redirect is never followed: it could lead anywhere.
    bot.fake.cdn.failNext({ status: 302, location: 'https://evil.example/data.csv' });
    const redirected = await refusal(source(bot).open(incoming, new AbortController().signal));
    expect(redirected).toMatchObject({
      retryable: false,
      message: 'Discord sent data.csv elsewhere (HTTP 302); the bot follows no redirect for a file.',
    });

    const deleted = await refusal(
      source(bot).open({ ...incoming, url: file.url.replace(file.id, '1234') }, new AbortController().signal),
    );
    expect(deleted).toMatchObject({
      retryable: false,
      message: 'Could not download data.csv from Discord: the file was deleted or its link expired.',
    });
    const download = await source(bot).open(incoming, new AbortController().signal);
    expect(download).toMatchObject({ contentType: 'text/csv', size: CSV.length });
    await (download.body as ReadableStream).cancel();
  });
});

describe('the Discord file sink', () => {
  async function threadOf(b: DiscordBot): Promise<SessionKey> {
    b.llm.replyText('Ready.');
    const asked = b.mention('make me a file');
    await waitForBotMessage(b, asked.id, (m) => m.content.includes('Ready.'));
    await b.idle();
    return { platform: 'discord', workspace: DISCORD_IDS.guildId, channel: GENERAL, thread: asked.id };
  }

  it('posts the file into the thread with its comment, pinging nobody; Discord records the exact bytes', async () => {
    bot = await bootDiscordBot();
    const thread = await threadOf(bot);
    const path = join(bot.dir, 'chart.png');
    await writeFile(path, PNG);
    const posted = await sink(bot).post(
      thread,
      { path, name: 'chart.png', mimeType: 'image/png', size: PNG.length, comment: `The chart, <@${GRACE}> @everyone` },
      new AbortController().signal,
    );
    const upload = bot.fake.rest.callsTo('POST /channels/:channel/messages').at(-1)!;
    expect(upload.params.channel).toBe(thread.thread);
    expect(upload.files).toMatchObject([{ filename: 'chart.png', size: PNG.length, contentType: 'image/png' }]);
    expect(upload.files[0]!.bytes).toEqual(PNG);
    expect((upload.body as { allowed_mentions?: unknown }).allowed_mentions).toMatchObject({ parse: [] });
    const message = bot.fake.thread(thread.thread).at(-1)!;
    expect(message).toMatchObject({
      mentions: [],
      mention_everyone: false,
      attachments: [expect.objectContaining({ filename: 'chart.png' })],
    });
    expect(message.content).toContain('The chart');
    expect(posted.link).toBe(`https://discord.com/channels/${DISCORD_IDS.guildId}/${thread.thread}/${message.id}`);
  });

  it("refuses a file over the server's upload limit before any upload, naming its size and the limit; the limit follows the boost tier", async () => {
    const fake = await new FakeDiscord().start();
    try {
      bot = await bootDiscordBot({ fake });
      const thread = await threadOf(bot);
      expect(await sink(bot).maxBytes!(thread)).toBe(10 * 1024 * 1024);
      const path = join(bot.dir, 'big.bin');
      const handle = await open(path, 'w');
      await handle.truncate(10 * 1024 * 1024 + 512 * 1024);
      await handle.close();
      const uploadsBefore = bot.fake.rest
        .callsTo('POST /channels/:channel/messages')
        .filter((c) => c.files.length > 0).length;
      const refused = await refusal(
        sink(bot).post(
          thread,
          { path, name: 'big.bin', mimeType: 'application/octet-stream', size: 10 * 1024 * 1024 + 512 * 1024 },
          new AbortController().signal,
        ),
      );
      expect(refused).toMatchObject({
        retryable: false,
        message: "big.bin is 10.5 MB, over this Discord server's upload limit of 10 MB; it was not posted.",
      });
      expect(bot.fake.rest.callsTo('POST /channels/:channel/messages').filter((c) => c.files.length > 0)).toHaveLength(
        uploadsBefore,
      );
      await bot.stop();

      // A server boosted to tier 2 takes 50 MiB, read from the server the bot is told of.
      fake.guild.premiumTier = 2;
      bot = await bootDiscordBot({ fake });
      expect(await sink(bot).maxBytes!(thread)).toBe(50 * 1024 * 1024);
      // An interaction's attachment_size_limit, once seen there, is Discord's own word for the server.
      fake.rest.uploadLimitBytes = 8 * 1024 * 1024;
      const status = fake.runSlashCommand({ name: 'status', channelId: thread.thread });
      await fake.rest.waitForCall(
        'POST /interactions/:interaction/:token/callback',
        (c) => c.params.interaction === status.id,
      );
      expect(await sink(bot).maxBytes!(thread)).toBe(8 * 1024 * 1024);
    } finally {
      await bot?.stop();
      bot = undefined;
      await fake.stop();
    }
  });

  it('a file Discord itself refuses as too large (413, 40005) is a clear refusal that names the file, not a crash', async () => {
    bot = await bootDiscordBot();
    const thread = await threadOf(bot);
    bot.fake.rest.uploadLimitBytes = 16;
    const path = join(bot.dir, 'notes.txt');
    await writeFile(path, 'more than sixteen bytes of notes\n');
    const refused = await refusal(
      sink(bot).post(
        thread,
        { path, name: 'notes.txt', mimeType: 'text/plain', size: 33 },
        new AbortController().signal,
      ),
    );
    expect(refused).toMatchObject({
      retryable: false,
      message: "Discord refused notes.txt (33 bytes) as larger than this server's upload limit; it was not posted.",
    });
  });
});
