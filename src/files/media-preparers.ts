// The media helpers as intake.ts calls them (its MediaPreparers): an image made fit for the
// providers (image-prep.ts) and a PDF's text for models that cannot read PDFs (pdf-text.ts),
// the text capped and, when cut, saying so at its end, since the model reads the .txt file
// itself with its file tools and would otherwise take a cut text for the whole document.
//
// Both helpers, and the queues they wait in, are loaded at the first image or PDF: a bot that
// is never sent one does not carry them.
import type { MediaPreparers } from './intake.js';
import { thousands } from '../text/thousands.js';

/** The most of a PDF's text kept beside it: about 300 pages of dense prose, 1 MB as a .txt. */
const PDF_TEXT_MAX_CHARS = 1_000_000;

export interface MediaPreparerOptions {
  pdfTextMaxChars?: number;
  /** MAX_IMAGE_PIXELS: an image of more pixels is refused from its header. */
  maxImagePixels?: number;
  /** PDF_MAX_MEMORY_MB: the PDF reader process is killed past it. */
  pdfMaxMemoryMb?: number;
}

export function mediaPreparers(options: MediaPreparerOptions = {}): Required<MediaPreparers> {
  const maxChars = options.pdfTextMaxChars ?? PDF_TEXT_MAX_CHARS;
  return {
    prepareImage: async (absPath, outPathWithoutExt, request) => {
      const { prepareImageForModel } = await import('./image-prep.js');
      return prepareImageForModel(
        absPath,
        outPathWithoutExt,
        options.maxImagePixels ? { maxInputPixels: options.maxImagePixels } : {},
        request ?? {},
      );
    },
    extractPdfText: async (absPath, request) => {
      const { extractPdfText } = await import('./pdf-text.js');
      const result = await extractPdfText(absPath, {
        maxChars,
        ...(options.pdfMaxMemoryMb ? { maxMemoryMb: options.pdfMaxMemoryMb } : {}),
        ...(request ? { requester: request.requester, signal: request.signal } : {}),
        ...(request?.held ? { held: request.held } : {}),
      });
      if ('error' in result) return result;
      if (!result.truncated) return { text: result.text };
      return {
        text: `${result.text}\n\n[… the text stops here: the PDF has ${result.pages} pages, and only its first ${thousands(maxChars)} characters were extracted]\n`,
      };
    },
  };
}
