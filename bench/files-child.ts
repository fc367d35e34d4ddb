// The bot core's side of the files bench (files.bench.ts), in a process of its own: ten big
// files at once in ten threads, against the idle figure taken first (so nothing before them
// inflates it), then the PNGs one at a time, each timed to its model request; or, in a run of
// its own, one PDF bomb against the idle figure. One JSON line.
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { loadConfig } from '../src/config.js';
import { startCore } from '../src/core.js';
import type { IncomingFile } from '../src/engine/index.js';
import { FileTransferError } from '../src/files/index.js';
import { silentLogger } from '../src/engine/index.js';
import { TOKEN } from '../test/support/file-host.js';
import type { ChildReport } from './files.bench.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const dir = env('FILES_BENCH_DIR');
/** Set: this run only shares that PDF bomb, against the idle figure (a run of its own, so nothing before it inflates the figure). */
const bomb = process.env.FILES_BENCH_BOMB ? (JSON.parse(process.env.FILES_BENCH_BOMB) as IncomingFile) : undefined;
const pngs = bomb ? [] : (JSON.parse(env('FILES_BENCH_PNGS')) as IncomingFile[]);
const bigs = bomb ? [] : (JSON.parse(env('FILES_BENCH_BIGS')) as IncomingFile[]);

const config = loadConfig({
  MODEL: 'openai:gpt-4.1',
  OPENAI_API_KEY: 'sk-bench',
  OPENAI_BASE_URL: env('FILES_BENCH_MODEL_URL'),
  STORE_URL: `sqlite://${dir}/data/bot.sqlite`,
  WORKSPACE_DIR: join(dir, 'workspace'),
  MCP_CONFIG: join(dir, 'mcp.json'),
  MAX_FILE_BYTES: String(32 * 1024 * 1024),
  MAX_CONCURRENT_MODEL_CALLS: '16',
  THREADS_PER_USER: '20',
  TURNS_PER_USER_PER_MINUTE: '100',
});
const core = await startCore(config, { logger: silentLogger });
core.files.registerSource('test', {
  open: async (file, signal) => {
    const response = await fetch(file.url, { signal, headers: { authorization: `Bearer ${TOKEN}` } });
    if (!response.ok || !response.body) throw new FileTransferError(`HTTP ${response.status}`);
    return { body: Readable.fromWeb(response.body), contentType: response.headers.get('content-type') ?? undefined };
  },
});
let requests = 0;
const problems: string[] = [];
core.observers.add('test', {
  onEvent: (_session, event) => {
    if (event.type === 'assistant_message') requests++;
    if (event.type === 'input_files') problems.push(...event.problems);
  },
});
await core.recover();

global.gc?.();
const idleRssMb = process.memoryUsage().rss / 1024 / 1024;
let peak = idleRssMb;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss / 1024 / 1024)), 5);

if (bomb) {
  const started = performance.now();
  await core.manager.deliver(
    { platform: 'test', workspace: 'W', channel: 'C', thread: 'bomb' },
    { text: 'summarise', userId: 'U1', eventId: 'bomb', attachments: [bomb] },
  );
  await core.manager.idle();
  clearInterval(sampler);
  await core.close();
  const report: ChildReport = { ingestMs: [performance.now() - started], idleRssMb, peakRssMb: peak, problems };
  console.log(JSON.stringify(report));
  process.exit(0);
}
await Promise.all(
  bigs.map((file, i) =>
    core.manager.deliver(
      { platform: 'test', workspace: 'W', channel: 'C', thread: `big-${i}` },
      { text: 'summarise', userId: 'U1', eventId: `big-${i}`, attachments: [file] },
    ),
  ),
);
await core.manager.idle();
clearInterval(sampler);

const ingestMs: number[] = [];
for (const [i, png] of pngs.entries()) {
  const key = { platform: 'test', workspace: 'W', channel: 'C', thread: `png-${i}` };
  const started = performance.now();
  await core.manager.deliver(key, { text: 'what is this?', userId: 'U1', eventId: `png-${i}`, attachments: [png] });
  await core.manager.idle();
  // The answer follows the request at once (the fake answers without delay): the turn's end bounds the request.
  ingestMs.push(performance.now() - started);
}

await core.close();
if (requests !== pngs.length + bigs.length)
  throw new Error(`expected ${pngs.length + bigs.length} answers, got ${requests}`);
const report: ChildReport = { ingestMs, idleRssMb, peakRssMb: peak };
console.log(JSON.stringify(report));
