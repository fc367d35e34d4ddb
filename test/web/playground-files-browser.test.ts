// Files in the playground page, as a person handles them, in headless Chromium against
// FakeOpenAI. Through `npm run playground` itself (the bot as a child process): 📎 opens the
// file chooser, the chosen CSV and PNG go with the mention, and the model's request names the
// CSV's path and carries the PNG as an image; the model's attach_file, once approved, shows
// as a link that downloads the very bytes (fetched with the token in a header, never in a
// URL). Against the connector in process: a file dropped on the thread and one pasted go
// with a reply (alone: a message made only of files), and a file over MAX_FILE_BYTES is refused on the
// page before any upload.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { BotProcess } from '../support/bot-process.js';
import { coreTestEnv } from '../support/core-env.js';
import { TINY_PNG } from '../support/file-host.js';
import { tempDir } from '../support/test-connector.js';
import { answerWith, chromiumForFile, idle, mention, printedUrl, thread } from './browser.js';
import { bootWebBot, type WebBot } from './web-harness.js';

const browser = chromiumForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(env: Record<string, string> = {}): Promise<{ bot: WebBot; page: Page; requested: string[] }> {
  const bot = await bootWebBot({ env });
  cleanups.push(() => bot.stop());
  const page = await browser().newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  cleanups.push(() => page.close());
  // Every address the page asks for: the token must never be in one.
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(bot.url);
  await page.locator('#connection[data-state="live"]').waitFor();
  return { bot, page, requested };
}

/** Choose files with the composer's 📎 button, through the browser's file chooser. */
async function attachWithButton(
  page: Page,
  composer: string,
  files: { name: string; mimeType: string; buffer: Buffer }[],
): Promise<void> {
  const chooser = page.waitForEvent('filechooser');
  await page.locator(`${composer} button.attach`).click();
  await (await chooser).setFiles(files);
}

describe('files through npm run playground', () => {
  it('📎 sends a CSV and a PNG with a mention: the model sees both; its attach_file shows a link that downloads the same bytes', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const llm = await new FakeOpenAI().start();
    cleanups.push(() => llm.stop());
    llm.replyToolCalls([
      { name: 'attach_file', arguments: { path: 'uploads/cities.csv', comment: 'Your table, back.' } },
    ]);
    llm.replyText('Posted it.');
    const bot = await BotProcess.start(
      { ...coreTestEnv(dir.path, llm), PERMISSION_MODE: 'interactive' },
      dir.path,
      20_000,
      { waitFor: 'playground' },
    );
    cleanups.push(() => bot.kill());
    const url = printedUrl(bot.stdout);
    const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token')!;
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    cleanups.push(() => page.close());
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(url);
    await page.locator('#connection[data-state="live"]').waitFor();

    const csv = Buffer.from('city,people\nLyon,522000\nNantes,320000\n');
    await attachWithButton(page, '#channel-composer', [
      { name: 'cities.csv', mimeType: 'text/csv', buffer: csv },
      { name: 'screen.png', mimeType: 'image/png', buffer: TINY_PNG },
    ]);
    expect(await page.locator('#channel-composer .attached .file-chip .name').allTextContents()).toEqual([
      'cities.csv',
      'screen.png',
    ]);
    await mention(page, '@bot give me my table back');
    expect(
      await thread(page).locator('li[data-kind="input"]').first().locator('.file-chip .name').allTextContents(),
    ).toEqual(['cities.csv', 'screen.png']);

    // The model's first request: the CSV named with its path, the PNG as an image part.
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="once"]').waitFor();
    const user = llm.bodies[0]!.messages.filter((message) => message.role === 'user').at(-1)!;
    const parts = (Array.isArray(user.content) ? user.content : [{ type: 'text', text: user.content }]) as {
      type: string;
      text?: string;
      image_url?: { url: string };
    }[];
    expect(parts[0]!.text).toContain('give me my table back');
    expect(parts[0]!.text).toContain('uploads/cities.csv');
    expect(parts[0]!.text).toContain('uploads/screen.png');
    expect(parts.filter((part) => part.type === 'image_url').map((part) => part.image_url!.url)).toEqual([
      `data:image/png;base64,${TINY_PNG.toString('base64')}`,
    ]);

    // attach_file asks first, like a write; approved, the file shows in the thread with its link.
    await card.locator('button[data-choice="once"]').click();
    await answerWith(page, 'Posted it.').waitFor();
    const item = thread(page).locator('li[data-kind="file"]');
    expect(await item.locator('.text').textContent()).toBe('Your table, back.');
    const link = item.locator('a.file-link');
    expect(await link.textContent()).toBe('cities.csv');
    // The tool's result, as the model got it, carries the link (with no token in it).
    const result = JSON.stringify(llm.bodies[1]!.messages.filter((message) => message.role === 'tool'));
    expect(result).toMatch(/\/api\/files\/[A-Za-z0-9_-]{22}/);
    expect(result).not.toContain(token);

    const downloading = page.waitForEvent('download');
    await link.click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe('cities.csv');
    expect(await readFile(await download.path())).toEqual(csv);
    expect(requested.filter((address) => address.includes('/api/files/'))).toHaveLength(1);
    expect(requested.join('\n')).not.toContain(token);
  });
});

