// What the files room's media helpers cost per file, outside any turn: making an image fit
// the providers (a ~5 MiB noisy PNG, the worst case for the byte cap: it needs re-encoding;
// a 4000×3000 screenshot-like PNG, the common case: it needs downscaling; a small PNG that
// goes as it is, which is still decoded once in full) and extracting a small PDF's text (mostly
// the reader's process starting and loading pdf.js).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareImageForModel } from '../src/files/image-prep.js';
import { extractPdfText } from '../src/files/pdf-text.js';
import { writeNoisePng, writePng, writeTextPdf } from '../test/support/file-fixtures.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const ROUNDS = 7;

async function timed(run: () => Promise<void>): Promise<number> {
  // One round first, untimed: the first call loads libvips' and pdf.js's code.
  await run();
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

export const mediaSuite: BenchSuite = {
  name: 'media',
  async run(): Promise<BenchRow[]> {
    const dir = await mkdtemp(join(tmpdir(), 'bench-media-'));
    try {
      const noise = await writeNoisePng(join(dir, 'noise.png'));
      const big = await writePng(join(dir, 'big.png'), 4000, 3000);
      const small = await writePng(join(dir, 'small.png'), 1024, 768);
      const pdf = await writeTextPdf(
        join(dir, 'report.pdf'),
        Array.from({ length: 10 }, (_, page) =>
          Array.from({ length: 30 }, (_, line) => `Page ${page + 1}, line ${line + 1}: quarterly figures and notes.`),
        ),
      );
      const expectKind = async (path: string, kind: string): Promise<void> => {
        const result = await prepareImageForModel(path, join(dir, 'out'));
        if (result.kind !== kind) throw new Error(`media bench: ${path} gave ${JSON.stringify(result)}, not ${kind}`);
      };
      const noiseMs = await timed(() => expectKind(noise, 'copy'));
      const bigMs = await timed(() => expectKind(big, 'copy'));
      const smallMs = await timed(() => expectKind(small, 'as-is'));
      const pdfMs = await timed(async () => {
        const result = await extractPdfText(pdf, { maxChars: 100_000 });
        if ('error' in result) throw new Error(`media bench: the PDF gave ${result.error}`);
      });
      return [
        {
          key: 'media.image_prep_noisy_5mib_png_ms_p50',
          value: noiseMs,
          unit: 'ms',
          note: `1400×1300 noise PNG (~5.2 MiB) re-encoded under 3.75 MiB, median of ${ROUNDS}`,
        },
        {
          key: 'media.image_prep_4000x3000_png_ms_p50',
          value: bigMs,
          unit: 'ms',
          note: `downscaled to 1568 px and re-encoded, median of ${ROUNDS}`,
        },
        {
          key: 'media.image_prep_as_is_ms_p50',
          value: smallMs,
          unit: 'ms',
          note: `1024×768 PNG checked (full decode) and passed as it is, median of ${ROUNDS}`,
        },
        {
          key: 'media.pdf_text_10_pages_ms_p50',
          value: pdfMs,
          unit: 'ms',
          note: `text of a 10-page PDF, the reader process's start included, median of ${ROUNDS}`,
        },
      ];
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
