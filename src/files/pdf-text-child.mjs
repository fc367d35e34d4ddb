// The PDF reader's own process (pdf-text.ts starts it, one PDF per process): reads the PDF's
// bytes from its standard input, a file the bot opened for it, extracts the text page by page
// within the budgets it is given, and writes one JSON line to its standard output. Whatever
// the PDF makes pdf.js do (inflate 2 GiB of one content stream, say) happens in this process,
// which the bot watches and kills past its memory bound; the bot's own memory never holds it.
//
// Plain JavaScript, not TypeScript: the same file runs under `npm start` (copied into the
// build as it is), under tsx and under vitest, with no loader in front of it. It takes no
// environment from the bot (no tokens to find) and needs no path: the file comes as fd 0.
import { readFileSync } from 'node:fs';
import { getDocumentProxy } from 'unpdf';

/** @typedef {{ maxChars: number; maxPages: number }} Budget */
/** @typedef {{ kind: 'text'; text: string; pages: number; truncated: boolean } | { kind: 'error'; name: string; code?: string; message: string }} Reply */

/** @param {Budget} budget @returns {Promise<Reply>} */
async function extract(budget) {
  const data = new Uint8Array(readFileSync(0));
  // verbosity 0: pdf.js would print its parser's warnings ("Indexing all PDF objects") on
  // stderr, which the bot only keeps the end of, for its own diagnosis. Eval and system
  // fonts are off: text needs neither.
  const pdf = await getDocumentProxy(data, { verbosity: 0, isEvalSupported: false, useSystemFonts: false, disableFontFace: true });
  try {
    /** @type {string[]} */
    const pages = [];
    let chars = 0;
    let truncated = false;
    for (let number = 1; number <= pdf.numPages; number++) {
      if (chars >= budget.maxChars || number > budget.maxPages) {
        truncated = true;
        break;
      }
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item) || typeof item.str !== 'string') continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      text = text.trim();
      pages.push(text);
      chars += text.length + 2;
    }
    let text = pages.join('\n\n');
    if (text.length > budget.maxChars) {
      text = text.slice(0, budget.maxChars);
      truncated = true;
    }
    return { kind: 'text', text, pages: pdf.numPages, truncated };
  } finally {
    await pdf.destroy();
  }
}

/** @param {unknown} error @returns {Reply} */
function failure(error) {
  const failed = /** @type {{ name?: unknown; code?: unknown; message?: unknown } | null | undefined} */ (error);
  return {
    kind: 'error',
    name: String(failed?.name),
    ...(typeof failed?.code === 'string' ? { code: failed.code } : {}),
    message: String(failed?.message ?? error),
  };
}

/** @type {unknown} */
const argument = JSON.parse(process.argv[2] ?? '{}');
const budget = /** @type {Budget} */ (argument);
const reply = await extract(budget).catch(failure);
// Written whole before the process ends: a large text is more than one pipe's buffer.
process.stdout.write(`${JSON.stringify(reply)}\n`, () => process.exit(0));
