// The page draws compact mode and feedback (headless Chromium against the real bot in process,
// its model FakeOpenAI): a reply's tool calls as one checklist updated in place, the call that
// asks with its own card, 👍 / 👎 under the final answer, the vote shown pressed, 👎's reason
// field; a reload draws the same from the stored thread.
import { afterEach, describe, expect, it } from 'vitest';
import { answerWith, chromiumForFile, idle, mention, thread } from './browser.js';
import { bootWebBot, type WebBot } from './web-harness.js';

const browser = chromiumForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(): Promise<{ bot: WebBot; page: import('playwright-core').Page }> {
  const bot = await bootWebBot({ env: { TOOL_DISPLAY: 'compact' } });
  cleanups.push(() => bot.stop());
  const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  await page.goto(bot.url);
  await page.locator('#connection[data-state="live"]').waitFor();
  return { bot, page };
}

describe('compact mode and feedback on the playground page', () => {
  it('draws the checklist, updated in place around the approval card, and 👍 / 👎 with a 👎 reason under the final answer', async () => {
    const { bot, page } = await setup();
    bot.llm.replyToolCalls(
      [
        { id: 'call_look', name: 'list_dir', arguments: { path: '.' } },
        { id: 'call_write', name: 'write_file', arguments: { path: 'notes.txt', content: 'compact <b>mode</b>\n' } },
      ],
      { text: 'Let me look first.' },
    );
    bot.llm.replyText('All done.');
    await mention(page, '@bot write my notes');

    const progress = thread(page).locator('li[data-kind="progress"]');
    const card = thread(page).locator('li[data-kind="card"]');
    await card.locator('button[data-choice="once"]').waitFor();
    expect(await progress.count()).toBe(1);
    expect(
      await progress
        .locator('.step')
        .evaluateAll((steps: { getAttribute(name: string): string | null }[]) =>
          steps.map((s) => `${s.getAttribute('data-step')}:${s.getAttribute('data-status')}`),
        ),
    ).toEqual(['call_look:pending', 'call_write:pending']);
    expect(await progress.locator('.step[data-step="call_write"] .step-title').textContent()).toBe('write_file');
    // Arguments are text, never markup.
    expect(await progress.locator('.step[data-step="call_write"] .step-details').textContent()).toContain(
      '<b>mode</b>',
    );
    expect(await progress.locator('.step b').count()).toBe(0);
    // No 👍 / 👎 on a reply that is not the turn's final answer.
    expect(await thread(page).locator('.feedback').count()).toBe(0);

    await card.locator('button[data-choice="once"]').click();
    await answerWith(page, 'All done.').waitFor();
    await idle(page);
    await progress.locator('.step[data-step="call_write"][data-status="complete"]').waitFor();
    expect(await progress.locator('.step[data-status="complete"]').count()).toBe(2);
    expect(await progress.locator('.step-mark').allTextContents()).toEqual(['✓', '✓']);
    expect(await progress.count()).toBe(1);
    const kinds = await thread(page)
      .locator('> li')
      .evaluateAll((items: { getAttribute(name: string): string | null }[]) =>
        items.map((item) => item.getAttribute('data-kind')),
      );
    expect(kinds).toEqual(['input', 'answer', 'progress', 'card', 'answer']);

    const final = answerWith(page, 'All done.');
    expect(await final.locator('.feedback button.vote').allTextContents()).toEqual(['👍', '👎']);
    expect(await thread(page).locator('.feedback').count()).toBe(1);
    await final.locator('button[data-vote="up"]').click();
    await final.locator('button[data-vote="up"][aria-pressed="true"]').waitFor();
    await thread(page).locator('li.whisper', { hasText: 'Thanks for the 👍' }).waitFor();
    expect(await final.locator('input.reason-text').count()).toBe(0);

    await final.locator('button[data-vote="down"]').click();
    await final.locator('button[data-vote="down"][aria-pressed="true"]').waitFor();
    expect(await final.locator('button[data-vote="up"]').getAttribute('aria-pressed')).toBe('false');
    await final.locator('input.reason-text').fill('It wrote the wrong file.');
    await final.locator('form.reason button').click();
    await final.locator('.reason-sent').waitFor();
    const totals = await bot.core.feedback.totals();
    expect(totals).toMatchObject({ up: 0, down: 1 });
    expect(totals.reasons.map((r) => r.reason)).toEqual(['It wrote the wrong file.']);

    // The thread is stored: a reload draws the same checklist and the same vote.
    await page.reload();
    await page.locator('#connection[data-state="live"]').waitFor();
    await answerWith(page, 'All done.').locator('button[data-vote="down"][aria-pressed="true"]').waitFor();
    expect(await thread(page).locator('li[data-kind="progress"] .step[data-status="complete"]').count()).toBe(2);
    expect(await answerWith(page, 'All done.').locator('.reason-sent').count()).toBe(1);
  }, 60_000);
});
