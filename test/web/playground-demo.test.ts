// `npm run playground` as a newcomer runs it, with nothing set: no MODEL, no key, no .env. The
// bot is a child process (main.ts --playground, as `npm run playground` runs it), the page is
// in headless Chromium, and the model is the built-in demo: the terminal and the page say so,
// and a whole session shows every part of the product (a streamed answer, a write and a
// command approved on their cards, a reply that steers the running turn, 🛑 Stop). Nothing
// leaves the machine: there is no model server at all.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_NOTE_CONTENT, DEMO_NOTE_PATH, DEMO_STORY_SHORT } from '../../src/providers/demo-script.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { answerWith, chromiumForFile, idle, mention, printedUrl, reply, thread, waitForCount } from './browser.js';
import { inOnlyConversation } from '../support/conversation-folders.js';

const browser = chromiumForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('npm run playground without a model', () => {
  it('runs the demo model, says so, and a whole session works in Chromium: answer, approval, steer, stop', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    // Nothing configured: the defaults put the store and the workspace in the bot's folder.
    const bot = await BotProcess.start({}, dir.path, 60_000, { waitFor: 'playground' });
    cleanups.push(() => bot.kill());
    expect(bot.stdout).toContain('No MODEL is set, so the playground runs the demo model: scripted answers, no AI');
    expect(bot.stdout).toMatch(/set MODEL in \.env/);
    // Logged just after "Playground started", which start() waits for: it may be in the next chunk.
    await waitFor(() => bot.lines().some((line) => line.msg === 'running'), 30_000);
    expect(bot.lines().find((line) => line.msg === 'running')).toMatchObject({ model: 'demo' });
    const url = printedUrl(bot.stdout);

    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    cleanups.push(() => page.close());
    await page.goto(url);
    await page.locator('#connection[data-state="live"]').waitFor();
    const banner = page.locator('#demo-banner');
    expect(await banner.isVisible()).toBe(true);
    expect(await banner.textContent()).toMatch(/Demo model: scripted answers, no AI\.[\s\S]*set MODEL/);

    // An answer, streamed: the caret shows while it grows.
    await mention(page, '@bot hello');
    await thread(page).locator('li[data-kind="answer"] .caret').waitFor();
    await answerWith(page, 'scripted answers, no AI').waitFor();
    await idle(page);
    expect(await answerWith(page, 'long story').count()).toBe(1);

    // A write that asks first, approved on its card.
    await reply(page, 'file');
    const writeCard = thread(page).locator('li[data-kind="card"]', { hasText: 'write_file' });
    await writeCard.locator('button[data-choice="once"]').waitFor();
    expect(await writeCard.textContent()).toContain('asks unless always allowed in this thread');
    await writeCard.locator('button[data-choice="once"]').click();
    await answerWith(page, `Done: I wrote ${DEMO_NOTE_PATH}`).waitFor();
    await writeCard.locator('.status', { hasText: 'Approved by @you' }).waitFor();
    expect(await readFile(inOnlyConversation(join(dir.path, 'workspace'), DEMO_NOTE_PATH), 'utf8')).toBe(
      DEMO_NOTE_CONTENT,
    );
    await idle(page);

    // A command that asks first, approved, and what it printed.
    await reply(page, 'shell');
    const shellCard = thread(page).locator('li[data-kind="card"]', { hasText: 'run_shell' });
    await shellCard.locator('button[data-choice="once"]').waitFor();
    expect(await shellCard.textContent()).toContain(`cat ${DEMO_NOTE_PATH}`);
    await shellCard.locator('button[data-choice="once"]').click();
    await answerWith(page, 'The command printed (exit code 0)').waitFor();
    await idle(page);
    expect(await answerWith(page, 'The command printed').textContent()).toContain('# A note from the demo model');

    // A reply while the long answer is being written steers the running turn: the next answer follows it.
    await reply(page, 'tell me a long story');
    await answerWith(page, 'Once upon a time').waitFor();
    await reply(page, 'actually, make it short');
    const steering = thread(page).locator('li[data-kind="input"]', { hasText: 'actually, make it short' });
    await steering.locator('.mark-taken').waitFor({ timeout: 60_000 });
    await answerWith(page, 'Short version, as you asked (“actually, make it short”)').waitFor();
    // The story, short: its whole text once it has streamed in.
    await answerWith(page, DEMO_STORY_SHORT).waitFor();
    await idle(page);

    // 🛑 while the next one is being written: it stops there, with what was written kept.
    await reply(page, 'another long story please');
    await waitForCount(answerWith(page, 'Once upon a time'), 2);
    await page.locator('#thread-stop:enabled').click();
    await thread(page).locator('li[data-kind="note"]', { hasText: 'Stopped by @you' }).waitFor();
    await idle(page);
    const stopped = (await answerWith(page, 'Once upon a time').last().textContent()) ?? '';
    expect(stopped).toContain('Once upon');
    expect(stopped).not.toContain('The end.');
    expect(await page.locator('#thread-stop').isDisabled()).toBe(true);
    expect(bot.alive).toBe(true);
  }, 180_000);
});
