// Inputs that once froze the bot, and a meter for how long the event loop stood still
// while one was handled. Shared by test/tools/event-loop.test.ts and bench/tools.bench.ts.
//
// The pages are the shapes that made the old regex htmlToText quadratic: a tag opened and
// never closed makes `<tag\b[^>]*>` scan to the end of the page from every opening (the
// 2 MiB fetch cap extrapolated to 17 minutes), plus the deep nesting that makes
// htmlparser2's own Parser quadratic. The workspace holds lines on which `^(a+)+$`
// backtracks exponentially (27 `a`s took 4.6 s).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** A string of exactly `chars` characters, `unit` repeated. */
function filled(unit: string, chars: number): string {
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

/** Hostile pages of `chars` characters each, by name. */
export function hostilePages(chars: number): Record<string, string> {
  return {
    'unclosed inline tags': filled('<a ', chars),
    'unclosed block tags with attributes': filled('<div class="x" id="y" data-z=\'w\' ', chars),
    'unclosed scripts': filled('<script ', chars),
    'unclosed titles': filled('<title>', chars),
    'unclosed declarations': filled('<!x ', chars),
    'deep nesting closed by strangers': filled('<div>', chars / 2) + filled('</span>', chars / 2),
  };
}

/** A line on which `^(a+)+$` backtracks for minutes: many `a`s, then a character that fails the `$`. */
export const CATASTROPHIC_LINE = `${'a'.repeat(40)}!`;

/**
 * Fill `dir` with about `bytes` of text in files of `fileBytes`, every line a
 * CATASTROPHIC_LINE. Returns how many files were written.
 */
export async function writeCatastrophicWorkspace(dir: string, bytes: number, fileBytes = 64 * 1024): Promise<number> {
  const lines = Math.max(1, Math.floor(fileBytes / (CATASTROPHIC_LINE.length + 1)));
  const content = `${CATASTROPHIC_LINE}\n`.repeat(lines);
  const files = Math.max(1, Math.round(bytes / content.length));
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < files; i++) await writeFile(path.join(dir, `data-${String(i).padStart(4, '0')}.txt`), content);
  return files;
}

export interface Stalls<T> {
  result: T;
  /** The longest the event loop was held, per monitorEventLoopDelay (ms). */
  maxDelayMs: number;
  /** The longest gap between two ticks of a 10 ms interval (ms): 10 when nothing held it. */
  longestTickGapMs: number;
}

/**
 * How many times the event loop turned while `work` ran: a count of work, where a stall in
 * milliseconds is a count of the clock. Work that holds the loop lets it turn once per stretch
 * it holds it, whatever the machine; on a busy machine the stretches take longer, not fewer.
 * (The tests hold this count to the work's size; the bench reports the stalls in ms.)
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const turn = (): void => {
    if (!running) return;
    turns++;
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const result = await work();
    return { result, turns };
  } finally {
    running = false;
  }
}

/** Run `work` while watching the event loop: how long was it held at most? */
export async function measureStalls<T>(work: () => Promise<T>): Promise<Stalls<T>> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  let last = performance.now();
  let longestTickGapMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestTickGapMs = Math.max(longestTickGapMs, now - last);
    last = now;
  }, 10);
  try {
    const result = await work();
    // A stretch of synchronous work at the very end shows only once a tick lands after it.
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { result, maxDelayMs: histogram.max / 1e6, longestTickGapMs };
  } finally {
    clearInterval(ticker);
    histogram.disable();
  }
}
