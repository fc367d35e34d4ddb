// A stand-in for a bot that is killed while it reads a PDF: starts the PDF reader on the file
// of its argument, prints the reader's pid as one line, and waits for the test to kill it.
import { extractPdfText } from '../../src/files/pdf-text.js';

const path = process.argv[2];
if (!path) throw new Error('pdf-reader-parent: give the PDF to read');
await extractPdfText(path, {
  maxChars: 1_000_000,
  // Well past what the test lets it reach: only the reader's own warden can end it once this process is gone.
  maxMemoryMb: 4096,
  timeLimitMs: 600_000,
  onReaderStart: (pid) => console.log(String(pid)),
});
