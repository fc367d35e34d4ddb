// The media helpers as intake.ts calls them (its MediaPreparers): an image made fit for the
// providers (image-prep.ts) and a PDF's text for models that cannot read PDFs (pdf-text.ts),
// the text capped and, when cut, saying so at its end, since the model reads the .txt file
// itself with its file tools and would otherwise take a cut text for the whole document.
import { prepareImageForModel } from './image-prep.js';
import type { MediaPreparers } from './intake.js';
import { extractPdfText } from './pdf-text.js';

/** The most of a PDF's text kept beside it: about 300 pages of dense prose, 1 MB as a .txt. */
export const PDF_TEXT_MAX_CHARS = 1_000_000;

export function mediaPreparers(options: { pdfTextMaxChars?: number } = {}): Required<MediaPreparers> {
  const maxChars = options.pdfTextMaxChars ?? PDF_TEXT_MAX_CHARS;
  return {
    prepareImage: (absPath, outPathWithoutExt) => prepareImageForModel(absPath, outPathWithoutExt),
    extractPdfText: async (absPath) => {
      const result = await extractPdfText(absPath, { maxChars });
      if ('error' in result) return result;
      if (!result.truncated) return { text: result.text };
      return { text: `${result.text}\n\n[… the text stops here: the PDF has ${result.pages} pages, and only its first ${maxChars.toLocaleString('en-US')} characters were extracted]\n` };
    },
  };
}
