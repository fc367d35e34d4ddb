// The playground page's own behaviour, in headless Chromium against the real core and web
// connector in this process, answering with the built-in demo model: private answers sit right
// after the command they answer; Stop is enabled only while there is something to stop; 👀
// leaves a message once its turn is over; the approval card says where an "always" applies
// in the words of its button; and after a restart on the default port an open tab reconnects
// by itself, or, when that port was taken, says the playground moved instead of
// "reconnecting…" forever.
import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/test-connector.js';
import { answerWith, idle, launchChromium, mention, reply, thread, threadOrder } from './browser.js';
import { bootWebBot, type WebBot } from './web-harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The bot on the demo model, its store in `dir` (a second boot on the same dir is a restart). */
async function boot(dir: string): Promise<WebBot> {
  const bot = await bootWebBot({ dir, env: { MODEL: 'demo' } });
  // A test stops it to restart it; the cleanup then has nothing left to do.
  let stopping: Promise<void> | undefined;
  const stopOnce = bot.stop.bind(bot);
  bot.stop = () => (stopping ??= stopOnce());
  cleanups.push(() => bot.stop());
  return bot;
}

async function setup(): Promise<{ dir: string; bot: WebBot; page: Page }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const bot = await boot(dir.path);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  cleanups.push(() => page.close());
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

  it('after a restart on the default port an open tab reconnects by itself: the playground takes its last port again', async () => {
    const { dir, bot, page } = await setup();
    await mention(page, '@bot hello');
    await answerWith(page, 'demo model').waitFor();
    await idle(page);
    await bot.stop();
    await page.locator('#connection[data-state="reconnecting"]').waitFor();
    // Down for a while: the page stops only saying "reconnecting…".
    await page.locator('#connection', { hasText: 'not running at this address' }).waitFor({ timeout: 30_000 });

    const again = await boot(dir);
    expect(again.origin).toBe(bot.origin);
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
