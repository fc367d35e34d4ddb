// A PDF shared with a model that cannot read PDFs: its text comes out in page order, within
// a character budget; a corrupt, encrypted, empty or fake PDF is a plain error, never a
// throw; a stopped turn stops the reader. The reader is a process of its own, bounded in
// memory (a PDF bomb is refused, naming the bound, and the bot's memory never holds it), one
// at a time, people taking turns.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaPreparers } from '../../src/files/media-preparers.js';
import { extractPdfText, type ReaderReport } from '../../src/files/pdf-text.js';
import { writeCorruptPdf, writeEncryptedPdf, writePdfBomb, writeTextPdf } from '../support/file-fixtures.js';
import { waitFor } from '../support/engine-kit.js';
import { alive } from '../support/npm-start.js';

/** Whether a process runs (a zombie nobody has reaped yet does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return false;
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdf-text-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const REPORT = [
  ['Quarterly report', 'Revenue rose 12% (EUR 4,213k) in Q3.'],
  ['Costs: travel \\ hosting', 'Outlook: flat'],
  ['Appendix A', 'Nothing to see here.'],
];

describe('the fixture PDF is valid as written, not repaired by the reader', () => {
  it('every xref entry points at its object and startxref at the xref table', async () => {
    const path = await writeTextPdf(join(dir, 'xref.pdf'), REPORT);
    const bytes = (await readFile(path)).toString('latin1');
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(bytes)?.[1]);
    expect(bytes.slice(startxref, startxref + 5)).toBe('xref\n');
    const entries = [...bytes.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((match) => Number(match[1]));
    expect(entries).toHaveLength(3 + REPORT.length * 2);
    entries.forEach((offset, index) => expect(bytes.slice(offset).startsWith(`${index + 1} 0 obj\n`)).toBe(true));
  });
});

describe('extractPdfText', () => {
  it("a report's text comes out page by page, in order, with its page count", async () => {
    const path = await writeTextPdf(join(dir, 'report.pdf'), REPORT);
    const result = await extractPdfText(path, { maxChars: 10_000 });
    expect(result).toEqual({
      text: 'Quarterly report\nRevenue rose 12% (EUR 4,213k) in Q3.\n\nCosts: travel \\ hosting\nOutlook: flat\n\nAppendix A\nNothing to see here.',
      pages: 3,
      truncated: false,
    });
  });

  it('past the character budget the text is cut, the later pages are not read, and it says so', async () => {
    const path = await writeTextPdf(join(dir, 'long.pdf'), REPORT);
    const result = await extractPdfText(path, { maxChars: 20 });
    expect(result).toEqual({ text: 'Quarterly report\nRev', pages: 3, truncated: true });
  });

  it('the page cap stops the reading too, and says so', async () => {
    const path = await writeTextPdf(join(dir, 'pages.pdf'), REPORT);
    const result = await extractPdfText(path, { maxChars: 10_000, maxPages: 1 });
    expect(result).toEqual({
      text: 'Quarterly report\nRevenue rose 12% (EUR 4,213k) in Q3.',
      pages: 3,
      truncated: true,
    });
  });

  it('a corrupt PDF is an error that says the file is not a readable PDF', async () => {
    const path = await writeCorruptPdf(join(dir, 'corrupt.pdf'));
    expect(await extractPdfText(path, { maxChars: 10_000 })).toEqual({
      error: 'the file is not a readable PDF (Invalid PDF structure)',
    });
  });

  it('an encrypted PDF is an error that says it is password-protected', async () => {
    const path = await writeEncryptedPdf(join(dir, 'locked.pdf'));
    expect(await extractPdfText(path, { maxChars: 10_000 })).toEqual({
      error: 'the PDF is encrypted (password-protected), so its text cannot be read',
    });
  });

  it('an empty file, a text file named .pdf and a missing file are errors, not throws', async () => {
    const empty = join(dir, 'empty.pdf');
    await writeFile(empty, '');
    const fake = join(dir, 'notes.pdf');
    await writeFile(fake, 'just some notes, not a PDF\n');
    expect(await extractPdfText(empty, { maxChars: 100 })).toEqual({
      error: expect.stringContaining('the file is not a readable PDF (The PDF file is empty'),
    });
    expect(await extractPdfText(fake, { maxChars: 100 })).toEqual({
      error: 'the file is not a readable PDF (Invalid PDF structure)',
    });
    expect(await extractPdfText(join(dir, 'absent.pdf'), { maxChars: 100 })).toEqual({
      error: 'the PDF file is not there',
    });
  });

  it(
    'a PDF bomb (2 GiB of spaces deflated into one 2 MB content stream) is refused at the memory bound; the bot never holds it',
    { timeout: 120_000 },
    async () => {
      const path = await writePdfBomb(join(dir, 'bomb.pdf'));
      expect((await stat(path)).size).toBeLessThan(3 * 1024 * 1024);
      const reports: ReaderReport[] = [];
      // This process stands for the bot: its resident memory is sampled while the PDF is read.
      const idle = process.memoryUsage.rss();
      let peak = idle;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
      let result: Awaited<ReturnType<typeof extractPdfText>>;
      try {
        // No time limit that a busy machine could reach first: only the memory bound may stop it.
        result = await extractPdfText(path, {
          maxChars: 1_000_000,
          maxMemoryMb: 200,
          timeLimitMs: 110_000,
          onReaderExit: (report) => reports.push(report),
        });
      } finally {
        clearInterval(sampler);
      }
      expect(result).toEqual({
        error: 'reading it needs more than the 200 MB of memory the PDF reader may use (PDF_MAX_MEMORY_MB)',
      });
      // The reader was killed for its memory (by the bot's watch or its own warden, whichever
      // saw it first), nowhere near the 2 GiB the stream inflates to (the margin is for a busy
      // machine's late timers).
      expect(reports).toEqual([expect.objectContaining({ killedFor: 'memory', signal: 'SIGKILL' })]);
      expect(reports[0]!.peakRssBytes).toBeLessThan(1024 * 1024 * 1024);
      expect(alive(reports[0]!.pid)).toBe(false);
      // The bot's own memory stayed where it was: the inflated bytes were never its.
      expect(peak - idle).toBeLessThan(100 * 1024 * 1024);
      // And the next PDF is read as usual.
      expect(
        await extractPdfText(await writeTextPdf(join(dir, 'after-bomb.pdf'), REPORT), { maxChars: 10_000 }),
      ).toMatchObject({ pages: 3 });
    },
  );

  it(
    'where the bot cannot watch the reader (no /proc), its own warden holds the bound, with the same words',
    { timeout: 120_000 },
    async () => {
      const path = await writePdfBomb(join(dir, 'warden-bomb.pdf'));
      const reports: ReaderReport[] = [];
      const result = await extractPdfText(path, {
        maxChars: 1_000_000,
        maxMemoryMb: 200,
        timeLimitMs: 110_000,
        watchFromBot: false,
        onReaderExit: (report) => reports.push(report),
      });
      expect(result).toEqual({
        error: 'reading it needs more than the 200 MB of memory the PDF reader may use (PDF_MAX_MEMORY_MB)',
      });
      expect(reports).toEqual([expect.objectContaining({ killedFor: 'memory', signal: 'SIGKILL' })]);
    },
  );

  it(
    'a bot killed while a reader runs leaves no reader behind: the reader ends itself',
    { timeout: 120_000 },
    async () => {
      const path = await writePdfBomb(join(dir, 'orphan-bomb.pdf'));
      const bot = spawn(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(new URL('../support/pdf-reader-parent.ts', import.meta.url)), path],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const exited = new Promise((resolve) => bot.once('exit', resolve));
      let out = '';
      bot.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await waitFor(() => /^\d+\n/.test(out), 60_000);
      const reader = Number(out.trim());
      expect(running(reader)).toBe(true);
      bot.kill('SIGKILL');
      await exited;
      await waitFor(() => !running(reader), 30_000);
    },
  );

  it('a reader past its time limit is killed, and says how long it had', async () => {
    const path = await writePdfBomb(join(dir, 'slow-bomb.pdf'));
    const reports: ReaderReport[] = [];
    // Inflating 2 GiB takes pdf.js tens of seconds: half a second is reached first, for certain.
    expect(
      await extractPdfText(path, {
        maxChars: 1_000_000,
        maxMemoryMb: 4096,
        timeLimitMs: 500,
        onReaderExit: (report) => reports.push(report),
      }),
    ).toEqual({
      error: 'reading the PDF took longer than 0.5 s and was stopped',
    });
    expect(reports).toEqual([expect.objectContaining({ killedFor: 'time', signal: 'SIGKILL' })]);
  });

  it("the reader gets none of the bot's environment (no token for a hostile PDF to find)", async () => {
    process.env.PDF_TEXT_TEST_SECRET = 'xoxb-not-for-the-reader';
    try {
      let environ: string | undefined;
      const path = await writeTextPdf(join(dir, 'env.pdf'), REPORT);
      const result = await extractPdfText(path, {
        maxChars: 10_000,
        onReaderStart: (pid) => (environ = readFileSync(`/proc/${pid}/environ`, 'latin1')),
      });
      expect(result).toMatchObject({ pages: 3 });
      expect(environ).toBe('');
    } finally {
      delete process.env.PDF_TEXT_TEST_SECRET;
    }
  });

  it('one reader at a time, process-wide, taking turns between the people who asked', async () => {
    const path = await writeTextPdf(join(dir, 'turns.pdf'), REPORT);
    const events: string[] = [];
    const read = (requester: string, label: string) =>
      extractPdfText(path, {
        maxChars: 10_000,
        requester,
        onReaderStart: () => events.push(`start ${label}`),
        onReaderExit: () => events.push(`exit ${label}`),
      }).then((result) => {
        expect(result).toMatchObject({ pages: 3 });
      });
    // Alice shares three PDFs, then Bob one: Bob's is read second, not fourth.
    await Promise.all([
      read('slack:T1:alice', 'alice-1'),
      read('slack:T1:alice', 'alice-2'),
      read('slack:T1:alice', 'alice-3'),
      read('slack:T1:bob', 'bob-1'),
    ]);
    expect(events).toEqual(
      ['alice-1', 'alice-2', 'bob-1', 'alice-3'].flatMap((label) => [`start ${label}`, `exit ${label}`]),
    );
  });

  it('a PDF whose turn is stopped while it waits for the reader is never read', async () => {
    const path = await writeTextPdf(join(dir, 'waits.pdf'), REPORT);
    const started: string[] = [];
    const stop = new AbortController();
    const first = extractPdfText(path, { maxChars: 10_000, requester: 'a', onReaderStart: () => started.push('a') });
    const waiting = extractPdfText(path, {
      maxChars: 10_000,
      requester: 'b',
      signal: stop.signal,
      onReaderStart: () => started.push('b'),
    });
    stop.abort();
    expect(await waiting).toEqual({ error: 'the PDF was not read: the turn was stopped' });
    expect(await first).toMatchObject({ pages: 3 });
    expect(started).toEqual(['a']);
  });

  it('a link, a FIFO or a folder where the PDF should be is refused, never followed or waited on', async () => {
    const target = await writeTextPdf(join(dir, 'elsewhere.pdf'), REPORT);
    await symlink(target, join(dir, 'link.pdf'));
    expect(await extractPdfText(join(dir, 'link.pdf'), { maxChars: 10_000 })).toEqual({
      error: 'the PDF file could not be opened (ELOOP)',
    });
    execFileSync('mkfifo', [join(dir, 'fifo.pdf')]);
    expect(await extractPdfText(join(dir, 'fifo.pdf'), { maxChars: 10_000 })).toEqual({
      error: 'the PDF file is not a plain file',
    });
    await mkdir(join(dir, 'folder.pdf'));
    expect(await extractPdfText(join(dir, 'folder.pdf'), { maxChars: 10_000 })).toEqual({
      error: 'the PDF file is not a plain file',
    });
  });

  it('a stopped turn stops the reader: the call returns an error instead of the text', async () => {
    const path = await writeTextPdf(join(dir, 'stopped.pdf'), REPORT);
    const controller = new AbortController();
    const pending = extractPdfText(path, { maxChars: 10_000, signal: controller.signal });
    // The worker cannot have answered yet: it has not even started before this tick ends.
    controller.abort();
    expect(await pending).toEqual({ error: 'the PDF was not read: the turn was stopped' });
  });
});

describe('the text the intake saves beside a PDF', () => {
  it('says where it stops when the PDF had more, so the model does not take a part for the whole', async () => {
    const path = await writeTextPdf(join(dir, 'saved.pdf'), REPORT);
    const { extractPdfText: extract } = mediaPreparers({ pdfTextMaxChars: 20 });
    expect(await extract(path)).toEqual({
      text: 'Quarterly report\nRev\n\n[… the text stops here: the PDF has 3 pages, and only its first 20 characters were extracted]\n',
    });
    expect(await mediaPreparers().extractPdfText(path)).toEqual({
      text: expect.stringMatching(/^Quarterly report\n[^]*Nothing to see here\.$/),
    });
  });
});
