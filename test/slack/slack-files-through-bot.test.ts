// Files through the whole bot on Slack: the real Bolt app, the real core with its files room,
// the real OpenAI and Anthropic SDKs against their fakes, and the fake Slack serving the files
// and taking uploads. Each scenario is what a person does in a thread: drop a screenshot and a
// CSV with a question, drop a file while the bot waits for an approval, share a file from
// outside the allowed list, run the bot with a token Slack does not accept for files, and ask
// for a file back.
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const CAROL = 'U0HUMAN003';
/** A real 1×1 PNG (decodable: the files room may re-encode images). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const CSV = 'city,rain_mm\nBergen,2250\nCairo,18\n';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function boot(options: Parameters<typeof bootSlackBot>[0] = {}): Promise<SlackBot> {
  const bot = await bootSlackBot(options);
  cleanups.push(() => bot.stop());
  return bot;
}

const uploads = (bot: SlackBot) => inOnlyConversation(join(bot.dir, 'workspace'), 'uploads');
const bodyText = (body: unknown) => JSON.stringify(body);

describe('a mention with a screenshot and a CSV', () => {
  it('on OpenAI: both land in uploads/, and the PNG goes to the model as an image_url data URL with the CSV named', async () => {
    const bot = await boot();
    bot.llm.replyText('The chart is empty and Bergen is wet.');
    const shot = bot.slack.files.add({ bytes: PNG, name: 'error.png', mimetype: 'image/png' });
    const csv = bot.slack.files.add({ bytes: CSV, name: 'rain.csv', mimetype: 'text/csv' });
    await bot.mention('what is wrong here?', { files: [shot, csv] });
    await waitFor(() => bot.llm.requests.length === 1, 10_000);
    await bot.idle();

    expect((await readFile(join(uploads(bot), 'error.png'))).equals(PNG)).toBe(true);
    expect(await readFile(join(uploads(bot), 'rain.csv'), 'utf8')).toBe(CSV);
    // Fetched with the bot token, once each.
    expect(bot.slack.files.downloads.map((d) => [d.fileId, d.served])).toEqual([
      [shot.id, 'file'],
      [csv.id, 'file'],
    ]);
    const user = (bot.llm.requests[0]!.body as { messages: { role: string; content: unknown }[] }).messages.find(
      (m) => m.role === 'user',
    )!;
    expect(user.content).toEqual(
      expect.arrayContaining([
        {
          type: 'image_url',
          image_url: expect.objectContaining({ url: `data:image/png;base64,${PNG.toString('base64')}` }),
        },
        expect.objectContaining({
          type: 'text',
          text: expect.stringMatching(/what is wrong here\?[\s\S]*uploads\/rain\.csv/),
        }),
      ]),
    );
  });

  it('on Anthropic: the PNG goes as an image block', async () => {
    const anthropic = await new FakeAnthropic().start();
    cleanups.push(() => anthropic.stop());
    const bot = await boot({
      env: {
        MODEL: 'anthropic:claude-sonnet-4-6',
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: anthropic.baseURL,
      },
    });
    anthropic.replyText('An empty chart.');
    const shot = bot.slack.files.add({ bytes: PNG, name: 'error.png', mimetype: 'image/png' });
    const csv = bot.slack.files.add({ bytes: CSV, name: 'rain.csv', mimetype: 'text/csv' });
    await bot.mention('what is wrong here?', { files: [shot, csv] });
    await waitFor(() => anthropic.requests.length === 1, 10_000);
    await bot.idle();

    expect(await readdir(uploads(bot))).toEqual(expect.arrayContaining(['error.png', 'rain.csv']));
    const user = (anthropic.requests[0]!.body as { messages: { role: string; content: unknown }[] }).messages.find(
      (m) => m.role === 'user',
    )!;
    expect(user.content).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') },
        }),
      ]),
    );
    expect(bodyText(user.content)).toContain('uploads/rain.csv');
  });
});

describe('files shared while the bot works', () => {
  it('a screenshot dropped with no words while an approval waits steers the turn: the next model request sees it', async () => {
    const bot = await boot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes.txt', content: 'draft' } }]);
    bot.llm.replyText('I see the screenshot; not writing the notes.');
    const root = await bot.mention('write my notes');
    await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));

    const shot = bot.slack.files.add({ bytes: PNG, name: 'instead.png', mimetype: 'image/png' });
    await bot.reply(root, '', { files: [shot] });
    await waitFor(() => bot.llm.requests.length === 2, 10_000);
    await bot.idle();
    const second = bodyText(bot.llm.requests[1]!.body);
    expect(second).toContain(`data:image/png;base64,${PNG.toString('base64')}`);
    expect(second).toContain('uploads/instead.png');
    expect((await readFile(join(uploads(bot), 'instead.png'))).equals(PNG)).toBe(true);
  });

  it('a file from someone not on ALLOWED_USERS, in a thread the bot works in, is never downloaded', async () => {
    const bot = await boot({ env: { ALLOWED_USERS: ADA } });
    bot.llm.replyText('Hello Ada.');
    const root = await bot.mention('hi');
    await waitFor(() => bot.llm.requests.length === 1);
    await bot.idle();

    const theirs = bot.slack.files.add({ bytes: CSV, name: 'payload.csv', mimetype: 'text/csv', user: CAROL });
    await bot.reply(root, 'read this', { user: CAROL, files: [theirs] });
    await waitFor(() => bot.slack.ephemerals(C).some((e) => e.user === CAROL));
    await bot.idle();
    expect(bot.slack.files.downloads).toEqual([]);
    expect(bot.llm.requests).toHaveLength(1);
  });
});

describe('a file past a cap', () => {
  it('is refused to the person who shared it, privately, naming the setting, and never downloaded; the words still reach the model', async () => {
    const bot = await boot({ env: { MAX_FILE_BYTES: '10' } });
    bot.llm.replyText('Read your words.');
    const big = bot.slack.files.add({ bytes: CSV, name: 'rain.csv', mimetype: 'text/csv' });
    await bot.mention('summarise the rain', { files: [big] });
    await waitFor(() => bot.slack.ephemerals(C).some((e) => e.user === ADA));
    await bot.idle();
    const whisper = bot.slack.ephemerals(C).find((e) => e.user === ADA)!;
    expect(whisper.text).toContain('rain.csv: 34 bytes is over the 10 bytes one file may be (MAX_FILE_BYTES)');
    expect(bot.slack.files.downloads).toEqual([]);
    expect(bodyText(bot.llm.requests[0]!.body)).toContain('summarise the rain');
    expect(bodyText(bot.llm.requests[0]!.body)).not.toContain('rain.csv');
  });
});

describe('a token Slack does not accept for files', () => {
  it('the sign-in page Slack answers is not saved: the thread gets a clear note and the model is told the file did not come through', async () => {
    // The app was installed before files:read was added to it: Slack serves its sign-in page.
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    slack.revokeScope('files:read');
    const bot = await boot({ slack });
    bot.llm.replyText('I could not open the file.');
    const csv = slack.files.add({ bytes: CSV, name: 'rain.csv', mimetype: 'text/csv' });
    const root = await bot.mention('summarise this', { files: [csv] });
    await waitFor(() => bot.llm.requests.length === 1, 10_000);
    await bot.idle();

    expect(slack.files.downloadsOf(csv.id).map((d) => d.served)).toEqual(['sign-in page']);
    const note = slack
      .thread(C, root)
      .find((m) => m.user === SLACK_IDS.botUserId && m.text.includes('did not reach the model'));
    expect(note?.text).toMatch(/rain\.csv[\s\S]*sign-in page[\s\S]*files:read/);
    expect(note?.text).not.toContain('xoxb-');
    const saved = await readdir(uploads(bot)).catch(() => [] as string[]);
    expect(saved.filter((name) => !name.startsWith('.'))).toEqual([]);
    expect(bodyText(bot.llm.requests[0]!.body)).toMatch(
      /rain\.csv[^"]*did not come through|did not come through[\s\S]*rain\.csv/,
    );
  });
});

describe('where the bot token may go', () => {
  it("a file whose URL names another port of the fake's host is never fetched (the note says why); the one on the configured SLACK_API_URL origin is", async () => {
    const bot = await boot();
    // A local server that records every request, on another port of 127.0.0.1: it is neither
    // a Slack file host nor the configured API origin (same host, another port).
    const seen: (string | undefined)[] = [];
    const recorder: Server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'text/csv' }).end(CSV);
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => recorder.close(resolve)));
    const elsewhere = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/files-pri/T1-F1/leak.csv`;

    bot.llm.replyText('I read one of the two.');
    const kept = bot.slack.files.add({ bytes: CSV, name: 'rain.csv', mimetype: 'text/csv' });
    const lured = {
      ...bot.slack.files.add({ bytes: CSV, name: 'leak.csv', mimetype: 'text/csv' }),
      url_private: elsewhere,
      url_private_download: elsewhere,
    };
    const root = await bot.mention('summarise these', { files: [kept, lured] });
    await waitFor(() => bot.llm.requests.length === 1, 10_000);
    await bot.idle();

    expect(seen).toEqual([]);
    expect(bot.slack.files.downloads.map((d) => [d.fileId, d.authorized])).toEqual([[kept.id, true]]);
    const note = bot.slack
      .thread(C, root)
      .find((m) => m.user === SLACK_IDS.botUserId && m.text.includes('did not reach the model'));
    expect(note?.text).toMatch(/leak\.csv[\s\S]*not on a Slack file host \(it points to 127\.0\.0\.1\)/);
    expect(await readFile(join(uploads(bot), 'rain.csv'), 'utf8')).toBe(CSV);
  });
});

describe('attach_file on Slack', () => {
  it('posts the file into the thread with files.uploadV2: channel_id, thread_ts, the comment and the bytes', async () => {
    const bot = await boot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'out/clean.csv', content: CSV } }]);
    bot.llm.replyToolCalls([
      { name: 'attach_file', arguments: { path: 'out/clean.csv', comment: 'The cleaned data' } },
    ]);
    bot.llm.replyText('Posted.');
    const root = await bot.mention('clean the data and give me the file');
    const write = await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    await bot.click(write.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    const attach = await waitForCard(bot, root, 'attach_file', (text) => text.includes(PROMPT_ACTION));
    expect(JSON.stringify(attach.blocks)).toContain('clean.csv');
    await bot.click(attach.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => bot.llm.requests.length === 3, 10_000);
    await bot.idle();

    const [upload] = bot.slack.files.uploads;
    expect(upload).toMatchObject({
      filename: 'clean.csv',
      completed: { channelId: C, threadTs: root, initialComment: 'The cleaned data' },
    });
    expect(upload!.bytes!.toString()).toBe(CSV);
    expect(
      bot.slack.thread(C, root).some((m) => m.user === SLACK_IDS.botUserId && m.files?.[0]?.name === 'clean.csv'),
    ).toBe(true);
  });
});
