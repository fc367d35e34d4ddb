// Files in: how long a shared 5 MiB PNG takes from the event to the model request that
// carries it (fetched over HTTP, saved, prepared, read back into an image part), and what
// ten 20 MiB files arriving at once cost the bot in resident memory (goal: at most 100 MB
// above idle: bytes stream to disk, never buffered whole), what a PDF bomb costs it (goal:
// at most 100 MB above idle: the PDF is read in a process of its own, killed at its bound),
// and what saving one upload costs by who writes it (files-writers.ts).
//
// The bot core runs in a child process (files-child.ts) so its peak RSS is its own: the file
// host serving the bytes and the fake model server stay in this process.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeOpenAI } from '../test/fakes/openai-server.js';
import { writeNoisePng, writePdfBomb } from '../test/support/file-fixtures.js';
import { FileHost } from '../test/support/file-host.js';
import { mulberry32 } from '../test/support/seeded-random.js';
import { uploadWriterRows } from './files-writers.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const CHILD = new URL('./files-child.ts', import.meta.url).pathname;
const PNG_ROUNDS = 7;
const BIG_FILES = 10;
const BIG_FILE_BYTES = 20 * 1024 * 1024;

export interface ChildReport {
  ingestMs: number[];
  idleRssMb: number;
  peakRssMb: number;
  /** The thread's problem lines (the bomb's run: its refusal). */
  problems?: string[];
}

function runChild(env: Record<string, string>): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`the files bench process exited with ${code}: ${out}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildReport);
    });
  });
}

export const filesSuite: BenchSuite = {
  name: 'files',
  async run(): Promise<BenchRow[]> {
    const dir = await mkdtemp(join(tmpdir(), 'bench-files-'));
    const host = await new FileHost().start();
    const fake = await new FakeOpenAI().start();
    try {
      // Seeded noise barely compresses: 1400×1300 is about 5 MiB, over what a provider takes as it is.
      const png = await readFile(await writeNoisePng(join(dir, 'noise.png')));
      const pngs = Array.from({ length: PNG_ROUNDS }, (_, i) => host.add(`screen-${i}.png`, png, 'image/png'));
      const random = mulberry32(22);
      const csvRow = Buffer.from(
        Array.from({ length: 1023 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('') + '\n',
      );
      const big = Buffer.concat(Array.from({ length: BIG_FILE_BYTES / csvRow.length }, () => csvRow));
      const bigs = Array.from({ length: BIG_FILES }, (_, i) => host.add(`table-${i}.csv`, big, 'text/csv'));
      for (let i = 0; i < PNG_ROUNDS + BIG_FILES; i++) fake.replyText('seen');
      const report = await runChild({
        FILES_BENCH_DIR: dir,
        FILES_BENCH_MODEL_URL: fake.baseURL,
        FILES_BENCH_PNGS: JSON.stringify(pngs),
        FILES_BENCH_BIGS: JSON.stringify(bigs),
      });
      // A PDF bomb, in a bot of its own: 2 MB on disk, 2 GiB of spaces once its one content
      // stream is inflated, read by the PDF reader's process under the default PDF_MAX_MEMORY_MB.
      const bombPdf = await readFile(await writePdfBomb(join(dir, 'bomb.pdf')));
      await mkdir(join(dir, 'bomb-run'));
      fake.replyText('seen');
      const bombed = await runChild({
        FILES_BENCH_DIR: join(dir, 'bomb-run'),
        FILES_BENCH_MODEL_URL: fake.baseURL,
        FILES_BENCH_BOMB: JSON.stringify(host.add('bomb.pdf', bombPdf, 'application/pdf')),
      });
      if (!bombed.problems?.some((line) => line.includes('PDF_MAX_MEMORY_MB')))
        throw new Error(
          `files bench: the PDF bomb was not refused at the memory bound: ${JSON.stringify(bombed.problems)}`,
        );
      return [
        {
          key: 'files.ingest_ms_p50',
          value: median(report.ingestMs),
          unit: 'ms',
          note: `a ${(png.length / 1024 / 1024).toFixed(1)} MiB PNG from deliver() to the model request carrying it (fetched over HTTP, saved, prepared), median of ${PNG_ROUNDS}`,
        },
        {
          key: 'files.idle_rss_mb',
          value: report.idleRssMb,
          unit: 'MB',
          note: 'the bot core started, before any file',
        },
        {
          key: 'files.ten_20mib_peak_rss_above_idle_mb',
          value: report.peakRssMb - report.idleRssMb,
          unit: 'MB',
          note: `peak resident memory above idle while ${BIG_FILES} messages each bring a 20 MiB file at once (goal ≤ 100)`,
        },
        {
          key: 'files.pdf_bomb_peak_rss_above_idle_mb',
          value: bombed.peakRssMb - bombed.idleRssMb,
          unit: 'MB',
          note: `the bot's peak resident memory above idle (${bombed.idleRssMb.toFixed(0)} MB) while a ${(bombPdf.length / 1024 / 1024).toFixed(1)} MB PDF of 2 GiB deflated spaces is read and refused at PDF_MAX_MEMORY_MB (goal ≤ 100)`,
        },
        {
          key: 'files.pdf_bomb_refused_ms',
          value: bombed.ingestMs[0]!,
          unit: 'ms',
          note: 'from deliver() to the end of its turn, the reader killed at its memory bound (the default 512 MB)',
        },
        ...(await uploadWriterRows()),
      ];
    } finally {
      await fake.stop();
      await host.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
