// Files in the playground page, as a person handles them, in headless Chromium against the
// real core and connector (in process, FakeOpenAI): 📎 opens the file chooser and the chosen
// file goes with the message; a file dropped on the thread goes with a reply; a file over
// MAX_FILE_BYTES is refused on the page before any upload; a file the bot posts shows as a
// link that downloads the very bytes (fetched with the token in a header, never in the URL).
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionKey } from '../../src/store/session-store.js';
import { answerWith, chromiumForFile, idle, mention, thread } from './browser.js';
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
async function attachWithButton(page: Page, composer: string, files: { name: string; mimeType: string; buffer: Buffer }[]): Promise<void> {
  const chooser = page.waitForEvent('filechooser');
  await page.locator(`${composer} button.attach`).click();
  await (await chooser).setFiles(files);
}

describe('files in the playground page', () => {
  it('📎 attaches a file to a mention: it is uploaded, shown on the message, and staged byte for byte', async () => {
    const { bot, page, requested } = await setup();
    bot.llm.replyText('Thanks for the table.');
    const csv = Buffer.from('city,people\nLyon,522000\nNantes,320000\n');
    await attachWithButton(page, '#channel-composer', [{ name: 'cities.csv', mimeType: 'text/csv', buffer: csv }]);
    expect(await page.locator('#channel-composer .attached .file-chip').allTextContents()).toEqual([expect.stringContaining('cities.csv') as unknown as string]);
    await mention(page, '@bot what is in this table?');
    await answerWith(page, 'Thanks for the table.').waitFor();
    await idle(page);

    const root = thread(page).locator('li[data-kind="input"]').first();
    expect(await root.locator('.file-chip .name').allTextContents()).toEqual(['cities.csv']);
    expect(await page.locator('#channel-composer .attached').isHidden()).toBe(true);
    const [stored] = bot.connector.threads.all();
    const shown = stored!.messages[0]!;
    if (shown.kind !== 'input' || !shown.files?.[0]) throw new Error('the root carries no file');
    expect(shown.files[0]).toMatchObject({ name: 'cities.csv', size: csv.length, mimeType: 'text/csv' });
    const download = await bot.core.files.source('web')!.open({ platform: 'web', id: shown.files[0].id, name: 'cities.csv', url: `web-upload:${shown.files[0].id}` }, new AbortController().signal);
    const chunks: Buffer[] = [];
    for await (const chunk of download.body as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(Buffer.concat(chunks)).toEqual(csv);
    expect(requested.join('\n')).not.toContain(bot.token);
  });

  it('a file dropped on the open thread goes with the reply, alone (a message made only of a file)', async () => {
    const { bot, page } = await setup();
    bot.llm.replyText('Hello.');
    bot.llm.replyText('A picture, I see.');
    await mention(page, '@bot hello');
    await answerWith(page, 'Hello.').waitFor();
    await idle(page);

    const png = randomBytes(200);
    // What a drop hands the page: a DataTransfer holding the file (built in the page; the test build has no DOM types).
    const dropped = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      const bytes = Uint8Array.from(atob('${png.toString('base64')}'), (char) => char.charCodeAt(0));
      transfer.items.add(new File([bytes], 'screenshot.png', { type: 'image/png' }));
      return transfer;
    })()`);
    await page.locator('#thread-pane').dispatchEvent('drop', { dataTransfer: dropped });
    await page.locator('#thread-composer .attached .file-chip', { hasText: 'screenshot.png' }).waitFor();
    await page.locator('#thread-composer button.send').click();
    await answerWith(page, 'A picture, I see.').waitFor();
    const inputs = thread(page).locator('li[data-kind="input"]');
    expect(await inputs.nth(1).locator('.file-chip .name').allTextContents()).toEqual(['screenshot.png']);
    expect(bot.llm.requests).toHaveLength(2);
  });

  it('a file over MAX_FILE_BYTES is refused on the page, naming the cap, before any upload', async () => {
    const { page, requested } = await setup({ MAX_FILE_BYTES: '1024' });
    await attachWithButton(page, '#channel-composer', [{ name: 'big.bin', mimeType: 'application/octet-stream', buffer: randomBytes(4096) }]);
    await page.locator('#channel-messages li.whisper', { hasText: 'MAX_FILE_BYTES' }).waitFor();
    expect(await page.locator('#channel-messages li.whisper').textContent()).toContain('big.bin is 4 KiB, over 1 KiB');
    expect(await page.locator('#channel-composer .attached .file-chip').count()).toBe(0);
    expect(requested.some((url) => url.includes('/api/uploads'))).toBe(false);
  });

  it("a file the bot posts shows as a link; clicking it downloads the same bytes under the file's name", async () => {
    const { bot, page, requested } = await setup();
    bot.llm.replyText('Working on it.');
    await mention(page, '@bot clean the data');
    await answerWith(page, 'Working on it.').waitFor();
    await idle(page);

    const bytes = Buffer.concat([Buffer.from('id,value\n1,2\n'), randomBytes(50_000)]);
    const source = join(bot.dir, 'clean.csv');
    await writeFile(source, bytes);
    const [stored] = bot.connector.threads.all();
    const key: SessionKey = { platform: 'web', workspace: 'playground', channel: 'general', thread: stored!.id };
    await bot.core.files.sink('web')!.post(key, { path: source, name: 'clean.csv', mimeType: 'text/csv', size: bytes.length, comment: 'The cleaned data.' }, new AbortController().signal);

    const item = thread(page).locator('li[data-kind="file"]');
    await item.waitFor();
    expect(await item.locator('.text').textContent()).toBe('The cleaned data.');
    const link = item.locator('a.file-link');
    expect(await link.textContent()).toBe('clean.csv');
    const downloading = page.waitForEvent('download');
    await link.click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe('clean.csv');
    expect(await readFile(await download.path())).toEqual(bytes);
    expect(requested.filter((url) => url.includes('/api/files/'))).toHaveLength(1);
    expect(requested.join('\n')).not.toContain(bot.token);
  });
});
