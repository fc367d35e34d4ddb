// The playground over real HTTP, as its page uses it: the access token on every /api/ request
// (new at each start, in an Authorization header, never a cookie), a
// mention that starts a thread, the model's answer streamed to the page, one card per tool
// call updated in place, a click that resolves it, and clear refusals for a wrong token or a
// click on a card that was already decided. The bot is the real core against FakeOpenAI.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { tempDir } from '../support/test-connector.js';
import { bootWebBot, messageOf, type WebBot } from './web-harness.js';
import { inOnlyConversation } from '../support/conversation-folders.js';

const bots: WebBot[] = [];
afterEach(async () => {
  for (const bot of bots.splice(0).reverse()) await bot.stop();
});

async function boot(options: Parameters<typeof bootWebBot>[0] = {}): Promise<WebBot> {
  const bot = await bootWebBot(options);
  bots.push(bot);
  return bot;
}

describe('the access token', () => {
  const API_ROUTES = [
    ['GET', '/api/events'],
    ['POST', '/api/messages'],
    ['POST', '/api/stop'],
    ['POST', '/api/click'],
    ['POST', '/api/note-action'],
    ['POST', '/api/feedback'],
    ['POST', '/api/feedback-reason'],
    ['POST', '/api/uploads'],
    ['GET', '/api/files/AAAAAAAAAAAAAAAAAAAAAA'],
    ['GET', '/api/no-such-route'],
  ] as const;

  it('every /api/ route, the live stream included, refuses a request without it (401) or with a wrong one (403); a query, a cookie or another header do not count', async () => {
    const bot = await boot();
    const call = (method: string, path: string, headers: Record<string, string> = {}) =>
      fetch(`${bot.origin}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(method === 'POST'
          ? { body: '{"text":"@bot hi","thread":"t","item":"i","choice":"once","message":"m"}' }
          : {}),
      });

    for (const [method, path] of API_ROUTES) {
      const none = await call(method, path);
      expect(none.status, `${method} ${path} without a token`).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await none.json()) as { message: string }).message).toMatch(/access token/);
      expect(
        (await call(method, path, { authorization: 'Bearer wrong' })).status,
        `${method} ${path} with a wrong token`,
      ).toBe(403);
      // A token of another length, or sharing a prefix, is just as wrong.
      expect((await call(method, path, { authorization: `Bearer ${bot.token}x` })).status).toBe(403);
      expect((await call(method, path, { authorization: `Bearer ${bot.token.slice(0, -1)}` })).status).toBe(403);
      // The right token anywhere but the Authorization header is no token at all: the query
      // (history, logs), a cookie (sent to every port of 127.0.0.1), the old header.
      expect((await call(method, `${path}?token=${bot.token}`)).status, `${method} ${path} with ?token=`).toBe(401);
      expect(
        (await call(method, path, { cookie: `playground_token=${bot.token}` })).status,
        `${method} ${path} with a cookie`,
      ).toBe(401);
      expect(
        (await call(method, path, { 'x-playground-token': bot.token })).status,
        `${method} ${path} with x-playground-token`,
      ).toBe(401);
      expect(
        (await call(method, path, { authorization: `Basic ${Buffer.from(`x:${bot.token}`).toString('base64')}` }))
          .status,
      ).toBe(401);
    }
    expect(bot.connector.threads.all()).toHaveLength(0);
    expect(bot.llm.requests).toHaveLength(0);

    // With it: the stream opens, and an action is done.
    const live = await bot.stream();
    expect(live.events[0]!.event).toBe('snapshot');
    expect((await bot.act('/api/messages', { text: 'hello' })).status).toBe(200);
  });

  it("serves the page's own files without it: they hold no data and no token, and no answer ever sets a cookie", async () => {
    const bot = await boot();
    bot.llm.replyText('The plan is in the vault.');
    const posted = await bot.act('/api/messages', { text: '@bot where is the plan?' });
    await bot.idle();
    const responses: Response[] = [];
    for (const file of [
      '/',
      '/index.html',
      '/app.js',
      '/render.js',
      '/markdown.js',
      '/markdown-blocks.js',
      '/markdown-inline.js',
      '/style.css',
      '/access-token.js',
      '/live-stream.js',
      '/composer.js',
      '/file-transfer.js',
      '/progress-view.js',
      '/tool-result.js',
      '/full-view.js',
      '/private-answers.js',
      '/thread-status.js',
      '/feedback-buttons.js',
      '/page-view.js',
    ]) {
      const response = await fetch(`${bot.origin}${file}`);
      expect(response.status, file).toBe(200);
      const text = await response.text();
      expect(text).not.toContain(bot.token);
      expect(text).not.toContain('the vault');
      expect(text).not.toContain(posted.body.thread as string);
      responses.push(response);
    }
    expect(responses[0]!.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(responses[0]!.headers.get('referrer-policy')).toBe('no-referrer');
    const stream = await fetch(`${bot.origin}/api/events`, { headers: { authorization: `Bearer ${bot.token}` } });
    responses.push(stream);
    await stream.body?.cancel();
    responses.push(
      await fetch(`${bot.origin}/api/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bot.token}` },
        body: '{"text":"hi"}',
      }),
    );
    responses.push(
      await fetch(`${bot.origin}/api/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"text":"hi"}',
      }),
    );
    responses.push(await fetch(`${bot.origin}/nothing-here`));
    for (const response of responses) expect(response.headers.get('set-cookie'), response.url).toBeNull();
  });

  it('refuses a request from another origin (another port of 127.0.0.1), even with the token', async () => {
    const bot = await boot();
    const post = (origin: string) =>
      fetch(`${bot.origin}/api/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bot.token}`, origin },
        body: '{"text":"@bot hi"}',
      });
    expect((await post(`http://127.0.0.1:${bot.connector.port + 1}`)).status).toBe(403);
    expect((await post('null')).status).toBe(403);
    expect((await post('http://evil.example')).status).toBe(403);
    expect(bot.llm.requests).toHaveLength(0);
    expect((await post(bot.origin)).status).toBe(200);
  });

  it('is new at each start unless PLAYGROUND_TOKEN fixes it; after a restart the old one is refused; the store keeps none', async () => {
    const dir = await tempDir();
    const llm = await new FakeOpenAI().start();
    try {
      const first = await bootWebBot({ dir: dir.path, llm });
      expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(first.url).toBe(`${first.origin}/#token=${first.token}`);
      // A tool that prints it (a log file, the page's address pasted in a thread) shows it masked.
      expect(first.secrets.mask(`open ${first.url}`)).not.toContain(first.token);
      // What an earlier version kept in the store, a token that never changed: not used, removed.
      const retired = 'R'.repeat(43);
      await first.core.store.keyv.set('web:access-token', retired);
      await first.stop();

      const second = await bootWebBot({ dir: dir.path, llm });
      try {
        expect(second.token).not.toBe(first.token);
        expect(second.token).not.toBe(retired);
        expect(await second.core.store.keyv.get('web:access-token')).toBeUndefined();
        expect((await second.act('/api/messages', { text: 'hello' }, { token: first.token })).status).toBe(403);
        expect((await second.act('/api/messages', { text: 'hello' }, { token: retired })).status).toBe(403);
        expect((await second.act('/api/messages', { text: 'hello' })).status).toBe(200);
      } finally {
        await second.stop();
      }

      const fixed = 'fixed-by-the-operator_0123456789abcdef';
      const third = await bootWebBot({ dir: dir.path, llm, env: { PLAYGROUND_TOKEN: fixed } });
      await third.stop();
      const fourth = await bootWebBot({ dir: dir.path, llm, env: { PLAYGROUND_TOKEN: fixed } });
      try {
        expect(third.token).toBe(fixed);
        expect(fourth.token).toBe(fixed);
        expect((await fourth.act('/api/messages', { text: 'hello' })).status).toBe(200);
      } finally {
        await fourth.stop();
      }
    } finally {
      await llm.stop();
      await dir.remove();
    }
  });

  it('PLAYGROUND_TOKEN must be long and URL-safe; the error does not repeat it', () => {
    for (const bad of ['short-token', `${'a'.repeat(40)}#x`, `${'a'.repeat(40)} b`]) {
      try {
        loadConfig({ PLAYGROUND_TOKEN: bad });
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        const message = (error as ConfigError).message;
        expect(message).toMatch(/PLAYGROUND_TOKEN: must be 32 to 256 characters/);
        expect(message).not.toContain(bad);
      }
    }
    expect(loadConfig({ PLAYGROUND_TOKEN: 'b'.repeat(32) }).PLAYGROUND_TOKEN).toBe('b'.repeat(32));
  });

  it('answers only at the loopback address (a DNS-rebinding host is refused)', async () => {
    const bot = await boot();
    const { request } = await import('node:http');
    const statusOf = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: bot.connector.port,
            path,
            headers: { host: `evil.example:${bot.connector.port}`, authorization: `Bearer ${bot.token}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await statusOf('/')).toBe(403);
    expect(await statusOf('/app.js')).toBe(403);
    expect(await statusOf('/api/events')).toBe(403);
  });

  it('refuses a malformed action clearly', async () => {
    const bot = await boot();
    const empty = await bot.act('/api/messages', { text: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/text/);
    const notJson = await fetch(`${bot.origin}/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${bot.token}` },
      body: 'hi',
    });
    expect(notJson.status).toBe(415);
  });
});

describe('a thread in the playground', () => {
  it('a mention starts a thread and the streamed answer arrives on the page, with its usage footer', async () => {
    const bot = await boot();
    const live = await bot.stream();
    expect(live.events[0]!.event).toBe('snapshot');
    bot.llm.replyText('Hello from the fake model, in **several** pieces.', { chunkSize: 5 });

    const posted = await bot.act('/api/messages', { text: '@bot say hello' });
    expect(posted.status).toBe(200);
    expect(posted.body.status).toBe('started');
    const threadId = posted.body.thread as string;

    const opened = await live.next((e) => e.event === 'message' && messageOf(e)?.kind === 'answer');
    expect(opened.data.threadId as string).toBe(threadId);
    await live.next((e) => e.event === 'append');
    await bot.idle();
    const finished = await live.next((e) => messageOf(e)?.kind === 'answer' && messageOf(e)?.streaming === false);
    const answer = messageOf(finished)!;
    expect(answer.text).toBe('Hello from the fake model, in **several** pieces.');
    expect(answer.footer).toMatch(/\d+ in · \d+ out/);
    // What the model was asked: the text without the mention.
    expect(JSON.stringify(bot.llm.bodies[0]!.messages)).toContain('"say hello"');
    // The person's message was marked as received.
    await live.next((e) => messageOf(e)?.kind === 'input' && (messageOf(e)?.marks as string[]).includes('received'));
  });

  it('a channel message without a mention stays a message: no thread, no model call', async () => {
    const bot = await boot();
    const posted = await bot.act('/api/messages', { text: 'just chatting' });
    expect(posted.body.status).toBe('posted');
    expect(bot.connector.threads.get(posted.body.thread as string)?.sessionId).toBeUndefined();
    expect(bot.llm.requests).toHaveLength(0);
  });

  it('a tool call gets one card, updated in place; Approve runs it once; a second click is refused as already answered', async () => {
    const bot = await boot();
    const live = await bot.stream();
    bot.llm.replyToolCalls([
      { id: 'call_w1', name: 'write_file', arguments: { path: 'notes.txt', content: 'hello <b>world</b>\n' } },
    ]);
    bot.llm.replyText('Written.');

    const posted = await bot.act('/api/messages', { text: '@bot write my notes' });
    const threadId = posted.body.thread as string;
    const asking = await live.next(
      (e) => messageOf(e)?.kind === 'card' && (messageOf(e)?.card as { buttons: unknown[] }).buttons.length > 0,
    );
    const card = messageOf(asking)!;
    const model = card.card as {
      itemId: string;
      name: string;
      parts: { label: string; text: string }[];
      buttons: { label: string; choice: string }[];
      status: string;
    };
    expect(model.name).toBe('write_file');
    expect(model.parts).toEqual([
      { label: 'File', text: 'notes.txt' },
      { label: 'Content', text: 'hello <b>world</b>\n' },
    ]);
    expect(model.buttons.map((b) => b.choice)).toEqual(expect.arrayContaining(['once', 'always_tool', 'deny']));
    expect(model.buttons[0]!.label).toBe('Approve');
    expect(model.status).toBe('Awaiting approval');

    const click = await bot.act('/api/click', { item: model.itemId, choice: 'once' });
    expect(click.status).toBe(200);
    await bot.idle();
    expect(await readFile(inOnlyConversation(join(bot.dir, 'workspace'), 'notes.txt'), 'utf8')).toBe(
      'hello <b>world</b>\n',
    );

    const cards = bot.connector.threads.get(threadId)!.messages.filter((m) => m.kind === 'card');
    expect(cards).toHaveLength(1);
    expect(cards[0]!.id).toBe(card.id);
    const done = cards[0]!.kind === 'card' ? cards[0]!.card : undefined;
    expect(done?.buttons).toEqual([]);
    expect(done?.status).toMatch(/^Done · .* · Approved by @you$/);
    expect(done?.icon).toBe('✅');

    const again = await bot.act('/api/click', { item: model.itemId, choice: 'once' });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('Already approved by @you.');
    const invented = await bot.act('/api/click', { item: 'no-such-item', choice: 'once' });
    expect(invented.status).toBe(409);
    expect(invented.body.message).toMatch(/no longer exists/);
    // The model was asked twice: the call, then the answer after it ran once.
    expect(bot.llm.requests).toHaveLength(2);
  });

  it('thread commands answer privately; /forget deletes the thread from the page too', async () => {
    const bot = await boot();
    const live = await bot.stream();
    bot.llm.replyText('Noted.');
    const posted = await bot.act('/api/messages', { text: '@bot note this' });
    const thread = posted.body.thread as string;
    await bot.idle();

    expect((await bot.act('/api/messages', { text: '/status', thread })).body.status).toBe('command');
    const status = await live.next((e) => e.event === 'whisper');
    expect(status.data).toMatchObject({ threadId: thread });
    expect(status.data.text).toMatch(/\*\*Model:\*\* openai:gpt-4\.1/);

    await bot.act('/api/messages', { text: '/forget', thread });
    await live.next((e) => e.event === 'removed' && e.data.threadId === thread);
    expect(bot.connector.threads.get(thread)).toBeUndefined();
    expect(await bot.core.store.getSession(`web:playground:general:${thread}`)).toBeUndefined();
  });

  it('a failed turn gets a note with Retry; Retry runs the request again and the button goes', async () => {
    const bot = await boot();
    bot.llm.replyError(400, {
      error: { message: 'The model is having a bad day.', type: 'invalid_request_error', param: null, code: null },
    });
    bot.llm.replyText('Second time lucky.');
    const posted = await bot.act('/api/messages', { text: '@bot try this' });
    const thread = posted.body.thread as string;
    await bot.idle();
    const note = bot.connector.threads.get(thread)!.messages.find((m) => m.kind === 'note');
    expect(note).toMatchObject({ kind: 'note', action: { kind: 'retry', label: 'Retry' } });

    expect((await bot.act('/api/note-action', { thread, message: note!.id })).status).toBe(200);
    await bot.idle();
    const after = bot.connector.threads.get(thread)!.messages;
    expect(after.find((m) => m.id === note!.id)).toMatchObject({ done: 'Retried by @you' });
    expect(after.find((m) => m.id === note!.id)).not.toHaveProperty('action');
    expect(after.some((m) => m.kind === 'answer' && m.text === 'Second time lucky.')).toBe(true);
    const stale = await bot.act('/api/note-action', { thread, message: note!.id });
    expect(stale.status).toBe(404);
  });

  it('the threads survive a restart: a new process redraws them from the store', async () => {
    const dir = await tempDir();
    const llm = await new FakeOpenAI().start();
    try {
      const first = await bootWebBot({ dir: dir.path, llm });
      llm.replyText('Kept.');
      const posted = await first.act('/api/messages', { text: '@bot remember this' });
      await first.idle();
      await first.stop();

      const second = await boot({ dir: dir.path, llm });
      const live = await second.stream();
      const snapshot = live.events[0]!.data as {
        threads: { id: string; messages: { kind: string; text?: string }[] }[];
      };
      const thread = snapshot.threads.find((t) => t.id === posted.body.thread);
      expect(thread?.messages.map((m) => m.kind)).toEqual(['input', 'answer']);
      expect(thread?.messages[1]!.text).toBe('Kept.');
      await second.stop();
      bots.splice(bots.indexOf(second), 1);
    } finally {
      await llm.stop();
      await dir.remove();
    }
  });
});
