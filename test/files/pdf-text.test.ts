// A PDF shared with a model that cannot read PDFs: its text comes out in page order, within
// a character budget; a corrupt, encrypted, empty or fake PDF is a plain error, never a
// throw; a stopped turn stops the reader.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaPreparers } from '../../src/files/media-preparers.js';
import { extractPdfText } from '../../src/files/pdf-text.js';
import { writeCorruptPdf, writeEncryptedPdf, writeTextPdf } from '../support/file-fixtures.js';

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
    expect(result).toEqual({ text: 'Quarterly report\nRevenue rose 12% (EUR 4,213k) in Q3.', pages: 3, truncated: true });
  });

  it('a corrupt PDF is an error that says the file is not a readable PDF', async () => {
    const path = await writeCorruptPdf(join(dir, 'corrupt.pdf'));
    expect(await extractPdfText(path, { maxChars: 10_000 })).toEqual({ error: 'the file is not a readable PDF (Invalid PDF structure)' });
  });

  it('an encrypted PDF is an error that says it is password-protected', async () => {
    const path = await writeEncryptedPdf(join(dir, 'locked.pdf'));
    expect(await extractPdfText(path, { maxChars: 10_000 })).toEqual({ error: 'the PDF is encrypted (password-protected), so its text cannot be read' });
  });

  it('an empty file, a text file named .pdf and a missing file are errors, not throws', async () => {
    const empty = join(dir, 'empty.pdf');
    await writeFile(empty, '');
    const fake = join(dir, 'notes.pdf');
    await writeFile(fake, 'just some notes, not a PDF\n');
    expect(await extractPdfText(empty, { maxChars: 100 })).toEqual({ error: expect.stringContaining('the file is not a readable PDF (The PDF file is empty') });
    expect(await extractPdfText(fake, { maxChars: 100 })).toEqual({ error: 'the file is not a readable PDF (Invalid PDF structure)' });
    expect(await extractPdfText(join(dir, 'absent.pdf'), { maxChars: 100 })).toEqual({ error: 'the PDF file is not there' });
  });

  it('a reader that outgrows its heap cap is stopped with an error, and the bot carries on', async () => {
    const path = await writeTextPdf(join(dir, 'heavy.pdf'), REPORT);
    // 4 MB is less than pdf.js itself needs once loaded: the cap is hit for certain, as a
    // PDF that needs more than the default 256 MB would hit it.
    expect(await extractPdfText(path, { maxChars: 10_000, maxHeapMb: 4 })).toEqual({ error: 'the PDF needs more memory than the reader may use' });
    expect(await extractPdfText(path, { maxChars: 10_000 })).toMatchObject({ pages: 3 });
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
    expect(await mediaPreparers().extractPdfText(path)).toEqual({ text: expect.stringMatching(/^Quarterly report\n[^]*Nothing to see here\.$/) });
  });
});
