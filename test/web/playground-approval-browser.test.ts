// A call too long for its card, in the playground as a person uses it (the bot as a child
// process against FakeOpenAI, the page in headless Chromium): the card shows the command's
// start and end, and "Show all to decide" instead of Approve; it opens every character in a
// dialog whose Approve runs the call once. Nothing reaches the internet.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { BotProcess } from '../support/bot-process.js';
import { coreTestEnv } from '../support/core-env.js';
import { tempDir } from '../support/test-connector.js';
import { answerWith, chromiumForFile, mention, printedUrl, thread } from './browser.js';

const browser = chromiumForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('Show all in the playground', () => {
  it('a long command is approved from the dialog Show all opens, never from its card', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const llm = await new FakeOpenAI().start();
    cleanups.push(() => llm.stop());
    const command = `echo start; ${'true && '.repeat(600)}echo the-end-of-it`;
    llm.replyToolCalls([{ name: 'run_shell', arguments: { command } }]);
    llm.replyText('Ran it.');
    const bot = await BotProcess.start(
      { ...coreTestEnv(dir.path, llm), PERMISSION_MODE: 'interactive' },
      dir.path,
      20_000,
      { waitFor: 'playground' },
    );
    cleanups.push(() => bot.kill());
    // The address printed for the person, its token in the fragment (the log line has none).
    const url = printedUrl(bot.stdout);
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    cleanups.push(() => page.close());
    await page.goto(url);
    await page.locator('#connection[data-state="live"]').waitFor();

    await mention(page, '@bot run the long one');
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="show_all"]').waitFor();
    expect(await card.locator('button').allTextContents()).toEqual(['Show all to decide', 'Deny']);
    expect(await card.locator('.omitted').textContent()).toMatch(/characters not shown here/);
    expect(await card.textContent()).toContain('echo the-end-of-it');

    await card.locator('button[data-choice="show_all"]').click();
    const dialog = page.locator('dialog.full-view');
    await dialog.waitFor();
    expect(await dialog.locator('pre').first().textContent()).toBe(command);
    await dialog.locator('button[data-choice="once"]').click();
    await answerWith(page, 'Ran it.').waitFor();
    await card.locator('.status', { hasText: 'Approved by @you' }).waitFor();
    expect(await dialog.count()).toBe(0);
    expect(llm.requests).toHaveLength(2);
  });
});
