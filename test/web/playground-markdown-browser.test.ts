// What a model writes, as the playground page draws it (headless Chromium against the real bot
// in process, its model FakeOpenAI): Markdown rendered (headings, lists, links, tables, quotes,
// code), hostile markup shown as text and never run, a link only to an http(s) address; and a
// tool's result on its card readable and wrapped, with the whole result behind a toggle.
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { answerWith, chromiumForFile, idle, mention, thread } from './browser.js';
import { bootWebBot, type WebBot } from './web-harness.js';

const browser = chromiumForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(env: Record<string, string> = {}): Promise<{ bot: WebBot; page: Page }> {
  const bot = await bootWebBot({ env });
  cleanups.push(() => bot.stop());
  const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  await page.goto(bot.url);
  await page.locator('#connection[data-state="live"]').waitFor();
  return { bot, page };
}

const ANSWER = [
  '## Plan',
  '',
  'Three steps, **in order**:',
  '1. Build with `npm run build`',
  '2. Read [the docs](https://example.com/docs)',
  '3. Ship',
  '   - on *Friday*',
  '',
  '> Measure twice.',
  '',
  '| File | Lines |',
  '|------|------:|',
  '| a.ts | 120 |',
  '',
  '```sh',
  'npm test',
  '```',
  '',
  "Hostile: [click me](javascript:document.title='pwned') <img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>",
].join('\n');

describe("a model's Markdown on the playground page", () => {
  it('renders headings, lists, links, tables, quotes and code, and shows hostile markup as text', async () => {
    const { bot, page } = await setup();
    bot.llm.replyText(ANSWER);
    await mention(page, '@bot plan the release');
    await answerWith(page, 'Hostile').waitFor();
    await idle(page);
    const answer = thread(page).locator('li[data-kind="answer"]').last();

    expect(await answer.locator('h4').textContent()).toBe('Plan');
    expect(await answer.locator('p strong').first().textContent()).toBe('in order');
    expect(await answer.locator('ol > li').count()).toBe(3);
    expect(await answer.locator('ol > li').first().textContent()).toBe('Build with npm run build');
    expect(await answer.locator('ol > li code').textContent()).toBe('npm run build');
    expect(await answer.locator('ol > li ul > li em').textContent()).toBe('Friday');
    const link = answer.locator('a', { hasText: 'the docs' });
    expect(await link.getAttribute('href')).toBe('https://example.com/docs');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toContain('noopener');
    expect(await answer.locator('blockquote').textContent()).toBe('Measure twice.');
    expect(await answer.locator('table th').allTextContents()).toEqual(['File', 'Lines']);
    expect(await answer.locator('table td').allTextContents()).toEqual(['a.ts', '120']);
    expect(
      await answer
        .locator('table td')
        .last()
        .evaluate((cell: { style: { textAlign: string } }) => cell.style.textAlign),
    ).toBe('right');
    expect(await answer.locator('pre code').textContent()).toBe('npm test');

    // The hostile line: no element made of it, every character shown, nothing run.
    expect(await thread(page).locator('img, script').count()).toBe(0);
    expect(await answer.locator('a').count()).toBe(1);
    const hostile = (await answer.locator('p').last().textContent()) ?? '';
    expect(hostile).toContain("[click me](javascript:document.title='pwned')");
    expect(hostile).toContain('<img src=x onerror="document.title=\'pwned\'">');
    expect(hostile).toContain("<script>document.title='pwned'</script>");
    expect(await page.title()).not.toBe('pwned');
  });

  it("a tool's JSON result reads as lines on its card, wrapped, and the toggle shows the whole result", async () => {
    const { bot, page } = await setup({ PERMISSION_MODE: 'auto' });
    const path = `reports/${'a-rather-long-folder-name/'.repeat(6)}summary.md`;
    bot.llm.replyToolCalls([{ id: 'call_write', name: 'write_file', arguments: { path, content: '# Summary\n' } }]);
    bot.llm.replyText('Written.');
    await mention(page, '@bot write the summary');
    await answerWith(page, 'Written.').waitFor();
    const card = thread(page).locator('li[data-kind="card"]');
    const result = card.locator('.result');
    await result.waitFor();
    expect((await result.textContent())?.split('\n')).toEqual([`path: ${path}`, 'bytesWritten: 10', 'created: true']);
    // Wrapped in the card: nothing runs past its edge.
    expect(
      await result.evaluate((pre: { scrollWidth: number; clientWidth: number }) => pre.scrollWidth <= pre.clientWidth),
    ).toBe(true);

    const toggle = card.locator('details.result-full');
    await toggle.locator('summary').click();
    await toggle.locator('summary', { hasText: 'Full result (JSON)' }).waitFor();
    expect(JSON.parse((await toggle.locator('pre').textContent()) ?? '')).toEqual({
      path,
      bytesWritten: 10,
      created: true,
    });
    await idle(page);
  });

  it('a long text result: its first lines on the card, every line behind the toggle', async () => {
    const { bot, page } = await setup({ PERMISSION_MODE: 'auto' });
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i + 1}: ${'word '.repeat(12).trim()}`);
    bot.llm.replyToolCalls([
      { id: 'call_write', name: 'write_file', arguments: { path: 'long.txt', content: `${lines.join('\n')}\n` } },
    ]);
    bot.llm.replyToolCalls([{ id: 'call_read', name: 'read_file', arguments: { path: 'long.txt' } }]);
    bot.llm.replyText('Read it.');
    await mention(page, '@bot write and read long.txt');
    await answerWith(page, 'Read it.').waitFor();
    const card = thread(page).locator('li[data-kind="card"]', { hasText: 'read_file' });
    const shown = (await card.locator('.result').textContent()) ?? '';
    expect(shown.split('\n').slice(0, 2)).toEqual([lines[0], lines[1]]);
    expect(shown.endsWith('…')).toBe(true);
    await card.locator('details.result-full summary').click();
    await card.locator('details.result-full pre', { hasText: 'line 60:' }).waitFor();
    // read_file's result: the file's lines as they are (its last line break is not a line).
    expect(await card.locator('details.result-full pre').textContent()).toBe(lines.join('\n'));
    await idle(page);
  });
});
