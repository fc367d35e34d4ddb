// A shared file's reference, made into what the model of the moment can take, at each model
// call (engine/outbound.ts calls this; the transcript keeps only the reference, so a restart
// or a model switch re-decides): an image as a data URL (its re-encoded copy when the
// original is too large) for a model with vision, a PDF as a document for a model that reads
// PDFs, else its extracted text up to the tool results' cap, else a line saying where it is.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { AttachmentView, ContentPart, ModelCapabilities, StoredFile } from '../engine/index.js';
import { readPinnedFileSync } from '../tools/pinned-folder.js';
import { isPdf, sniffImageType } from './file-kind.js';
import { IMAGE_LIMITS } from './image-prep.js';

/** The largest PDF sent as a document: Anthropic takes requests up to 32 MB, base64 makes it 4/3. */
const MAX_NATIVE_PDF_BYTES = 20 * 1024 * 1024;

/** Extracted text inlined into a user turn, at most (the tool results' cap: nothing is inlined past it). */
const MAX_INLINED_TEXT_CHARS = 20_000;

export function attachmentViewFor(folder: string): AttachmentView {
  return (file, capabilities) => view(folder, file, capabilities);
}

function view(folder: string, file: StoredFile, capabilities: ModelCapabilities): ContentPart[] {
  const say = (text: string): ContentPart[] => [{ type: 'text', text }];
  if (file.kind === 'image') {
    if (file.unreadable) return say(`[image ${file.path}: not shown to you (${file.unreadable})]`);
    if (!capabilities.vision) return say(`[image ${file.path} was shared; this model cannot view images]`);
    const source = file.modelCopy ?? { path: file.path, mimeType: file.mimeType };
    const bytes = read(folder, source.path);
    if (!bytes) return say(`[image ${file.path} is no longer in the workspace]`);
    // The workspace's commands can change the file since it was checked: an image now past what
    // providers take would fail every later call of this conversation, so it is named instead.
    if (bytes.length > IMAGE_LIMITS.maxBytes || sniffImageType(bytes) !== source.mimeType)
      return say(`[image ${file.path} changed since it was shared and is no longer sent]`);
    return [{ type: 'image_url', image_url: { url: `data:${source.mimeType};base64,${bytes.toString('base64')}` } }];
  }
  if (file.kind === 'pdf') {
    if (capabilities.pdf) {
      const bytes = read(folder, file.path);
      // A PDF a provider would refuse (past its request size, or no longer a PDF) goes as its text instead.
      if (bytes && bytes.length <= MAX_NATIVE_PDF_BYTES && isPdf(bytes))
        return [
          {
            type: 'file',
            file: {
              filename: path.posix.basename(file.path),
              file_data: `data:application/pdf;base64,${bytes.toString('base64')}`,
            },
          },
        ];
    }
    const text = file.textPath ? read(folder, file.textPath)?.toString('utf8') : undefined;
    if (text === undefined)
      return say(`[PDF ${file.path} was shared; ${file.unreadable ?? 'its text could not be read'}]`);
    const cut = text.length > MAX_INLINED_TEXT_CHARS;
    const shown = cut ? text.slice(0, MAX_INLINED_TEXT_CHARS) : text;
    return say(
      `[Text of the PDF ${file.path}${cut ? `, its first ${MAX_INLINED_TEXT_CHARS} characters (all of it is in ${file.textPath})` : ''}:]\n${shown}`,
    );
  }
  return [];
}

/** The most bytes read back for one reference: past it the file was swapped for something else. */
const MAX_READ_BYTES = 64 * 1024 * 1024;

/**
 * A stored file's bytes, only from inside the conversation's folder and only a plain file:
 * the folder's commands can replace `uploads/x.png`, or a folder on its way, with a link to
 * anything the bot may read, so the file is reached through held folders, never through a
 * link (src/tools/pinned-folder.ts). Undefined when gone.
 */
function read(folder: string, relativePath: string): Buffer | undefined {
  let root: string;
  try {
    root = realpathSync(folder);
  } catch {
    return undefined;
  }
  return readPinnedFileSync(root, relativePath, MAX_READ_BYTES);
}
