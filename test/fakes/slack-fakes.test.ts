// Self-tests of the Slack fakes: the REAL @slack/bolt App (HTTP mode) and WebClient against
// FakeSlack, the signer and the payload builders, with no mocks. Besides proving the fakes,
// these pin down the bolt 5.1 / web-api 8.2 behaviour the Slack connector relies on: auth.test
// in the constructor, ack before the listener, what ignoreSelf drops, the exact interactivity
// content type, the error classes on 429/500, and the chat.*Stream sequence.
import type { AddressInfo } from 'node:net';
import { App, LogLevel, webApi, type AppOptions } from '@slack/bolt';
import type { types } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import {
  SLACK_IDS,
  appMention,
  blockActions,
  botMessage,
  channelMessage,
  dmMessage,
  eventCallback,
  reactionAdded,
  slashCommand,
  threadMessage,
  urlVerification,
} from './slack-payloads.js';
import { FakeSlack, type SlackCall } from './slack-server.js';
import { sendEvent, sendInteraction, sendSigned, sendSlashCommand, signSlackRequest } from './slack-signer.js';

const SECRET = 'fake-signing-secret-0123456789';
const TOKEN = 'xoxb-test';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  // Apps first (they hold connections to the fake), then the fakes.
  while (cleanups.length) await cleanups.pop()!();
});

async function startFake(): Promise<FakeSlack> {
  const fake = await new FakeSlack().start();
  cleanups.push(() => fake.stop());
  return fake;
}

interface HttpBot {
  app: App;
  /** Where Slack POSTs events, interactivity and commands: `http://127.0.0.1:P/slack/events`. */
  url: string;
}

/**
 * A bolt App in HTTP mode on an ephemeral port. The fake must be up first: the constructor
 * calls auth.test at once, and a failure there is an unhandled rejection.
 */
