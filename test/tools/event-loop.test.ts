// No input blocks the event loop: a hostile page or a catastrophic search pattern costs the
// bot milliseconds of its event loop, never seconds, and a 🛑 stops a slow search at once.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/engine/index.js';
import { htmlToText, htmlToTextAsync } from '../../src/tools/html-text.js';
import { runningPatternWorkers } from '../../src/tools/pattern-worker.js';
import { searchTool } from '../../src/tools/search.js';
import { calmestStalls, CATASTROPHIC_LINE, hostilePages, writeCatastrophicWorkspace } from '../support/hostile-inputs.js';
import { asText, createSandbox, type Sandbox } from './tool-kit.js';

/**
 * Generous against a busy machine (and the calmest of three runs is taken, see calmestStalls);
 * the regex versions held the loop for seconds to minutes.
 */
const MAX_STALL_MS = 500;
const PAGE_CHARS = 2 * 1024 * 1024;

describe('a hostile page', () => {
  it.each(Object.entries(hostilePages(PAGE_CHARS)))('of 2 MiB (%s) becomes text without holding the event loop', async (_shape, page) => {
    const { result, maxDelayMs, longestTickGapMs } = await calmestStalls(() => htmlToTextAsync(page), MAX_STALL_MS);
    expect(maxDelayMs).toBeLessThan(MAX_STALL_MS);
    expect(longestTickGapMs).toBeLessThan(MAX_STALL_MS);
    expect(result).toEqual(htmlToText(page));
  });

  it('is read in linear time even in one synchronous pass', () => {
    for (const page of Object.values(hostilePages(PAGE_CHARS))) {
      const started = performance.now();
      htmlToText(page);
      // About 0.1 s here; the regex version would have taken minutes.
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });

  it('stops being read when the fetch is stopped', async () => {
    const controller = new AbortController();
    const reading = htmlToTextAsync(hostilePages(PAGE_CHARS)['unclosed inline tags']!, controller.signal);
    controller.abort(new Error('stopped by 🛑'));
    await expect(reading).rejects.toThrow('stopped by 🛑');
  });
});

describe('a catastrophic search pattern', () => {
  let sandbox: Sandbox;
  let search: ToolDefinition;
  const run = async (args: Record<string, unknown>, signal = new AbortController().signal): Promise<string> =>
    asText(await search.execute(search.schema.parse(args), { signal, toolCallId: 'call_search', sessionId: 'session-tools' }));

  beforeEach(async () => {
    sandbox = await createSandbox();
    search = searchTool(sandbox.builtin.workspace, 20_000, { timeLimitMs: 500 });
    await writeCatastrophicWorkspace(path.join(sandbox.workspace, 'data'), 1024 * 1024, 16 * 1024);
  });
  afterEach(async () => {
    await sandbox.cleanup();
  });

  it('is stopped after its time limit, says so, and never holds the event loop', async () => {
    const { result, maxDelayMs, longestTickGapMs } = await calmestStalls(() => run({ pattern: '^(a+)+$' }), MAX_STALL_MS);
    expect(result).toBe(
      'the pattern took too long (over 0.5 s) and was stopped; simplify it or use literal: true (no matches in the 0 file(s) searched before it was stopped)',
    );
    expect(maxDelayMs).toBeLessThan(MAX_STALL_MS);
    expect(longestTickGapMs).toBeLessThan(MAX_STALL_MS);
    expect(runningPatternWorkers()).toBe(0);
  });

  it('keeps the matches found before it was stopped', async () => {
    await writeFile(path.join(sandbox.workspace, 'a-first.txt'), 'no\nneedle here\n');
    const text = await run({ pattern: 'needle|^(a+)+$' });
    expect(text).toBe(
      'a-first.txt:2: needle here\n[the pattern took too long (over 0.5 s) and was stopped; simplify it or use literal: true; these are the matches in the 1 file(s) searched before that]',
    );
  });

  it('ends promptly on 🛑, with its worker terminated', async () => {
    const slow = searchTool(sandbox.builtin.workspace, 20_000, { timeLimitMs: 60_000 });
    const controller = new AbortController();
    const searching = slow.execute(slow.schema.parse({ pattern: '^(a+)+$' }), { signal: controller.signal, toolCallId: 'call_stop', sessionId: 'session-tools' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runningPatternWorkers()).toBe(1);
    const stopped = performance.now();
    controller.abort(new Error('stopped by 🛑'));
    await expect(searching).rejects.toThrow('stopped by 🛑');
    // Against the 60 s it would otherwise run: generous for a busy machine, far from the budget.
    expect(performance.now() - stopped).toBeLessThan(5_000);
    expect(runningPatternWorkers()).toBe(0);
  });

  it('as literal text is searched at once on the main thread', async () => {
    expect(await run({ pattern: '^(a+)+$', literal: true })).toBe(
      'no matches for /\\^\\(a\\+\\)\\+\\$/ in . (64 file(s) searched; .git and node_modules not entered)',
    );
    expect(runningPatternWorkers()).toBe(0);
    const hits = await run({ pattern: `${CATASTROPHIC_LINE.slice(-5)}`, literal: true, maxResults: 2 });
    expect(hits).toBe(`data/data-0000.txt:1: ${CATASTROPHIC_LINE}\ndata/data-0000.txt:2: ${CATASTROPHIC_LINE}\n[stopped at 2 matches; narrow the search with path or glob]`);
  });
});
