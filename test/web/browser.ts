// The playground page in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core), and what a person does there: mention the bot, reply in the thread, read
// the thread in order. Shared by the browser suites of test/web/.
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** One Chromium for the calling test file: launched before its first test, closed after its last. */
export function chromiumForFile(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser)
      throw new Error('Chromium is not running: chromiumForFile() must be called at the top of a test file');
    return browser;
  };
}

/** A message in the channel that mentions the bot; resolves once its thread is open. */
export async function mention(page: Page, text: string): Promise<void> {
  await page.locator('#channel-composer textarea').fill(text);
  await page.locator('#channel-composer textarea').press('Enter');
  await page.locator('#thread-pane').waitFor({ state: 'visible' });
}

export async function reply(page: Page, text: string): Promise<void> {
  await page.locator('#thread-composer textarea').fill(text);
  await page.locator('#thread-composer textarea').press('Enter');
}

export const thread = (page: Page): Locator => page.locator('#thread-messages');

/** An answer of the open thread that holds `text`. */
export const answerWith = (page: Page, text: string): Locator =>
  thread(page).locator('li[data-kind="answer"]', { hasText: text });

/** Until the open thread's turn is over (its status line says so). */
export async function idle(page: Page): Promise<void> {
  await page.locator('#thread-status[data-status="idle"]').waitFor({ state: 'attached' });
}

/** The little of a DOM element the reading below needs (the test build has no DOM types). */
interface ListItem {
  getAttribute(name: string): string | null;
  querySelector(selector: string): { textContent: string | null } | null;
}

/** The open thread as the person reads it, top to bottom: each item's kind and its first words. */
export async function threadOrder(page: Page): Promise<string[]> {
  return thread(page)
    .locator('> li')
    .evaluateAll((items: ListItem[]) =>
      items.map(
        (item) =>
          `${item.getAttribute('data-kind') ?? '?'}: ${(item.querySelector('.msg-body')?.textContent ?? '').trim().slice(0, 40)}`,
      ),
    );
}

/** Until at least `count` elements match. */
export async function waitForCount(locator: Locator, count: number): Promise<void> {
  await locator.nth(count - 1).waitFor();
}

/**
 * The address `npm run playground` printed for the person who ran it, token included (the
 * JSON log line has the address only: the token is kept out of the log).
 */
export function printedUrl(stdout: string): string {
  const url = /^Playground: open (http:\/\/\S+)$/m.exec(stdout)?.[1];
  if (!url) throw new Error(`no "Playground: open …" line in stdout:\n${stdout.slice(-2000)}`);
  return url;
}