async function startHttpBot(
  fake: FakeSlack,
  register: (app: App) => void,
  options: Partial<AppOptions> = {},
): Promise<HttpBot> {
  const app = new App({
    token: TOKEN,
    signingSecret: SECRET,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
    ...options,
  });
  register(app);
  // Port 0 + 127.0.0.1: the OS picks a free port, never one of fetch's "bad ports".
  const server = await app.start({ port: 0, host: '127.0.0.1' });
  cleanups.push(async () => {
    await app.stop();
  });
  const { port } = server.address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}/slack/events` };
}

function webClient(fake: FakeSlack, options: webApi.WebClientOptions = {}): webApi.WebClient {
  return new webApi.WebClient(TOKEN, {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: webApi.LogLevel.ERROR,
    ...options,
  });
}

/** A promise plus its resolver, to hold a listener until the test lets it go. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}

describe('Slack over HTTP: a mention goes in, the reply comes out', () => {
  it('a signed app_mention reaches app.event and the threaded reply lands in the fake workspace', async () => {
    const fake = await startFake();
    const listenerDone = gate();
    const bot = await startHttpBot(fake, (app) => {
      app.event('app_mention', async ({ event, client, context }) => {
        expect(context.botUserId).toBe(SLACK_IDS.botUserId);
        await client.chat.postMessage({
          channel: event.channel,
          thread_ts: event.thread_ts ?? event.ts,
          text: 'on it',
          blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*on it*' } }],
        });
        listenerDone.open();
      });
    });

    // auth.test went out from the constructor, with the bot token as a Bearer header.
    const authTest = await fake.waitForCall('auth.test');
    expect(authTest.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const mention = appMention({ text: 'summarise this thread' });
    expect(mention.text).toBe('<@U0BOT00001> summarise this thread');
    fake.addMessage(mention);
    const delivery = await sendEvent(bot.url, SECRET, eventCallback(mention));
    expect(delivery).toMatchObject({ status: 200, body: '' });

    const post = await fake.waitForCall('chat.postMessage');
    expect(post.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(post.args).toMatchObject({
      channel: SLACK_IDS.channelId,
      thread_ts: mention.ts,
      text: 'on it',
      // JSON-carrying fields arrive parsed; the per-event client adds the event's team.
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*on it*' } }],
      team_id: SLACK_IDS.teamId,
    });
    await listenerDone.promise;

    const thread = fake.thread(SLACK_IDS.channelId, mention.ts);
    expect(thread.map((m) => [m.user, m.text])).toEqual([
      [SLACK_IDS.humanUserId, mention.text],
      [SLACK_IDS.botUserId, 'on it'],
    ]);
    const answer = post.answer as { ts: string };
    expect(answer.ts > mention.ts).toBe(true);
  });

  it('bolt acknowledges an event before its listener finishes', async () => {
    const fake = await startFake();
    const release = gate();
    const finished = gate();
    const bot = await startHttpBot(fake, (app) => {
      app.event('app_mention', async () => {
        await release.promise;
        finished.open();
      });
    });
    const delivery = await sendEvent(bot.url, SECRET, eventCallback(appMention({ text: 'slow work' })));
    expect(delivery.status).toBe(200);
    release.open();
    await finished.promise;
  });

  it('Slack retries carry x-slack-retry-num / -reason, which bolt exposes on context', async () => {
    const fake = await startFake();
    const seen = gate<{ retryNum: number | undefined; retryReason: string | undefined; eventId: string }>();
    const bot = await startHttpBot(fake, (app) => {
      app.event('app_mention', async ({ context, body }) =>
        seen.open({ retryNum: context.retryNum, retryReason: context.retryReason, eventId: body.event_id }),
      );
    });
    const body = eventCallback(appMention({ text: 'again' }), { eventId: 'Ev0RETRIED01' });
    await sendEvent(bot.url, SECRET, body, { retryNum: 1, retryReason: 'http_timeout' });
    expect(await seen.promise).toEqual({ retryNum: 1, retryReason: 'http_timeout', eventId: 'Ev0RETRIED01' });
  });

  it('a forged or stale signature is refused with 401; url_verification answers the challenge', async () => {
    const fake = await startFake();
    let reached = 0;
    const bot = await startHttpBot(fake, (app) => {
      app.event('app_mention', async () => {
        reached++;
      });
    });
    const body = eventCallback(appMention({ text: 'let me in' }));
    expect((await sendEvent(bot.url, 'not-the-secret', body)).status).toBe(401);
    expect((await sendEvent(bot.url, SECRET, body, { signature: 'v0=deadbeef' })).status).toBe(401);
    expect((await sendEvent(bot.url, SECRET, body, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 })).status).toBe(
      401,
    );
    expect(reached).toBe(0);

    const challenge = await sendEvent(bot.url, SECRET, urlVerification('abc123'));
    expect(challenge.status).toBe(200);
    expect(JSON.parse(challenge.body)).toEqual({ challenge: 'abc123' });
  });

  it('signSlackRequest is Slack v0 HMAC-SHA256 over v0:ts:body', () => {
    // The worked example of Slack's "Verifying requests" page.
    const headers = signSlackRequest(
      '8f742231b10e8888abcd99yyyzzz85a5',
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
      1531420618,
    );
    expect(headers).toEqual({
      'x-slack-request-timestamp': '1531420618',
      'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    });
  });

  it("ignoreSelf drops the bot's own echoed posts and reactions, but not other bots' messages", async () => {
    const fake = await startFake();
    const seen: string[] = [];
    const bot = await startHttpBot(fake, (app) => {
      app.event('message', async ({ event }) => {
        seen.push(event.ts);
      });
      app.event('reaction_added', async ({ event }) => {
        seen.push(`${event.user}:${event.reaction}`);
      });
    });
    const ownPost = botMessage({ text: 'my own reply', bot: 'self' });
    const ownLegacy = botMessage({ text: 'my own legacy post', bot: 'self', legacy: true });
    const otherBot = botMessage({ text: 'another app talking' });
    const human = channelMessage({ text: 'a human' });
    // The bot's own 👀 comes back as a reaction_added whose user is the bot: dropped too.
    const ownReaction = reactionAdded({
      reaction: 'eyes',
      ts: human.ts,
      user: SLACK_IDS.botUserId,
      itemUser: SLACK_IDS.humanUserId,
    });
    const humanReaction = reactionAdded({ reaction: 'octagonal_sign', ts: otherBot.ts });
    for (const event of [ownPost, ownLegacy, otherBot, human, ownReaction, humanReaction]) {
      expect((await sendEvent(bot.url, SECRET, eventCallback(event))).status).toBe(200);
    }
    await expect.poll(() => seen.length).toBe(3);
    expect(seen.sort()).toEqual([otherBot.ts, human.ts, `${SLACK_IDS.humanUserId}:octagonal_sign`].sort());
  });

  it('thread replies, DMs and reactions reach their listeners with the fields the connector reads', async () => {
    const fake = await startFake();
    const messages: { channel: string; channelType: string; threadTs: string | undefined }[] = [];
    const reaction = gate<types.ReactionAddedEvent>();
    const bot = await startHttpBot(fake, (app) => {
      app.message(async ({ message }) => {
        if (message.subtype === undefined)
          messages.push({ channel: message.channel, channelType: message.channel_type, threadTs: message.thread_ts });
      });
      app.event('reaction_added', async ({ event }) => reaction.open(event));
    });
    const reply = threadMessage({ text: 'and another thing', threadTs: '1795974906.000009' });
    const dm = dmMessage({ text: 'hi in private' });
    await sendEvent(bot.url, SECRET, eventCallback(reply));
    await sendEvent(bot.url, SECRET, eventCallback(dm));
    await sendEvent(
      bot.url,
      SECRET,
      eventCallback(reactionAdded({ reaction: 'octagonal_sign', ts: '1795974906.000010' })),
    );
    await expect.poll(() => messages.length).toBe(2);
    expect(messages).toEqual(
      expect.arrayContaining([
        { channel: SLACK_IDS.channelId, channelType: 'channel', threadTs: '1795974906.000009' },
        { channel: SLACK_IDS.dmChannelId, channelType: 'im', threadTs: undefined },
      ]),
    );
    expect(await reaction.promise).toMatchObject({
      reaction: 'octagonal_sign',
      item: { channel: SLACK_IDS.channelId, ts: '1795974906.000010' },
    });
  });

  it("the builders' payloads satisfy bolt's own event types", () => {
    // Compile-time checks: a builder drifting from bolt's types breaks `tsc`.
    // Files aside: bolt types every field of a file as present, and Slack sends stubs (a
    // deleted file's tombstone, a Slack Connect file's `check_file_info`) that the fake plays.
    const { files: _files, ...withoutFiles } = appMention({ text: 'x', threadTs: '1795974906.000001' });
    const mention: types.AppMentionEvent = withoutFiles;
    const reacted: types.ReactionAddedEvent = reactionAdded({ reaction: 'eyes', ts: '1795974906.000001' });
    expect([mention.type, reacted.type]).toEqual(['app_mention', 'reaction_added']);
  });
});

describe('Slack over HTTP: buttons and slash commands', () => {
  it('a button click with the exact form content type reaches app.action, and respond() lands in the sink', async () => {
    const fake = await startFake();
    const bot = await startHttpBot(fake, (app) => {
      app.action('approve', async ({ ack, respond, action, body }) => {
        await ack();
        const value = action.type === 'button' ? action.value : undefined;
        await respond({ replace_original: false, text: `approved ${value ?? '?'} by <@${body.user.id}>` });
      });
    });
    const responseUrl = fake.responseUrl('approval-1');
    const click = blockActions({ actionId: 'approve', value: 'call_42', messageTs: '1795974906.000100', responseUrl });
    const delivery = await sendInteraction(bot.url, SECRET, click);
    expect(delivery.status).toBe(200);

    const posted = await fake.waitForResponse('approval-1');
    expect(posted.headers['content-type']).toBe('application/json');
    expect(posted.body).toEqual({ replace_original: false, text: `approved call_42 by <@${SLACK_IDS.humanUserId}>` });
  });

  it('the same click with "; charset=utf-8" on the content type is refused with 400 (bolt compares with ===)', async () => {
    const fake = await startFake();
    let reached = 0;
    const bot = await startHttpBot(fake, (app) => {
      app.action('approve', async ({ ack }) => {
        reached++;
        await ack();
      });
    });
    const click = blockActions({
      actionId: 'approve',
      value: 'x',
      messageTs: '1795974906.000100',
      responseUrl: fake.responseUrl(),
    });
    const raw = `payload=${encodeURIComponent(JSON.stringify(click))}`;
    const delivery = await sendSigned(bot.url, SECRET, raw, 'application/x-www-form-urlencoded; charset=utf-8');
    expect(delivery.status).toBe(400);
    expect(reached).toBe(0);
  });

  it('a slash command reaches app.command with its form fields', async () => {
    const fake = await startFake();
    const bot = await startHttpBot(fake, (app) => {
      app.command('/agent', async ({ ack, command, respond }) => {
        await ack();
        await respond({ response_type: 'ephemeral', text: `model is now ${command.text}` });
      });
    });
    const fields = slashCommand({ command: '/agent', text: 'model gpt-4.1', responseUrl: fake.responseUrl('cmd-1') });
    expect((await sendSlashCommand(bot.url, SECRET, fields)).status).toBe(200);
    expect((await fake.waitForResponse('cmd-1')).body).toEqual({
      response_type: 'ephemeral',
      text: 'model is now model gpt-4.1',
    });
  });
});

describe('FakeSlack answers like the Web API', () => {
  it('streams through client.chat.startStream / appendStream / stopStream, then refuses appends', async () => {
    const fake = await startFake();
    const client = webClient(fake);
    const threadTs = '1795974906.000200';
    const start = await client.chat.startStream({
      channel: SLACK_IDS.channelId,
      thread_ts: threadTs,
      recipient_team_id: SLACK_IDS.teamId,
      recipient_user_id: SLACK_IDS.humanUserId,
      markdown_text: 'Hello',
    });
    const ts = start.ts!;
    await client.chat.appendStream({ channel: SLACK_IDS.channelId, ts, markdown_text: ', wor' });
    await client.chat.appendStream({
      channel: SLACK_IDS.channelId,
      ts,
      chunks: [{ type: 'markdown_text', text: 'ld' }],
    });
    expect(fake.message(SLACK_IDS.channelId, ts)).toMatchObject({
      text: 'Hello, world',
      threadTs,
      stream: { state: 'streaming', appendCalls: 2 },
    });

    await client.chat.stopStream({ channel: SLACK_IDS.channelId, ts, markdown_text: '!' });
    expect(fake.message(SLACK_IDS.channelId, ts)).toMatchObject({
      text: 'Hello, world!',
      stream: { state: 'stopped' },
    });

    const late = await rejectionOf(
      client.chat.appendStream({ channel: SLACK_IDS.channelId, ts, markdown_text: 'too late' }),
    );
    expect(late).toBeInstanceOf(webApi.WebAPIPlatformError);
    expect((late as webApi.WebAPIPlatformError).data.error).toBe('message_not_in_streaming_state');

    // Outside a DM, Slack needs to know whom the stream is for.
    const anonymous = await rejectionOf(
      client.chat.startStream({ channel: SLACK_IDS.channelId, thread_ts: threadTs, markdown_text: 'x' }),
    );
    expect((anonymous as webApi.WebAPIPlatformError).data.error).toBe('missing_recipient_team_id');
  });

  it("client.chatStream's buffered helper sends startStream, appendStream and stopStream with chunks", async () => {
    const fake = await startFake();
    const client = webClient(fake);
    const stream = client.chatStream({
      channel: SLACK_IDS.dmChannelId,
      thread_ts: '1795974906.000300',
      buffer_size: 8,
    });
    await stream.append({ markdown_text: 'streamed ' });
    await stream.append({ markdown_text: 'more text ' });
    await stream.stop({ markdown_text: 'done' });
    expect(fake.callsOf('chat.startStream')[0]!.args.chunks).toEqual([{ type: 'markdown_text', text: 'streamed ' }]);
    expect(fake.callsOf('chat.appendStream')[0]!.args.chunks).toEqual([{ type: 'markdown_text', text: 'more text ' }]);
    expect(fake.callsOf('chat.stopStream')[0]!.args.chunks).toEqual([{ type: 'markdown_text', text: 'done' }]);
    expect(fake.message(SLACK_IDS.dmChannelId, stream.ts!)?.text).toBe('streamed more text done');
  });

  it('keeps message state: update, delete, reactions, permalinks, threads, users, assistant status', async () => {
    const fake = await startFake();
    fake.addUser({ id: 'U0GRACE001', name: 'grace', realName: 'Grace Hopper', displayName: 'grace' });
    const client = webClient(fake);
    const channel = SLACK_IDS.channelId;
    const root = fake.addMessage({ channel, text: '<@U0BOT00001> help', user: SLACK_IDS.humanUserId });

    await client.assistant.threads.setStatus({ channel_id: channel, thread_ts: root.ts, status: 'is thinking…' });
    expect(fake.assistantThread(channel, root.ts)?.status).toBe('is thinking…');
    const posted = await client.chat.postMessage({ channel, thread_ts: root.ts, text: 'working' });
    // Slack clears the status when the app replies in the thread.
    expect(fake.assistantThread(channel, root.ts)?.status).toBe('');

    const ts = posted.ts!;
    await client.chat.update({ channel, ts, text: 'done' });
    expect(fake.message(channel, ts)).toMatchObject({ text: 'done', edits: 1 });
    const missing = await rejectionOf(client.chat.update({ channel, ts: '1.000001', text: 'x' }));
    expect((missing as webApi.WebAPIPlatformError).data.error).toBe('message_not_found');

    await client.reactions.add({ channel, timestamp: root.ts, name: 'eyes' });
    const twice = await rejectionOf(client.reactions.add({ channel, timestamp: root.ts, name: 'eyes' }));
    expect((twice as webApi.WebAPIPlatformError).data.error).toBe('already_reacted');
    expect(fake.reactionsOn(channel, root.ts)).toEqual([{ name: 'eyes', users: [SLACK_IDS.botUserId], count: 1 }]);
    await client.reactions.remove({ channel, timestamp: root.ts, name: 'eyes' });
    const gone = await rejectionOf(client.reactions.remove({ channel, timestamp: root.ts, name: 'eyes' }));
    expect((gone as webApi.WebAPIPlatformError).data.error).toBe('no_reaction');
    expect(fake.reactionsOn(channel, root.ts)).toEqual([]);

    const replies = await client.conversations.replies({ channel, ts: root.ts });
    expect(replies.messages?.map((m) => m.text)).toEqual(['<@U0BOT00001> help', 'done']);
    expect(replies.messages?.[0]).toMatchObject({ reply_count: 1, thread_ts: root.ts });
    const history = await client.conversations.history({ channel });
    expect(history.messages?.map((m) => m.ts)).toEqual([root.ts]);

    const link = await client.chat.getPermalink({ channel, message_ts: ts });
    expect(link.permalink).toBe(`https://fake-team.slack.com/archives/${channel}/p${ts.replace('.', '')}`);

    const user = await client.users.info({ user: 'U0GRACE001' });
    expect(user.user?.profile?.display_name).toBe('grace');
    expect(
      ((await rejectionOf(client.users.info({ user: 'U0NOBODY01' }))) as webApi.WebAPIPlatformError).data.error,
    ).toBe('user_not_found');

    await client.chat.postEphemeral({ channel, user: SLACK_IDS.humanUserId, text: 'only you' });
    expect(fake.ephemerals(channel)).toMatchObject([{ user: SLACK_IDS.humanUserId, text: 'only you' }]);

    await client.chat.delete({ channel, ts });
    expect(fake.message(channel, ts)).toBeUndefined();

    const unknown = await rejectionOf(client.apiCall('chat.teleport', { channel }));
    expect((unknown as webApi.WebAPIPlatformError).data.error).toBe('unknown_method');
  });

  it('apps.connections.open wants an app-level token and serves the ws URL a Socket Mode fake sets', async () => {
    const fake = await startFake();
    const botToken = await rejectionOf(webClient(fake).apiCall('apps.connections.open'));
    expect((botToken as webApi.WebAPIPlatformError).data.error).toBe('not_allowed_token_type');
    const appClient = new webApi.WebClient('xapp-test', {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 0 },
      logLevel: webApi.LogLevel.ERROR,
    });
    fake.setSocketUrl(() => `ws://127.0.0.1:${fake.port}/socket?ticket=t1`);
    expect((await appClient.apps.connections.open()).url).toBe(`ws://127.0.0.1:${fake.port}/socket?ticket=t1`);
  });
});

