// What masking costs: it runs on every tool result, every streamed delta and every log line.
// Twenty secrets shaped like real keys (each searched in about a dozen forms: as written,
// JSON-escaped, hex, base64 and base64url at three offsets), over a 20 KB tool result of
// ordinary shell output (paths, hashes, base64, percent-escapes, many lines) with and without
// secrets in it, whole and as a model stream of 8-character deltas. And what attach_file's
// check costs on a 1 MB spreadsheet: every part of the zip inflated and searched the same way.
import { holdsSecret } from '../src/files/secret-bytes.js';
import { checkCompressedContents, InflateBudget } from '../src/files/compressed-contents.js';
import { SecretMasker } from '../src/secrets/index.js';
import { mulberry32 } from '../test/support/seeded-random.js';
import { zipOf } from '../test/support/zip-builder.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const SECRETS = 20;
const RESULT_CHARS = 20_000;
const ROUNDS = 200;
const XLSX_ROUNDS = 9;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function keys(random: () => number): string[] {
  const pick = (length: number) =>
    Array.from({ length }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join('');
  return Array.from({ length: SECRETS }, (_, i) => (i % 2 === 0 ? `sk-${pick(40)}` : `xoxb-${pick(10)}-${pick(24)}`));
}

function shellOutput(random: () => number, secrets: string[] = []): string {
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; length < RESULT_CHARS; i++) {
    const hash = Array.from({ length: 20 }, () =>
      Math.floor(random() * 256)
        .toString(16)
        .padStart(2, '0'),
    ).join('');
    const line = [
      `drwxr-xr-x  5 user staff   160 Dec  3 11:0${i % 10} src/module-${i}/index.ts`,
      `commit ${hash}`,
      `GET /api/items?page=${i}&q=some%20words%2Chere 200 ${Math.floor(random() * 900)}ms`,
      Buffer.from(`payload number ${i} with nothing secret`).toString('base64'),
      `  at Object.<anonymous> (/home/user/project/file-${i}.js:${i}:${i % 80})`,
    ][i % 5]!;
    lines.push(line);
    length += line.length + 1;
  }
  // One secret in every 50 lines, in its raw, base64, hex and percent-encoded forms in turn.
  for (let i = 0; i < secrets.length && i * 50 < lines.length; i++) {
    const secret = secrets[i]!;
    const form = [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('hex'),
      secret.replaceAll('-', '%2D'),
    ][i % 4]!;
    lines[i * 50] = `value: ${form}`;
  }
  return lines.join('\n').slice(0, RESULT_CHARS);
}

/** An .xlsx-shaped zip of about `bytes` (a sheet of numbers and words, its shared strings), deflated as Excel does. */
function spreadsheet(random: () => number, bytes: number): Buffer {
  const word = () =>
    Array.from({ length: 3 + Math.floor(random() * 8) }, () => ALPHABET[Math.floor(random() * 52)]).join('');
  const strings: string[] = [];
  const rows: string[] = [];
  // Random words and numbers deflate about 2:1; a real sheet's XML deflates further, so this is the harder case.
  for (let row = 1, length = 0; length < bytes * 0.9; row++) {
    strings.push(`${word()} ${word()} ${word()}`);
    length += strings.at(-1)!.length + 16;
    rows.push(
      `<row r="${row}"><c r="A${row}" t="s"><v>${row - 1}</v></c><c r="B${row}"><v>${(random() * 1e6).toFixed(2)}</v></c><c r="C${row}"><v>${Math.floor(random() * 1e9)}</v></c></row>`,
    );
  }
  return zipOf([
    {
      name: '[Content_Types].xml',
      bytes: Buffer.from(
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
      ),
    },
    {
      name: 'xl/workbook.xml',
      bytes: Buffer.from(
        '<?xml version="1.0"?><workbook><sheets><sheet name="Sheet1" sheetId="1"/></sheets></workbook>',
      ),
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      bytes: Buffer.from(`<?xml version="1.0"?><worksheet><sheetData>${rows.join('')}</sheetData></worksheet>`),
    },
    {
      name: 'xl/sharedStrings.xml',
      bytes: Buffer.from(
        `<?xml version="1.0"?><sst>${strings.map((text) => `<si><t>${text}</t></si>`).join('')}</sst>`,
      ),
    },
  ]);
}

