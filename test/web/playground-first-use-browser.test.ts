// A newcomer's first minutes in the playground (headless Chromium against the real bot in
// process, its model FakeOpenAI): a bare @bot opens a thread that then takes replies and
// commands; while a card waits the thread says it waits for you; /forget's confirmation is
// seen after the thread goes; and in a window 400 px wide everything fits, nothing runs past
// the window's edge.
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { answerWith, chromiumForFile, idle, mention, reply, thread } from './browser.js';
import { bootWebBot, type WebBot } from './web-harness.js';

const browser = chromiumForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(viewport = { width: 1280, height: 800 }): Promise<{ bot: WebBot; page: Page }> {
  const bot = await bootWebBot();
  cleanups.push(() => bot.stop());
  const context = await browser().newContext({ viewport });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  await page.goto(bot.url);
  await page.locator('#connection[data-state="live"]').waitFor();
  return { bot, page };
}

/**
 * What reaches past the window's right edge: the page itself, and every visible element's box
 * (inside a box that scrolls its own content, code or a table, only that box counts). Run in
 * the page, as text: the test build has no DOM types.
 */
const OVERFLOWING = `(() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  if (document.documentElement.scrollWidth > width) found.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
  for (const element of document.querySelectorAll('body *')) {
    if (element.parentElement && element.parentElement.closest('pre, .table-box')) continue;
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.right > width + 0.5) found.push(element.tagName.toLowerCase() + '.' + element.className + ' ends at ' + Math.round(box.right) + ' px');
  }
  return found;
})()`;

async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(OVERFLOWING);
}

describe('the playground for a newcomer', () => {
  it('a bare @bot opens a thread that takes a reply and a thread command', async () => {
    const { bot, page } = await setup();
    await mention(page, '@bot');
    await thread(page).locator('li[data-kind="bot"]', { hasText: 'Reply in this thread with what you need' }).waitFor();
    expect(await page.locator('li.whisper').count()).toBe(0);

    await reply(page, '/status');
    await thread(page).locator('li.whisper').waitFor();
    bot.llm.replyText('Here to help.');
    await reply(page, 'what can you do?');
    await answerWith(page, 'Here to help.').waitFor();
    expect(JSON.stringify(bot.llm.bodies[0]!.messages)).toContain('what can you do?');
    await idle(page);
  });

  it('while a card waits, the thread and the channel say it waits for your approval; after the click they do not', async () => {
    const { bot, page } = await setup();
    bot.llm.replyToolCalls([{ id: 'call_w', name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } }]);
    bot.llm.replyText('Written.');
    await mention(page, '@bot write a.txt');
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="once"]').waitFor();
    await page.locator('#thread-status', { hasText: 'Waiting for your approval on the card above…' }).waitFor();
    expect(await page.locator('#channel-messages .replies').textContent()).toContain('waiting for your approval');

    await card.locator('button[data-choice="once"]').click();
    await answerWith(page, 'Written.').waitFor();
    await idle(page);
    expect(await page.locator('#thread-status').textContent()).toBe('');
    expect(await page.locator('#channel-messages .replies').textContent()).not.toContain('waiting');
  });

  it('/forget: the thread goes, and its confirmation is seen in the channel', async () => {
    const { bot, page } = await setup();
    bot.llm.replyText('Noted.');
    await mention(page, '@bot remember the plan');
    await answerWith(page, 'Noted.').waitFor();
    await idle(page);
    await reply(page, '/forget');
    await page.locator('#thread-pane').waitFor({ state: 'hidden' });
    const confirmation = page.locator('#channel-messages li.whisper', {
      hasText: 'Forgotten: everything I stored for this thread is deleted.',
    });
    await confirmation.waitFor();
    expect(await confirmation.isVisible()).toBe(true);
  });

  it('in a window 400 px wide the panes fit: the channel, then the open thread with an answer, a card, code and a table', async () => {
    const { bot, page } = await setup({ width: 400, height: 760 });
    expect(await overflowing(page)).toEqual([]);
    const longLine = `echo ${'x'.repeat(300)}`;
    bot.llm.replyToolCalls(
      [
        {
          id: 'call_w',
          name: 'write_file',
          arguments: { path: `notes/${'long-folder-name/'.repeat(5)}a.txt`, content: `${longLine}\n` },
        },
      ],
      {
        text: `Plan: see https://example.com/${'a-very-long-path-segment/'.repeat(6)} and\n\n\`\`\`\n${longLine}\n\`\`\`\n\n| Column one | Column two | Column three | Column four |\n|---|---|---|---|\n| ${'cell '.repeat(8)} | b | c | d |`,
      },
    );
    await mention(page, `@bot write the notes ${'please '.repeat(20)}`);
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="once"]').waitFor();
    await page.locator('#thread-status', { hasText: 'Waiting for your approval' }).waitFor();
    expect(await page.locator('#thread-pane').isVisible()).toBe(true);
    expect(await overflowing(page)).toEqual([]);
    // The approve buttons and the reply box are within reach.
    for (const control of [
      card.locator('button[data-choice="once"]'),
      page.locator('#thread-composer textarea'),
      page.locator('#thread-close'),
    ]) {
      const box = await control.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 400).toBe(true);
    }

    await page.locator('#thread-close').click();
    await page.locator('#channel-pane').waitFor({ state: 'visible' });
    expect(await overflowing(page)).toEqual([]);
  });
});
