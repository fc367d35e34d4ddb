// The playground suite: how soon a person sees the answer in the playground page. The whole
// bot runs as in the playground's tests (test/web/web-harness.ts): the real core and the real
// OpenAI SDK against FakeOpenAI, the real WebConnector on a loopback port, and the page in
// headless Chromium (/usr/bin/chromium, driven by playwright-core). A person mentions the bot;
// the figure is the time from the fake model server writing the first token to that text
// being on the page: in the DOM, and a frame later (requestAnimationFrame), drawn.
//
// Both ends read the same clock: `performance.timeOrigin + performance.now()`, anchored to the
// system clock in Node and in the browser alike. Reported as median and p99 over RUNS mentions
// in one page (after WARMUP unreported ones: the first pays for compiling the page's code).
import { chromium } from 'playwright-core';
import type { FakeReply, RecordedRequest, SseEvent } from '../test/fakes/http-fake.js';
import { answerEvents } from '../test/fakes/openai-server.js';
import { waitFor } from '../test/support/engine-kit.js';
import { bootWebBot } from '../test/web/web-harness.js';
import { median, percentile } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const RUNS = 20;
const WARMUP = 2;
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
const ANSWER = 'The deploy finished and every check passed on the first try. '.repeat(4);

/**
 * Runs in the page: remember the answers already drawn, then note when a new one first shows
 * text (and the next frame after that) on `window.__firstVisible`.
 */
const WATCH_NEXT_ANSWER = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const seen = new Set([...document.querySelectorAll('li[data-kind="answer"]')].map((li) => li.dataset.id));
  window.__firstVisible = undefined;
  const observer = new MutationObserver(() => {
    for (const li of document.querySelectorAll('#thread-messages li[data-kind="answer"]')) {
      if (seen.has(li.dataset.id) || !(li.querySelector('.answer-text')?.textContent ?? '')) continue;
      observer.disconnect();
      const inDom = now();
      requestAnimationFrame(() => { window.__firstVisible = { inDom, drawn: now() }; });
      return;
    }
  });
  observer.observe(document.body, { childList: true, subtree: true, characterData: true });
})()`;

async function measure(): Promise<{ inDom: number[]; drawn: number[] }> {
  // One person, many mentions a minute: the fair-use cap (10 turns a minute) would refuse the 11th.
  const bot = await bootWebBot({ env: { TURNS_PER_USER_PER_MINUTE: '1000' } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(bot.url);
    await page.locator('#connection[data-state="live"]').waitFor();
    const inDom: number[] = [];
    const drawn: number[] = [];
    for (let run = 0; run < WARMUP + RUNS; run++) {
      let firstTokenAt = Number.NaN;
      bot.llm.reply((request: RecordedRequest): FakeReply => {
        // The role-only opening event is dropped: the first event written is the first token,
        // and it leaves as this function returns.
        const events: SseEvent[] = answerEvents(request, { text: ANSWER, chunkSize: 4 }).slice(1);
        firstTokenAt = performance.timeOrigin + performance.now();
        return { kind: 'sse', events, delayMs: 1 };
      });
      await page.evaluate(WATCH_NEXT_ANSWER);
      await page.locator('#channel-composer textarea').fill(`@bot release notes, run ${run}`);
      await page.locator('#channel-composer textarea').press('Enter');
      // A function, not a string: the page's Content-Security-Policy forbids eval.
      await page.waitForFunction(
        () => (globalThis as { __firstVisible?: unknown }).__firstVisible !== undefined,
        undefined,
        { timeout: 10_000 },
      );
      const seen = await page.evaluate<{ inDom: number; drawn: number }>('window.__firstVisible');
      await bot.idle();
      await waitFor(() => !Number.isNaN(firstTokenAt), 5_000);
      if (run < WARMUP) continue;
      inDom.push(seen.inDom - firstTokenAt);
      drawn.push(seen.drawn - firstTokenAt);
    }
    return { inDom, drawn };
  } finally {
    await browser.close();
    await bot.stop();
  }
}

export const playgroundSuite: BenchSuite = {
  name: 'playground',
  async run(): Promise<BenchRow[]> {
    const { inDom, drawn } = await measure();
    const note = `first model token sent by the fake → first answer text on the page, headless Chromium, ${RUNS} mentions`;
    return [
      {
        key: 'playground.first_visible_ms',
        value: median(drawn),
        unit: 'ms',
        note: `median; ${note}, drawn (next animation frame)`,
      },
      { key: 'playground.first_visible_p99_ms', value: percentile(drawn, 99), unit: 'ms', note: `p99; ${note}, drawn` },
      { key: 'playground.first_in_dom_ms', value: median(inDom), unit: 'ms', note: `median; ${note}, in the DOM` },
    ];
  },
};
