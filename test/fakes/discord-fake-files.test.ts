// Self-tests of the fake Discord's files, with the REAL discord.js 14 client: a person's message
// carries attachments whose URLs the fake's CDN serves (signed, as Discord's are), a forward
// carries `message_snapshots` with the forwarded text and files (what discord.js exposes as
// `message.messageSnapshots`), and an upload is recorded byte for byte, or refused with 413 /
// 40005 when a file is over the upload limit.
import { once } from 'node:events';
import { Client, DiscordAPIError, Events, MessageReferenceType, type ClientEvents, type TextChannel } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { INTENTS, PARTIALS } from '../../connectors/discord/discord-connector.js';
import { DISCORD_IDS } from './discord-payloads.js';
import { FakeDiscord, type FakeDiscordOptions } from './discord-server.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function start(options: FakeDiscordOptions = {}): Promise<{ fake: FakeDiscord; client: Client<true> }> {
  const fake = await new FakeDiscord(options).start();
  cleanups.push(() => fake.stop());
  const client = new Client({ intents: INTENTS, partials: PARTIALS, ...fake.clientOptions() });
  cleanups.push(() => client.destroy());
  const ready = once(client, Events.ClientReady);
  await client.login(fake.token);
  await ready;
  return { fake, client: client as Client<true> };
}

type Created = ClientEvents['messageCreate'][0];

function nextMessage(client: Client, predicate: (message: Created) => boolean = () => true): Promise<Created> {
  return new Promise((resolve) => {
    const listener = (message: Created): void => {
      if (!predicate(message)) return;
      client.off(Events.MessageCreate, listener);
      resolve(message);
    };
    client.on(Events.MessageCreate, listener);
  });
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

describe('files people share', () => {
  it('a message with attachments arrives with their names, sizes, types and CDN URLs, which serve the bytes; a tampered URL is 404', async () => {
    const { fake, client } = await start();
    const received = nextMessage(client);
    const sent = fake.sendMessage({
      content: '',
      attachments: [
        { name: 'shot.png', data: PNG, contentType: 'image/png' },
        { name: 'data.csv', data: 'a,b\n1,2\n', contentType: 'text/csv' },
      ],
    });
    const message = await received;
    expect(message.content).toBe('');
    const [png, csv] = [...message.attachments.values()];
    expect(png).toMatchObject({
      id: sent.attachments[0]!.id,
      name: 'shot.png',
      size: PNG.length,
      contentType: 'image/png',
    });
    expect(csv).toMatchObject({ name: 'data.csv', size: 8, contentType: 'text/csv' });
    expect(new URL(png!.url).origin).toBe(`http://127.0.0.1:${fake.port}`);

    const answer = await fetch(png!.url);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await answer.arrayBuffer())).toEqual(PNG);
    expect(await (await fetch(csv!.url)).text()).toBe('a,b\n1,2\n');
    expect((await fetch(png!.url.replace(/hm=[0-9a-f]+/, 'hm=00'))).status).toBe(404);
    expect(fake.cdn.requestsFor(png!.id).map((r) => r.status)).toEqual([200, 404]);
  });

  it('the CDN can fail the next requests: a 503, then the file', async () => {
    const { fake } = await start();
    const sent = fake.sendMessage({ content: 'x', attachments: [{ name: 'a.txt', data: 'hello' }] });
    fake.cdn.failNext({ status: 503 });
    const url = sent.attachments[0]!.url;
    expect((await fetch(url)).status).toBe(503);
    expect(await (await fetch(url)).text()).toBe('hello');
  });

  it('a forward arrives with empty content, a FORWARD reference and the original text and files as a message snapshot', async () => {
    const { fake, client } = await start();
    const original = fake.sendMessage({
      content: 'the deploy log',
      authorId: DISCORD_IDS.otherHumanUserId,
      attachments: [{ name: 'deploy.log', data: 'ok\n', contentType: 'text/plain' }],
    });
    const received = nextMessage(client, (m) => m.id !== original.id);
    const forward = fake.forwardMessage({ messageId: original.id, channelId: DISCORD_IDS.seededThreadId });
    const message = await received;
    expect(message.id).toBe(forward.id);
    expect(message.content).toBe('');
    expect(message.reference).toMatchObject({
      type: MessageReferenceType.Forward,
      messageId: original.id,
      channelId: DISCORD_IDS.generalChannelId,
    });
    const snapshot = message.messageSnapshots.first()!;
    expect(snapshot.content).toBe('the deploy log');
    expect([...snapshot.attachments.values()].map((a) => [a.name, a.url])).toEqual([
      ['deploy.log', original.attachments[0]!.url],
    ]);
  });
});

describe('files the bot uploads', () => {
  it('records the bytes and names of a multipart upload', async () => {
    const { fake, client } = await start();
    const channel = (await client.channels.fetch(DISCORD_IDS.generalChannelId)) as TextChannel;
    const posted = await channel.send({ content: 'here', files: [{ attachment: PNG, name: 'out.png' }] });
    const upload = fake.rest.callsTo('POST /channels/:channel/messages').at(-1)!;
    expect(upload.files).toMatchObject([{ field: 'files[0]', filename: 'out.png', size: PNG.length }]);
    expect(upload.files[0]!.bytes).toEqual(PNG);
    expect(posted.attachments.first()?.name).toBe('out.png');
  });

  it('a file over the upload limit is refused with 413 and code 40005, and nothing is posted; the limit follows the boost tier unless a test sets it', async () => {
    const { fake, client } = await start({ uploadLimitBytes: 10 });
    const channel = (await client.channels.fetch(DISCORD_IDS.generalChannelId)) as TextChannel;
    const before = fake.thread(DISCORD_IDS.generalChannelId).length;
    const refused = await channel
      .send({ files: [{ attachment: Buffer.alloc(11), name: 'big.bin' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DiscordAPIError);
    expect(refused).toMatchObject({ status: 413, code: 40005, message: 'Request entity too large' });
    expect(fake.thread(DISCORD_IDS.generalChannelId)).toHaveLength(before);
    await channel.send({ files: [{ attachment: Buffer.alloc(10), name: 'fits.bin' }] });

    fake.rest.uploadLimitBytes = undefined;
    expect(fake.rest.uploadLimit).toBe(10 * 1024 * 1024);
    fake.guild.premiumTier = 2;
    expect(fake.rest.uploadLimit).toBe(50 * 1024 * 1024);
    fake.guild.premiumTier = 3;
    expect(fake.rest.uploadLimit).toBe(100 * 1024 * 1024);
    const guild = await client.guilds.fetch({ guild: DISCORD_IDS.guildId, force: true });
    expect(guild.premiumTier).toBe(3);
  });
});
