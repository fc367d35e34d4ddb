// Entry point of `npm run bench`: runs every suite in turn (or only those named:
// `npm run bench -- recovery store`), prints one table of all their figures, and
// merge-writes them into bench/results.json (see results.ts). Benchmarks report, they do
// not judge: a figure with a goal is shown against it (✓ or ✗), and the exit code is 0
// unless a suite itself breaks.
import { anthropicProviderSuite } from './anthropic-provider.bench.js';
import { clusterSuite } from './cluster.bench.js';
import { discordSuite } from './discord.bench.js';
import { engineSuite } from './engine.bench.js';
import { filesSuite } from './files.bench.js';
import { mediaSuite } from './media.bench.js';
import { openaiProviderSuite } from './openai-provider.bench.js';
import { playgroundSuite } from './playground.bench.js';
import { processSuite } from './process.bench.js';
import { recoverySuite } from './recovery.bench.js';
import { schedulesSuite } from './schedules.bench.js';
import { secretsSuite } from './secrets.bench.js';
import { sessionsMemorySuite } from './sessions-memory.bench.js';
import { shellSuite } from './shell.bench.js';
import { slackSuite } from './slack.bench.js';
import { slackStopSuite } from './slack-stop.bench.js';
import { storeSuite } from './store.bench.js';
import { toolsSuite } from './tools.bench.js';
import { tracesSuite } from './traces.bench.js';
import { mergeResults, RESULTS_PATH, type BenchResults } from './results.js';
import type { BenchRow, BenchSuite } from './suite.js';

const SUITES: BenchSuite[] = [
  engineSuite,
  openaiProviderSuite,
  anthropicProviderSuite,
  storeSuite,
  recoverySuite,
  sessionsMemorySuite,
  shellSuite,
  slackSuite,
  slackStopSuite,
  discordSuite,
  playgroundSuite,
  toolsSuite,
  secretsSuite,
  filesSuite,
  mediaSuite,
  clusterSuite,
  processSuite,
  tracesSuite,
  schedulesSuite,
];

function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  return value.toFixed(abs >= 100 ? 1 : abs >= 1 ? 2 : 4);
}

/** A goal as the table shows it, and whether the figure meets it (blank: no goal). */
function goalCells(row: BenchRow): [string, string] {
  if (row.goal === undefined) return ['', ''];
  return [`≤ ${formatValue(row.goal)}`, Number.isFinite(row.value) && row.value <= row.goal ? '✓' : '✗'];
}

function printTable(rows: BenchRow[]): void {
  const cells = rows.map((row) => [row.key, formatValue(row.value), row.unit, ...goalCells(row), row.note]);
  const header = ['figure', 'value', 'unit', 'goal', '', 'note'];
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column]!.length)));
  const line = (cell: string[]): string =>
    cell
      .map((text, column) =>
        column === 1 || column === 3 ? text.padStart(widths[column]!) : text.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const cell of cells) console.log(line(cell));
  const judged = rows.filter((row) => row.goal !== undefined);
  if (judged.length > 0) {
    const missed = judged.filter((row) => goalCells(row)[1] === '✗');
    console.log(
      `\ngoals: ${judged.length - missed.length} of ${judged.length} met${missed.length > 0 ? `; missed: ${missed.map((row) => row.key).join(', ')}` : ''} (reported, not enforced)`,
    );
  }
}

async function main(): Promise<void> {
  const rows: BenchRow[] = [];
  const named = process.argv.slice(2);
  const unknown = named.filter((name) => !SUITES.some((suite) => suite.name === name));
  if (unknown.length > 0)
    throw new Error(
      `unknown bench suite ${unknown.join(', ')}: the suites are ${SUITES.map((s) => s.name).join(', ')}`,
    );
  for (const suite of SUITES.filter((s) => named.length === 0 || named.includes(s.name))) {
    const started = performance.now();
    console.log(`bench: running ${suite.name} suite…`);
    rows.push(...(await suite.run()));
    console.log(`bench: ${suite.name} suite done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  console.log('');
  printTable(rows);
  const fresh: BenchResults = {};
  // Rounded to a microsecond-ish precision: enough to compare runs, readable in a diff.
  for (const row of rows) fresh[row.key] = Number(row.value.toPrecision(6));
  await mergeResults(fresh);
  console.log(`\nbench: wrote ${rows.length} figures to ${RESULTS_PATH}`);
}

await main();
