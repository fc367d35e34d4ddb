// How long hostile input holds the event loop: a 2 MiB page built to be quadratic for the
// old regex htmlToText, and `^(a+)+$` searched over a 10 MiB workspace of lines it
// backtracks on. Measured with monitorEventLoopDelay (the longest single delay, in ms).
// Goal: at most 50 ms each. Before: 4.1 s for a 128 KiB page (minutes for 2 MiB), and a
// search that held the loop until it was killed.
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { htmlToText, htmlToTextAsync } from '../src/tools/html-text.js';
import { searchTool } from '../src/tools/search.js';
import { Workspace } from '../src/tools/workspace.js';
import { hostilePages, measureStalls, writeCatastrophicWorkspace } from '../test/support/hostile-inputs.js';
import { elapsedSince } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const PAGE_CHARS = 2 * 1024 * 1024;
const WORKSPACE_BYTES = 10 * 1024 * 1024;
/** Short, so the bench does not wait out the default 10 s; the stall does not depend on it. */
const SEARCH_TIME_LIMIT_MS = 2_000;

async function pageFigures(): Promise<BenchRow[]> {
  let worstDelay = 0;
  let worstSync = 0;
  let worstShape = '';
  for (const [shape, page] of Object.entries(hostilePages(PAGE_CHARS))) {
    const { maxDelayMs } = await measureStalls(() => htmlToTextAsync(page));
    if (maxDelayMs > worstDelay) [worstDelay, worstShape] = [maxDelayMs, shape];
    const started = performance.now();
    htmlToText(page);
    worstSync = Math.max(worstSync, elapsedSince(started));
  }
  return [
    {
      key: 'tools.fetch_hostile_2mib_max_block_ms',
      value: worstDelay,
      unit: 'ms',
      note: `htmlToTextAsync, worst of 6 hostile pages (${worstShape}); goal: at most 50 ms`,
    },
    {
      key: 'tools.fetch_hostile_2mib_sync_ms',
      value: worstSync,
      unit: 'ms',
      note: 'htmlToText in one synchronous pass, worst page: the block while a caller still uses it',
    },
  ];
}

async function searchFigures(): Promise<BenchRow[]> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'chat-agent-bench-tools-')));
  try {
    const root = path.join(base, 'workspace');
    const files = await writeCatastrophicWorkspace(root, WORKSPACE_BYTES);
    await writeFile(path.join(root, 'zz-last.txt'), 'needle\n');
    const workspace = Workspace.open(root, {});
    const search = searchTool(workspace, 20_000, { timeLimitMs: SEARCH_TIME_LIMIT_MS });
    const context = (signal: AbortSignal): { signal: AbortSignal; toolCallId: string; sessionId: string } => ({
      signal,
      toolCallId: 'bench',
      sessionId: 'bench',
    });
    const run = async (args: Record<string, unknown>): Promise<string> => {
      const answer = await search.execute(search.schema.parse(args), context(new AbortController().signal));
      if (typeof answer !== 'string') throw new Error(`search answered ${JSON.stringify(answer)}`);
      return answer;
    };

    const catastrophic = await measureStalls(() => run({ pattern: '^(a+)+$' }));
    if (!catastrophic.result.startsWith('the pattern took too long'))
      throw new Error(`the search was not stopped: ${catastrophic.result}`);

    const fullScanStarted = performance.now();
    const fullScan = await measureStalls(() => run({ pattern: 'need+le' }));
    const fullScanMs = elapsedSince(fullScanStarted);
    if (!fullScan.result.startsWith('zz-last.txt:1:'))
      throw new Error(`the full scan missed the needle: ${fullScan.result}`);

    const stopTimes: number[] = [];
    const patient = searchTool(workspace, 20_000, { timeLimitMs: 60_000 });
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      const searching = patient.execute(patient.schema.parse({ pattern: '^(a+)+$' }), context(controller.signal));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopped = performance.now();
      controller.abort(new Error('stop'));
      await searching.catch(() => undefined);
      stopTimes.push(elapsedSince(stopped));
    }

    const where = `${files} files, ${WORKSPACE_BYTES / 1024 / 1024} MiB`;
    return [
      {
        key: 'tools.search_catastrophic_max_block_ms',
        value: catastrophic.maxDelayMs,
        unit: 'ms',
        note: `^(a+)+$ over ${where}, stopped after ${SEARCH_TIME_LIMIT_MS / 1000} s; goal: at most 50 ms`,
      },
      {
        key: 'tools.search_full_scan_max_block_ms',
        value: fullScan.maxDelayMs,
        unit: 'ms',
        note: `a regex read through all of ${where}`,
      },
      { key: 'tools.search_full_scan_ms', value: fullScanMs, unit: 'ms', note: `the same search, start to answer` },
      {
        key: 'tools.search_stop_ms_max',
        value: Math.max(...stopTimes),
        unit: 'ms',
        note: 'from 🛑 to the answer during a stuck search (worker terminated), worst of 5',
      },
    ];
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

export const toolsSuite: BenchSuite = {
  name: 'tools',
  async run(): Promise<BenchRow[]> {
    return [...(await pageFigures()), ...(await searchFigures())];
  },
};
