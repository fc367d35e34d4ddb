// The user turn a message with files becomes: the person's text, then a short list the model
// reads (each file's name, type, size and path, and what it can do with it), then a reference
// part for each image or PDF, which the outbound view turns into what the active model can
// take at each call (attachment-view.ts). Files that did not come through are named too, so
// the model never answers as if nothing was shared.
import type { ContentPart, StoredFile, UserContent } from '../engine/index.js';
import { displayName, type IntakeResult } from './intake.js';
import { formatBytes } from './sizes.js';

export function userContentWithFiles(text: string, intake: IntakeResult): UserContent {
  const lines = intake.stored.map(describe);
  const { missing } = intake;
  const block = [
    ...(lines.length > 0 ? ['[Files shared with this message, saved in your workspace:', ...lines, ']'] : []),
    ...(missing.length > 0
      ? ['[Files shared with this message that did not come through:', ...missing.map((line) => `- ${line}`), ']']
      : []),
  ].join('\n');
  const words = [text.trim(), block].filter(Boolean).join('\n\n');
  const parts: ContentPart[] = intake.stored
    .filter((file) => file.kind === 'image' || file.kind === 'pdf')
    .map((file) => ({ type: 'attachment', attachment: file }));
  if (parts.length === 0) return words;
  return [{ type: 'text', text: words }, ...parts];
}

function describe(file: StoredFile): string {
  const facts = `${file.mimeType}, ${formatBytes(file.size)}`;
  const shared = `"${displayName(file.name)}"`;
  const head = `- ${file.path} (${shared}; ${facts})`;
  if (file.size === 0) return `${head}: the file is empty`;
  switch (file.kind) {
    case 'image':
      return file.unreadable
        ? `${head}: an image you are not shown (${file.unreadable})`
        : `${head}: an image, attached below when you can view images`;
    case 'pdf':
      return file.textPath
        ? `${head}: a PDF, attached below when you can read PDFs; its text is in ${file.textPath}`
        : `${head}: a PDF${file.unreadable ? ` (${file.unreadable})` : ''}`;
    case 'text':
      return `${head}: text; read it with your file tools`;
    case 'other':
      return `${head}: kept as it is; this type cannot be read here${/zip|tar|gzip|compress|7z|rar/.test(file.mimeType) ? ' (archives are not unpacked)' : ''}`;
  }
}