function timed(run: () => void): number[] {
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  return samples;
}

export const secretsSuite: BenchSuite = {
  name: 'secrets',
  async run(): Promise<BenchRow[]> {
    const random = mulberry32(20);
    const secrets = keys(random);
    const buildStarted = performance.now();
    const masker = new SecretMasker(secrets);
    masker.mask('warm up: builds the search');
    const buildMs = performance.now() - buildStarted;
    const clean = shellOutput(random);
    const dirty = shellOutput(random, secrets);
    if (masker.mask(clean) !== clean) throw new Error('bench: the clean result was changed by masking');
    if (!masker.mask(dirty).includes('[secret]')) throw new Error('bench: the secrets in the result were not masked');
    // Warm the JIT before measuring.
    for (let i = 0; i < 20; i++) masker.mask(dirty);
    const cleanMs = median(timed(() => masker.mask(clean)));
    const dirtyMs = median(timed(() => masker.mask(dirty)));
    const streamMs = median(
      timed(() => {
        const stream = masker.streamMask();
        for (let at = 0; at < dirty.length; at += 8) stream.push(dirty.slice(at, at + 8));
        stream.end();
      }),
    );
    const perSecond = (ms: number) => RESULT_CHARS / (ms / 1000);
    const xlsx = spreadsheet(random, 1024 * 1024);
    const checkXlsx = async () => {
      const budget = new InflateBudget();
      const unchecked = await checkCompressedContents(xlsx, 'zip archive', 'bench.xlsx', {
        holdsSecret: (bytes) => holdsSecret(bytes, masker.mask),
        allowUnreadable: false,
        budget,
      });
      if (unchecked.length > 0) throw new Error('bench: the spreadsheet was not read whole');
      return budget.read;
    };
    const inflatedBytes = await checkXlsx();
    const xlsxSamples: number[] = [];
    for (let i = 0; i < XLSX_ROUNDS; i++) {
      const started = performance.now();
      await checkXlsx();
      xlsxSamples.push(performance.now() - started);
    }
    const xlsxMs = median(xlsxSamples);
    return [
      {
        key: 'secrets.forms',
        value: masker.size,
        unit: 'strings',
        note: `searched for ${SECRETS} key-shaped secrets (each in all its forms)`,
      },
      {
        key: 'secrets.build_ms',
        value: buildMs,
        unit: 'ms',
        note: 'building the search for them (once, and again when secrets are added)',
      },
      {
        key: 'secrets.mask_20kb_clean_ms_p50',
        value: cleanMs,
        unit: 'ms',
        note: '20 KB of shell output with no secret, median of 200',
      },
      {
        key: 'secrets.mask_20kb_ms_p50',
        value: dirtyMs,
        unit: 'ms',
        note: '20 KB with a secret every 50 lines (raw, base64, hex, %2D), median of 200',
      },
      {
        key: 'secrets.mask_chars_per_s',
        value: perSecond(dirtyMs),
        unit: 'chars/s',
        note: 'the same, as characters per second',
      },
      {
        key: 'secrets.stream_20kb_ms_p50',
        value: streamMs,
        unit: 'ms',
        note: 'the same 20 KB as a stream of 8-character deltas, median of 200',
      },
      {
        key: 'secrets.attach_xlsx_1mb_ms_p50',
        value: xlsxMs,
        unit: 'ms',
        note: `attach_file's check of a ${(xlsx.length / 1024 / 1024).toFixed(2)} MB .xlsx-shaped zip (${(inflatedBytes / 1024 / 1024).toFixed(1)} MB inflated, 4 parts, no secret), median of ${XLSX_ROUNDS}`,
      },
    ];
  },
};
