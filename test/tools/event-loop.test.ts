// No input blocks the event loop: a hostile page or a catastrophic search pattern costs the
// bot milliseconds of its event loop, never seconds, and a 🛑 stops a slow search at once.
// Held to work, not to the clock (a busy machine must not fail them): the loop turns at least
// once per slice of page it reads, a search in its worker leaves the loop free, and a page is
// read in linear CPU time. bench/tools.bench.ts reports the stalls in milliseconds.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/engine/index.js';
import { htmlToText, htmlToTextAsync } from '../../src/tools/html-text.js';
import { runningPatternWorkers } from '../../src/tools/pattern-worker.js';
import { searchTool } from '../../src/tools/search.js';
import { cpuMsOf } from '../support/cpu-time.js';
import { CATASTROPHIC_LINE, hostilePages, turnsDuring, writeCatastrophicWorkspace } from '../support/hostile-inputs.js';
import { waitFor } from '../support/engine-kit.js';
import { asText, createSandbox, type Sandbox } from './tool-kit.js';

const PAGE_CHARS = 2 * 1024 * 1024;
/** The most of a page read while the loop waits (the reader's slices are a quarter of it). */
const MOST_CHARS_PER_TURN = 256 * 1024;

describe('a hostile page', () => {
  it.each(Object.entries(hostilePages(PAGE_CHARS)))(
    'of 2 MiB (%s) becomes text without holding the event loop',
    async (_shape, page) => {
      const { result, turns } = await turnsDuring(() => htmlToTextAsync(page));
      // The regex version read the page in one stretch: the loop did not turn once.
      expect(turns).toBeGreaterThanOrEqual(PAGE_CHARS / MOST_CHARS_PER_TURN);
      expect(result).toEqual(htmlToText(page));
    },
  );

  it('is read in linear time even in one synchronous pass', () => {
    for (const page of Object.values(hostilePages(PAGE_CHARS))) {
      // About 0.1 s of CPU here; the regex version would have taken minutes.
      expect(cpuMsOf(() => htmlToText(page))).toBeLessThan(2_000);
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
    asText(
      await search.execute(search.schema.parse(args), {
        signal,
        toolCallId: 'call_search',
        sessionId: 'session-tools',
      }),
    );

  beforeEach(async () => {
    sandbox = await createSandbox();
    search = searchTool(sandbox.builtin.workspace, 20_000, { timeLimitMs: 500 });
    await writeCatastrophicWorkspace(path.join(sandbox.workspace, 'data'), 1024 * 1024, 16 * 1024);
  });
  afterEach(async () => {
    await sandbox.cleanup();
  });

  it('is stopped after its time limit, says so, and never holds the event loop', async () => {
    const { result, turns } = await turnsDuring(() => run({ pattern: '^(a+)+$' }));
    expect(result).toBe(
      'the pattern took too long (over 0.5 s) and was stopped; simplify it or use literal: true (no matches in the 0 file(s) searched before it was stopped)',
    );
    // The pattern runs in its worker: the loop stays free (thousands of turns; on the main
    // thread it would not have turned once in the 0.5 s).
    expect(turns).toBeGreaterThanOrEqual(100);
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
    const searching = slow.execute(slow.schema.parse({ pattern: '^(a+)+$' }), {
      signal: controller.signal,
      toolCallId: 'call_stop',
      sessionId: 'session-tools',
    });
    // Stopped while its worker searches (however long the worker takes to start on a busy machine).
    await waitFor(() => runningPatternWorkers() === 1, 15_000);
    const stopped = performance.now();
    controller.abort(new Error('stopped by 🛑'));
    await expect(searching).rejects.toThrow('stopped by 🛑');
    // Against the 60 s it would otherwise run: generous for a busy machine, far from the budget.
    expect(performance.now() - stopped).toBeLessThan(10_000);
    expect(runningPatternWorkers()).toBe(0);
  });

  it('as literal text is searched at once on the main thread', async () => {
    expect(await run({ pattern: '^(a+)+$', literal: true })).toBe(
      'no matches for /\\^\\(a\\+\\)\\+\\$/ in . (64 file(s) searched; .git and node_modules not entered)',
    );
    expect(runningPatternWorkers()).toBe(0);
    const hits = await run({ pattern: `${CATASTROPHIC_LINE.slice(-5)}`, literal: true, maxResults: 2 });
    expect(hits).toBe(
      `data/data-0000.txt:1: ${CATASTROPHIC_LINE}\ndata/data-0000.txt:2: ${CATASTROPHIC_LINE}\n[stopped at 2 matches; narrow the search with path or glob]`,
    );
  });
});