describe('files in the playground page', () => {
  it("a PNG dropped on the open thread and a file pasted go with the reply, alone (a message made only of files); the model gets the image and the text file's path", async () => {
    const { bot, page } = await setup();
    bot.llm.replyText('Hello.');
    bot.llm.replyText('A picture, I see.');
    await mention(page, '@bot hello');
    await answerWith(page, 'Hello.').waitFor();
    await idle(page);

    const png = TINY_PNG;
    // What a drop hands the page: a DataTransfer holding the file (built in the page; the test build has no DOM types).
    const dropped = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      const bytes = Uint8Array.from(atob('${png.toString('base64')}'), (char) => char.charCodeAt(0));
      transfer.items.add(new File([bytes], 'screenshot.png', { type: 'image/png' }));
      return transfer;
    })()`);
    await page.locator('#thread-pane').dispatchEvent('drop', { dataTransfer: dropped });
    await page.locator('#thread-composer .attached .file-chip', { hasText: 'screenshot.png' }).waitFor();
    // A file pasted into the composer (a screenshot from the clipboard) joins it.
    await page.evaluate(`(() => {
      const clipboard = new DataTransfer();
      clipboard.items.add(new File(['pasted words'], 'pasted.txt', { type: 'text/plain' }));
      document.querySelector('#thread-composer textarea').dispatchEvent(new ClipboardEvent('paste', { clipboardData: clipboard, bubbles: true, cancelable: true }));
    })()`);
    expect(await page.locator('#thread-composer .attached .file-chip .name').allTextContents()).toEqual([
      'screenshot.png',
      'pasted.txt',
    ]);
    await page.locator('#thread-composer button.send').click();
    await answerWith(page, 'A picture, I see.').waitFor();
    const inputs = thread(page).locator('li[data-kind="input"]');
    expect(await inputs.nth(1).locator('.file-chip .name').allTextContents()).toEqual(['screenshot.png', 'pasted.txt']);
    expect(bot.llm.requests).toHaveLength(2);
    // The reply was files alone: the model's next request names both and carries the image.
    const last = bot.llm.bodies[1]!.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(JSON.stringify(last.content)).toContain(`data:image/png;base64,${TINY_PNG.toString('base64')}`);
    expect(JSON.stringify(last.content)).toContain('uploads/pasted.txt');
  });

  it('a file over MAX_FILE_BYTES is refused on the page, naming the cap, before any upload', async () => {
    const { page, requested } = await setup({ MAX_FILE_BYTES: '1024' });
    await attachWithButton(page, '#channel-composer', [
      { name: 'big.bin', mimeType: 'application/octet-stream', buffer: randomBytes(4096) },
    ]);
    await page.locator('#channel-messages li.whisper', { hasText: 'MAX_FILE_BYTES' }).waitFor();
    expect(await page.locator('#channel-messages li.whisper').textContent()).toContain('big.bin is 4 KB, over 1 KB');
    expect(await page.locator('#channel-composer .attached .file-chip').count()).toBe(0);
    expect(requested.some((url) => url.includes('/api/uploads'))).toBe(false);
  });
});
