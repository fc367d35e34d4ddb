// Self-tests of FakeSlack's files: the real WebClient's files.uploadV2 and plain fetch against
// the fake, as the Slack connector's file source and sink use them. They pin down what the
// connector relies on: a file URL answers the bytes only to the bot token, and anything else
// (no token, another token, an app without files:read) gets Slack's 200 HTML sign-in page;
// files.uploadV2 (web-api 8.2) posts its bytes to whatever upload_url the API returned, even
// one on 127.0.0.1, and completes with channel_id, thread_ts and initial_comment.
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { SIGN_IN_PAGE } from './slack-files.js';
import { appMention, SLACK_IDS, threadMessage } from './slack-payloads.js';
import { FakeSlack } from './slack-server.js';

const TOKEN = 'xoxb-test';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

async function get(url: string, token?: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const response = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

describe('FakeSlack serves shared files only to the bot token', () => {
  it('url_private_download answers the bytes with the bot token, and the sign-in page (200, HTML) without it', async () => {
    fake = await new FakeSlack().start();
    const file = fake.files.add({ bytes: PNG, name: 'shot.png', mimetype: 'image/png' });
    expect(file).toMatchObject({ name: 'shot.png', mimetype: 'image/png', size: PNG.length, mode: 'hosted' });
    expect(new URL(file.url_private_download!).origin).toBe(fake.origin);

    const withToken = await get(file.url_private_download!, TOKEN);
    expect(withToken).toMatchObject({ status: 200, type: 'image/png' });
    expect(withToken.body.equals(PNG)).toBe(true);

    const without = await get(file.url_private_download!);
    expect(without.status).toBe(200);
    expect(without.type).toMatch(/^text\/html/);
    expect(without.body.toString()).toBe(SIGN_IN_PAGE);
    expect(fake.files.downloadsOf(file.id).map((d) => [d.served, d.hadToken])).toEqual([
      ['file', true],
      ['sign-in page', false],
    ]);
  });

  it("another token than the bot's, or an app without files:read, gets the sign-in page too", async () => {
    fake = await new FakeSlack({ botToken: TOKEN }).start();
    const file = fake.files.add({ bytes: 'a,b\n1,2\n', name: 'data.csv', mimetype: 'text/csv' });
    expect((await get(file.url_private_download!, 'xoxb-someone-else')).body.toString()).toBe(SIGN_IN_PAGE);
    expect((await get(file.url_private_download!, TOKEN)).body.toString()).toBe('a,b\n1,2\n');
    fake.revokeScope('files:read');
    expect((await get(file.url_private_download!, TOKEN)).body.toString()).toBe(SIGN_IN_PAGE);
    expect(fake.files.downloadsOf(file.id).map((d) => d.authorized)).toEqual([false, true, false]);
  });

  it('a Slack Connect file comes as an id to look up with files.info; a scripted failure answers once', async () => {
    fake = await new FakeSlack().start();
    const file = fake.files.add({
      bytes: 'x',
      name: 'notes.txt',
      mimetype: 'text/plain',
      fileAccess: 'check_file_info',
    });
    expect(file).toEqual({
      id: file.id,
      file_access: 'check_file_info',
      created: expect.any(Number),
      timestamp: expect.any(Number),
      user: SLACK_IDS.humanUserId,
    });
    const client = new webApi.WebClient(TOKEN, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const info = await client.files.info({ file: file.id });
    expect(info.file).toMatchObject({
      id: file.id,
      name: 'notes.txt',
      url_private_download: expect.stringContaining(fake.origin),
    });

    fake.failNext('url_private_download', { status: 503 });
    expect((await get(info.file!.url_private_download!, TOKEN)).status).toBe(503);
    expect((await get(info.file!.url_private_download!, TOKEN)).body.toString()).toBe('x');
  });

  it('events carry the files: a mention with files, and a thread reply that is a file_share with empty text', async () => {
    fake = await new FakeSlack().start();
    const file = fake.files.add({ bytes: PNG, name: 'shot.png', mimetype: 'image/png' });
    expect(appMention({ text: 'look', files: [file] })).toMatchObject({
      type: 'app_mention',
      files: [{ id: file.id }],
    });
    expect(threadMessage({ text: '', threadTs: '1795974906.000001', files: [file] })).toMatchObject({
      type: 'message',
      subtype: 'file_share',
      text: '',
      files: [{ id: file.id }],
    });
  });
});

describe('FakeSlack takes files.uploadV2 as Slack does', () => {
  it('getUploadURLExternal → the upload URL on the fake → completeUploadExternal posts the file into the thread', async () => {
    fake = await new FakeSlack().start();
    const client = new webApi.WebClient(TOKEN, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const root = fake.addMessage({ channel: SLACK_IDS.channelId, text: 'make me a file' });
    const result = await client.files.uploadV2({
      channel_id: SLACK_IDS.channelId,
      thread_ts: root.ts,
      initial_comment: 'Here it is',
      file: PNG,
      filename: 'chart.png',
      title: 'chart.png',
    });
    expect(result.ok).toBe(true);

    const [upload] = fake.files.uploads;
    expect(
      new URL((fake.callsOf('files.getUploadURLExternal')[0]!.answer as { upload_url: string }).upload_url).origin,
    ).toBe(fake.origin);
    expect(upload).toMatchObject({
      filename: 'chart.png',
      length: PNG.length,
      encoding: 'multipart',
      completed: { channelId: SLACK_IDS.channelId, threadTs: root.ts, initialComment: 'Here it is' },
    });
    expect(upload!.bytes!.equals(PNG)).toBe(true);
    expect(fake.callsOf('files.completeUploadExternal')[0]!.args).toMatchObject({
      channel_id: SLACK_IDS.channelId,
      thread_ts: root.ts,
      files: [{ id: upload!.fileId, title: 'chart.png' }],
    });

    const posted = fake.thread(SLACK_IDS.channelId, root.ts).at(-1)!;
    expect(posted).toMatchObject({
      user: SLACK_IDS.botUserId,
      text: 'Here it is',
      files: [{ id: upload!.fileId, name: 'chart.png', mimetype: 'image/png' }],
    });
    // The posted file can be fetched back, like any shared file.
    expect((await get(posted.files![0]!.url_private_download!, TOKEN)).body.equals(PNG)).toBe(true);
  });

  it('an app without files:write is refused with missing_scope, and nothing is posted', async () => {
    fake = await new FakeSlack().start();
    fake.revokeScope('files:write');
    const client = new webApi.WebClient(TOKEN, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    await expect(
      client.files.uploadV2({ channel_id: SLACK_IDS.channelId, file: PNG, filename: 'chart.png' }),
    ).rejects.toMatchObject({ data: { error: 'missing_scope' } });
    expect(fake.files.uploads).toEqual([]);
    expect(fake.channelMessages(SLACK_IDS.channelId)).toEqual([]);
  });
});
