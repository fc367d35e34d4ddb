// Files on Discord through the whole bot: the real discord.js client against the fake Discord
// (its CDN serving what people attach, its REST taking uploads), the real core with its files
// room, and the real OpenAI SDK against the fake model. A mention with a PNG and a CSV puts both
// under the conversation's uploads/ and the PNG in the model's request as an image part; a
// forward brings its file; attach_file posts into the thread once approved, or is refused with
// the file's size and the server's limit.
import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionKey } from '../../src/store/session-store.js';
import { threadFolder } from '../support/conversation-folders.js';
import { waitFor } from '../support/engine-kit.js';
import { TINY_PNG } from '../support/file-host.js';
import {
  botMessages,
  bootDiscordBot,
  buttonsOf,
  DISCORD_IDS,
  mention,
  waitForBotMessage,
  type DiscordBot,
} from './discord-harness.js';

const GENERAL = DISCORD_IDS.generalChannelId;
const CSV = 'city,temp\nOslo,3\nLima,19\n';

let bot: DiscordBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

type Part = { type: string; text?: string; image_url?: { url: string } };

/** The parts of the user messages of the model's request number `index`. */
function userParts(b: DiscordBot, index: number): Part[] {
  return b.llm.bodies[index]!.messages.filter((m) => m.role === 'user').flatMap((m) =>
    typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Part[]),
  );
}

function keyOf(threadId: string): SessionKey {
  return { platform: 'discord', workspace: DISCORD_IDS.guildId, channel: GENERAL, thread: threadId };
}

function uploadsOf(b: DiscordBot, threadId: string): string {
  return join(threadFolder(join(b.dir, 'workspace'), keyOf(threadId)), 'uploads');
}

describe('files people share, through the bot', () => {
  it('a mention with a PNG and a CSV: both land in uploads/, each fetched once from the CDN, and the PNG reaches the model as an image part', async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('A screenshot and a table of temperatures.');
    const asked = bot.fake.sendMessage({
      content: `${mention(DISCORD_IDS.botUserId)} what do these show?`,
      attachments: [
        { name: 'screen shot.png', data: TINY_PNG, contentType: 'image/png' },
        { name: 'temps.csv', data: CSV, contentType: 'text/csv' },
      ],
    });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('A screenshot and a table'));
    await bot.idle();

    const uploads = uploadsOf(bot, asked.id);
    expect(await readFile(join(uploads, 'screen shot.png'))).toEqual(TINY_PNG);
    expect(await readFile(join(uploads, 'temps.csv'), 'utf8')).toBe(CSV);
    for (const attachment of asked.attachments)
      expect(bot.fake.cdn.requestsFor(attachment.id).map((r) => r.status)).toEqual([200]);

    const parts = userParts(bot, 0);
    expect(parts.find((part) => part.type === 'image_url')?.image_url?.url).toBe(
      `data:image/png;base64,${TINY_PNG.toString('base64')}`,
    );
    const text = parts.flatMap((part) => (part.text ? [part.text] : [])).join('\n');
    expect(text).toContain('what do these show?');
    expect(text).toContain('uploads/screen shot.png');
    expect(text).toContain('uploads/temps.csv');
  });

  it("a file alone, then a forward with a file, in the bot's thread: each is saved and told to the model", async () => {
    bot = await bootDiscordBot();
    bot.llm.replyText('An error screenshot.');
    const asked = bot.fake.sendMessage({
      content: mention(DISCORD_IDS.botUserId),
      attachments: [{ name: 'error.png', data: TINY_PNG, contentType: 'image/png' }],
    });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('An error screenshot.'));
    await bot.idle();
    expect(userParts(bot, 0).some((part) => part.type === 'image_url')).toBe(true);

    const original = bot.fake.sendMessage({
      content: 'the deploy log',
      authorId: DISCORD_IDS.otherHumanUserId,
      attachments: [{ name: 'deploy.log', data: 'step 3: exit 1\n', contentType: 'text/plain' }],
    });
    bot.llm.replyText('Step 3 failed.');
    bot.fake.forwardMessage({ messageId: original.id, channelId: asked.id });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Step 3 failed.'));
    await bot.idle();
    expect(await readFile(join(uploadsOf(bot, asked.id), 'deploy.log'), 'utf8')).toBe('step 3: exit 1\n');
    const text = userParts(bot, 1)
      .flatMap((part) => (part.text ? [part.text] : []))
      .join('\n');
    expect(text).toContain('[Forwarded message]\nthe deploy log');
    expect(text).toContain('uploads/deploy.log');
  });
});

