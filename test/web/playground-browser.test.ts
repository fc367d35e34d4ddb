// `npm run playground` as a person uses it: the bot as a child process (main.ts --playground)
// against FakeOpenAI, the page in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core). Scenarios: a mention and its streamed answer; a write that needs approval,
// approved from its card, which runs once and updates in place; a reply that steers the
// running turn; 🛑 during a stalled stream; a restart with an approval pending, then the click
// in the page opened at the new address. Everything is on loopback; nothing reaches the internet.
//
// A screenshot of a thread with a card and its buttons goes to docs/playground.png when
// UPDATE_SCREENSHOT=1, else to a temporary folder.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { BotProcess } from '../support/bot-process.js';
import { coreTestEnv } from '../support/core-env.js';
import { tempDir } from '../support/test-connector.js';
import { freePort } from '../support/loopback-port.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { printedUrl } from './browser.js';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOT = fileURLToPath(new URL('../../docs/playground.png', import.meta.url));

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(env: Record<string, string> = {}) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const llm = await new FakeOpenAI().start();
  cleanups.push(() => llm.stop());
  const settings = { ...coreTestEnv(dir.path, llm), PERMISSION_MODE: 'interactive', ...env };
  const boot = async () => {
    const bot = await BotProcess.start(settings, dir.path, 20_000, { waitFor: 'playground' });
    cleanups.push(() => bot.kill());
    return bot;
  };
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  cleanups.push(() => page.close());
  return { dir: dir.path, llm, boot, page };
}

/** The address printed for the person, token included; the log never has the token. */
function urlOf(bot: BotProcess): string {
  const url = printedUrl(bot.stdout);
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token');
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(bot.startedLine.url).toBe(`${new URL(url).origin}/`);
  const logLines = bot.stdout.split('\n').filter((line) => line.startsWith('{'));
  expect(logLines.length).toBeGreaterThan(0);
  expect(logLines.join('\n')).not.toContain(token);
  return url;
}

async function mention(page: Page, text: string): Promise<void> {
  await page.locator('#channel-composer textarea').fill(text);
  await page.locator('#channel-composer textarea').press('Enter');
  await page.locator('#thread-pane').waitFor({ state: 'visible' });
}

async function reply(page: Page, text: string): Promise<void> {
  await page.locator('#thread-composer textarea').fill(text);
  await page.locator('#thread-composer textarea').press('Enter');
}

const thread = (page: Page) => page.locator('#thread-messages');