describe('FakeSlack scripted failures surface as the WebClient documents', () => {
  it('an ok:false error becomes WebAPIPlatformError', async () => {
    const fake = await startFake();
    fake.failNext('chat.postMessage', 'channel_not_found');
    const error = await rejectionOf(webClient(fake).chat.postMessage({ channel: 'C0NOPE0001', text: 'x' }));
    expect(error).toBeInstanceOf(webApi.WebAPIPlatformError);
    expect(error).toMatchObject({
      code: webApi.ErrorCode.PlatformError,
      data: { ok: false, error: 'channel_not_found' },
    });
  });

  it('a 429 with retry-after: 1 and retries: 0 waits the second, then throws a request error', async () => {
    const fake = await startFake();
    fake.failNext('chat.update', { status: 429, headers: { 'retry-after': '1' } });
    const started = Date.now();
    const error = await rejectionOf(
      webClient(fake).chat.update({ channel: SLACK_IDS.channelId, ts: '1.000001', text: 'x' }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(error).toBeInstanceOf(webApi.WebAPIRequestError);
    expect(error.message).toContain('A rate limit was exceeded');
    expect(error).toMatchObject({ code: webApi.ErrorCode.RequestError });
  });

  it('with rejectRateLimitedCalls a 429 is a WebAPIRateLimitedError at once', async () => {
    const fake = await startFake();
    fake.failNext('chat.update', { status: 429, headers: { 'retry-after': '60' } });
    const started = Date.now();
    const error = await rejectionOf(
      webClient(fake, { rejectRateLimitedCalls: true }).chat.update({
        channel: SLACK_IDS.channelId,
        ts: '1.000001',
        text: 'x',
      }),
    );
    // Not after the 60 s Slack asked for: generous for a busy machine, far short of the wait.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(error).toBeInstanceOf(webApi.WebAPIRateLimitedError);
    expect(error).toMatchObject({ code: webApi.ErrorCode.RateLimitedError, retryAfter: 60 });
  });

  it('a 500 is a WebAPIHTTPError with the status', async () => {
    const fake = await startFake();
    fake.failNext('reactions.add', { status: 500 });
    const error = await rejectionOf(
      webClient(fake).reactions.add({ channel: SLACK_IDS.channelId, timestamp: '1.000001', name: 'eyes' }),
    );
    expect(error).toBeInstanceOf(webApi.WebAPIHTTPError);
    expect(error).toMatchObject({ code: webApi.ErrorCode.HTTPError, statusCode: 500 });
    // The failure was one-shot: the next call succeeds.
    await webClient(fake).reactions.add({ channel: SLACK_IDS.channelId, timestamp: '1.000001', name: 'eyes' });
  });
});

describe('FakeSlack rate tiers', () => {
  it('chat.postMessage allows a short burst per channel, then 429 with retry-after', async () => {
    const fake = (await startFake()).enforceRateTiers();
    const client = webClient(fake, { rejectRateLimitedCalls: true });
    for (let i = 0; i < 3; i++) await client.chat.postMessage({ channel: 'C0BUSY00001', text: `burst ${i}` });
    const limited = await rejectionOf(client.chat.postMessage({ channel: 'C0BUSY00001', text: 'one too many' }));
    expect(limited).toMatchObject({ code: webApi.ErrorCode.RateLimitedError, retryAfter: 1 });
    // Another channel has its own bucket.
    await client.chat.postMessage({ channel: 'C0QUIET0001', text: 'fine here' });
  });

  it('a Tier 3 method (chat.update) allows about 50 per scaled minute, then recovers after retry-after', async () => {
    const fake = (await startFake()).enforceRateTiers({ scale: 0.02 }); // a minute lasts 1.2 s
    const client = webClient(fake, { rejectRateLimitedCalls: true });
    const { ts } = await client.chat.postMessage({ channel: SLACK_IDS.channelId, text: 'to edit' });
    let accepted = 0;
    let limited: Error | undefined;
    while (!limited && accepted < 200) {
      try {
        await client.chat.update({ channel: SLACK_IDS.channelId, ts: ts!, text: `edit ${accepted}` });
        accepted++;
      } catch (error) {
        limited = error as Error;
      }
    }
    expect(accepted).toBeGreaterThanOrEqual(50);
    expect(accepted).toBeLessThan(120);
    expect(limited).toBeInstanceOf(webApi.WebAPIRateLimitedError);
    const retryAfter = (limited as webApi.WebAPIRateLimitedError).retryAfter;
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    await client.chat.update({ channel: SLACK_IDS.channelId, ts: ts!, text: 'after the wait' });
    expect(fake.callsOf('chat.update').filter((call: SlackCall) => call.status === 429)).toHaveLength(1);
  });
});