describe('a file shared while the bot works', () => {
  it("steers the running turn: the model's next request has the image, and its file is in uploads/", async () => {
    bot = await bootDiscordBot();
    const held = bot.llm.replyTextHeld('Working on the first part, to the end.');
    bot.llm.replyText('Now I see your screenshot too.');
    const asked = bot.mention('look into the build');
    await waitForBotMessage(bot, asked.id, (m) => m.content.length > 0);
    const steer = bot.fake.sendMessage({
      channelId: asked.id,
      content: 'and this',
      attachments: [{ name: 'later.png', data: TINY_PNG, contentType: 'image/png' }],
    });
    await waitFor(() => bot!.fake.guild.reactors(steer.id, { id: null, name: '👀' }).length === 1);
    held.release();
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Now I see your screenshot too.'));
    await bot.idle();
    expect(bot.llm.bodies).toHaveLength(2);
    expect(userParts(bot, 0).some((part) => part.type === 'image_url')).toBe(false);
    expect(userParts(bot, 1).some((part) => part.type === 'image_url')).toBe(true);
    expect(await readFile(join(uploadsOf(bot, asked.id), 'later.png'))).toEqual(TINY_PNG);
  });
});

describe('attach_file on Discord, through the bot', () => {
  /** A first turn in a new thread; then the model asks to attach `args`, and the card waits. */
  async function askToAttach(
    b: DiscordBot,
    setup: (folder: string) => Promise<void>,
    args: Record<string, unknown>,
  ): Promise<{ threadId: string }> {
    b.llm.replyText('Ready.');
    const asked = b.mention('make me a file');
    await waitForBotMessage(b, asked.id, (m) => m.content.includes('Ready.'));
    await b.idle();
    await setup(threadFolder(join(b.dir, 'workspace'), keyOf(asked.id)));
    b.llm.replyToolCalls([{ name: 'attach_file', arguments: args }]).replyText('Posted it.');
    b.fake.sendMessage({ channelId: asked.id, content: 'send it as a file' });
    const card = await waitForBotMessage(b, asked.id, (m) => buttonsOf(m).some((button) => button.label === 'Approve'));
    b.fake.clickButton({
      channelId: asked.id,
      messageId: card.id,
      customId: buttonsOf(card).find((button) => button.label === 'Approve')!.customId,
    });
    await waitForBotMessage(b, asked.id, (m) => m.content.includes('Posted it.'));
    await b.idle();
    return { threadId: asked.id };
  }

  it('posts the approved file into the thread with its comment, pinging nobody; the model gets the link', async () => {
    bot = await bootDiscordBot({ env: { PERMISSION_MODE: 'interactive' } });
    const { threadId } = await askToAttach(bot, (folder) => writeFile(join(folder, 'cleaned.csv'), CSV), {
      path: 'cleaned.csv',
      comment: `The cleaned data, ${mention(DISCORD_IDS.otherHumanUserId)}`,
    });
    const upload = bot.fake.rest
      .callsTo('POST /channels/:channel/messages')
      .find((call) => call.files.some((file) => file.filename === 'cleaned.csv'))!;
    expect(upload.params.channel).toBe(threadId);
    expect(upload.files[0]!.bytes.toString('utf8')).toBe(CSV);
    expect((upload.body as { allowed_mentions?: unknown }).allowed_mentions).toMatchObject({ parse: [] });
    const posted = botMessages(bot, threadId).find((m) => m.attachments.some((a) => a.filename === 'cleaned.csv'))!;
    expect(posted.content).toContain('The cleaned data');
    expect(posted.mentions).toEqual([]);
    const toolResult = JSON.stringify(bot.llm.bodies.at(-1)!.messages.find((m) => m.role === 'tool'));
    expect(toolResult).toContain(`https://discord.com/channels/${DISCORD_IDS.guildId}/${threadId}/${posted.id}`);
  });

  it("a file over the server's upload limit is refused with its size and the limit, and nothing is uploaded", async () => {
    bot = await bootDiscordBot({ env: { PERMISSION_MODE: 'interactive' } });
    const size = 10 * 1024 * 1024 + 512 * 1024;
    const { threadId } = await askToAttach(
      bot,
      async (folder) => {
        const handle = await open(join(folder, 'big.bin'), 'w');
        await handle.truncate(size);
        await handle.close();
      },
      { path: 'big.bin' },
    );
    expect(
      bot.fake.rest
        .callsTo('POST /channels/:channel/messages')
        .filter((call) => call.files.some((file) => file.filename === 'big.bin')),
    ).toEqual([]);
    const toolResult = JSON.stringify(bot.llm.bodies.at(-1)!.messages.find((m) => m.role === 'tool'));
    expect(toolResult).toContain('big.bin is 10.5 MB, over the 10 MB this discord thread accepts');
    expect(botMessages(bot, threadId).some((m) => m.attachments.length > 0)).toBe(false);
  });
});