describe('the playground in a browser', () => {
  it('a mention streams the answer; a write asks on its card; Approve runs it once and the card updates in place', async () => {
    const { dir, llm, boot, page } = await setup();
    llm.replyAnswer({
      text: 'Sure, I will write the note first.',
      toolCalls: [
        {
          id: 'call_note',
          name: 'write_file',
          arguments: { path: 'notes.txt', content: 'Ship the playground on Friday.\n' },
        },
      ],
    });
    // Model text is text: markup in it must show as written, never run.
    llm.replyText('Done: **notes.txt** now holds your note. <img src=x onerror="document.title=\'pwned\'">');
    const bot = await boot();
    await page.goto(urlOf(bot));
    await page.locator('#connection[data-state="live"]').waitFor();

    await mention(page, '@bot please write a note to notes.txt: ship the playground on Friday');
    await thread(page).locator('li[data-kind="answer"]', { hasText: 'Sure, I will write the note first.' }).waitFor();
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="once"]').waitFor();
    expect(await card.locator('.card').textContent()).toContain('Ship the playground on Friday.');
    await expect(card.locator('button').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['Approve', 'Deny']),
    );
    const cardId = await card.getAttribute('data-id');

    const shot = process.env.UPDATE_SCREENSHOT === '1' ? SCREENSHOT : join(dir, 'playground.png');
    await page.screenshot({ path: shot });

    await card.locator('button[data-choice="once"]').click();
    await thread(page).locator('li[data-kind="answer"]', { hasText: 'now holds your note' }).waitFor();
    await card.locator('.status', { hasText: 'Approved by @you' }).waitFor();
    expect(await thread(page).locator('li[data-kind="card"]').count()).toBe(1);
    expect(await card.getAttribute('data-id')).toBe(cardId);
    expect(await card.locator('button').count()).toBe(0);
    expect(await readFile(inOnlyConversation(join(dir, 'workspace'), 'notes.txt'), 'utf8')).toBe(
      'Ship the playground on Friday.\n',
    );
    expect(llm.requests).toHaveLength(2);
    // Rendered as text: the bold mark is a <strong>, nothing else became markup.
    expect(await thread(page).locator('li[data-kind="answer"] strong').last().textContent()).toBe('notes.txt');
    await thread(page).locator('li[data-kind="answer"] .footer').last().waitFor();
    expect(await thread(page).locator('li[data-kind="answer"] img').count()).toBe(0);
    expect(await thread(page).locator('li[data-kind="answer"]').last().textContent()).toContain('<img src=x onerror=');
    expect(await page.title()).not.toBe('pwned');
  });

  it('a reply while the model works steers the running turn, and its answer is a new message below the reply', async () => {
    const { llm, boot, page } = await setup();
    const held = llm.replyTextHeld(
      'Deploying to production: checking the build, then the migrations, then the rollout.',
    );
    llm.replyText('Understood: staging it is.');
    const bot = await boot();
    await page.goto(urlOf(bot));
    await mention(page, '@bot deploy the app');
    await thread(page).locator('li[data-kind="answer"]', { hasText: 'Deplo' }).waitFor();

    await reply(page, 'no, use staging');
    const steering = thread(page).locator('li[data-kind="input"]', { hasText: 'no, use staging' });
    await steering.locator('.mark-received').waitFor();
    held.release();
    await thread(page).locator('li[data-kind="answer"]', { hasText: 'staging it is' }).waitFor();
    await steering.locator('.mark-taken').waitFor();
    expect(llm.requests).toHaveLength(2);
    expect(JSON.stringify(llm.bodies[1]!.messages)).toContain('no, use staging');
    // In the thread's order: the first answer, the reply, then the answer to the reply.
    const texts = await thread(page).locator('li[data-kind="answer"], li[data-kind="input"]').allTextContents();
    const order = texts.map((text) =>
      text.includes('staging it is')
        ? 'second'
        : text.includes('no, use staging')
          ? 'reply'
          : text.includes('Deploying')
            ? 'first'
            : 'other',
    );
    expect(order.filter((o) => o !== 'other')).toEqual(['first', 'reply', 'second']);
  });

  it('🛑 during a stalled stream stops the turn and keeps the partial text; a reply as soon as "Stopped" shows starts the next turn', async () => {
    const { llm, boot, page } = await setup();
    llm.replyStallAfter(3, { text: 'This answer starts, then the server goes quiet forever.' });
    llm.replyText('Again, from the top.');
    const bot = await boot();
    await page.goto(urlOf(bot));
    await mention(page, '@bot tell me a long story');
    await thread(page).locator('li[data-kind="answer"]', { hasText: 'This answ' }).waitFor();

    await page.locator('#thread-stop').click();
    await thread(page).locator('li[data-kind="note"]', { hasText: 'Stopped by @you' }).waitFor();
    await reply(page, 'again');
    expect(await thread(page).locator('li[data-kind="answer"]').first().textContent()).toContain('This answ');
    await llm.waitForClientClose(0, 5_000);
    await thread(page).locator('li[data-kind="answer"]', { hasText: 'Again, from the top.' }).waitFor();
    expect(JSON.stringify(llm.bodies[1]!.messages.at(-1))).toContain('again');
    expect(
      await thread(page).locator('li[data-kind="input"]', { hasText: 'again' }).locator('.mark-dropped').count(),
    ).toBe(0);
  });

  it('after a restart with an approval pending, the open tab says the token changed; the click in the page at the new address approves and runs the call once', async () => {
    const { dir, llm, boot, page } = await setup({ PLAYGROUND_PORT: String(await freePort()) });
    llm.replyToolCalls([
      { id: 'call_restart', name: 'write_file', arguments: { path: 'after-restart.txt', content: 'written once\n' } },
    ]);
    const first = await boot();
    const url = urlOf(first);
    await page.goto(url);
    await mention(page, '@bot write after-restart.txt');
    await thread(page).locator('li[data-kind="card"] button[data-choice="once"]').waitFor();
    await first.kill();

    llm.replyText('Written after the restart.');
    const second = await boot();
    // The same port, a new token: the open tab says so; the new address works.
    const again = urlOf(second);
    expect(new URL(again).origin).toBe(new URL(url).origin);
    expect(again).not.toBe(url);
    await page.locator('#connection[data-state="restarted"]').waitFor({ timeout: 30_000 });
    await page.goto(again);
    await page.locator('#connection[data-state="live"]').waitFor();
    // The new address opens the channel; the thread is one click away.
    await page.locator('#channel-messages li[data-thread] .replies').first().click();
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="once"]').click();
    await thread(page).locator('li[data-kind="answer"]', { hasText: 'Written after the restart.' }).waitFor();
    await card.locator('.status', { hasText: 'Approved by @you' }).waitFor();
    expect(await thread(page).locator('li[data-kind="card"]').count()).toBe(1);
    expect(await readFile(inOnlyConversation(join(dir, 'workspace'), 'after-restart.txt'), 'utf8')).toBe(
      'written once\n',
    );
    expect(llm.requests).toHaveLength(2);
  });
});
