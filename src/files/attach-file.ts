// attach_file: the model hands a file from the conversation's workspace back into the thread,
// as an upload on the platform (Slack files.uploadV2, a Discord attachment, a download link
// in the playground), through the platform's sink (transfer.ts).
//
// It is approved like a write, and the card shows what would leave: the file's name, size and
// type, and the first lines of a text file (masked). What is uploaded is a snapshot taken after
// the approval, checked again: a text file goes with the configured secrets masked; a binary
// file that carries a secret value (in any form the masker knows, which it cannot rewrite in
// a binary) is refused. A compressed file (known by its first bytes: compressed-formats.ts)
// hides every byte of a value from that check, so what can be opened is opened and its contents
// checked the same way (compressed-contents.ts): a zip, and so every .docx, .xlsx, .pptx and
// .odt, member by member, a gzip file, a zlib stream, within bounds that stop a zip bomb. The
// other formats (xz, zstd, 7z…), and whatever inside cannot be read, are refused unless an admin
// set ATTACH_COMPRESSED=allow: the check could only say "nothing found" about what it cannot read.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import type { SessionKey } from '../store/session-store.js';
import { openForReading } from '../tools/safe-open.js';
import { describeFsError } from '../tools/fs-errors.js';
import { isInside } from '../tools/real-paths.js';
import type { Workspace } from '../tools/workspace.js';
import { checkCompressedContents, readableFormat } from './compressed-contents.js';
import { aFormat, compressedFormat } from './compressed-formats.js';
import { judgeFile, SNIFF_BYTES } from './file-kind.js';
import { holdsSecret, type ByteReading } from './secret-bytes.js';
import { formatBytes } from './sizes.js';
import type { FileTransfers } from './transfer.js';

const schema = z.object({
  path: z.string().min(1).describe('The file to post, relative to your workspace (e.g. "out/cleaned.csv").'),
  comment: z.string().max(2000).optional().describe('A short line posted with the file.'),
});

export interface AttachFileOptions {
  workspace: Workspace;
  thread: SessionKey;
  transfers: FileTransfers;
  /** Rewrites the configured secrets' values (and their encoded forms) in text. */
  mask: (text: string) => string;
  /** The largest file posted (MAX_FILE_BYTES); a platform's own limit may be lower. */
  maxBytes: number;
  /** ATTACH_COMPRESSED: `refuse` (the default) or `allow` compressed contents the secret check cannot read (zip, gzip and zlib are read either way). */
  compressed?: 'refuse' | 'allow';
}

const PREVIEW_LINES = 8;
const PREVIEW_CHARS = 600;

export function attachFileTool(options: AttachFileOptions): ToolDefinition {
  const { workspace, thread, transfers, mask, maxBytes } = options;
  const allowCompressed = options.compressed === 'allow';
  return defineTool({
    name: 'attach_file',
    description:
      'Post a file from your workspace into this conversation, as a file people can download (a report, a cleaned CSV, an image you made). Prefer this to pasting a long file as text.',
    schema,
    metadata: {
      risk: 'medium',
      category: 'write',
      idempotent: false,
      confinement: "posts one file from the conversation's folder into this thread",
    },
    shownArguments: ({ path: input, comment }) => {
      const facts = peek(workspace, input, mask, allowCompressed);
      return { file: input, ...facts, ...(comment ? { comment } : {}) };
    },
    async execute({ path: input, comment }, { signal }) {
      const sink = transfers.sink(thread.platform);
      if (!sink) throw new Error(`this bot cannot post files to ${thread.platform}`);
      const real = await workspace.resolve(input);
      const shown = workspace.relative(real);
      let bytes: Buffer;
      try {
        const file = await openForReading(workspace, real, shown);
        try {
          if (file.stats.size > maxBytes)
            throw new Error(
              `refused: ${shown} is ${formatBytes(file.stats.size)}, over the ${formatBytes(maxBytes)} a posted file may be (MAX_FILE_BYTES)`,
            );
          bytes = await file.handle.readFile();
        } finally {
          await file.handle.close();
        }
      } catch (error) {
        throw describeFsError(error, shown);
      }
      const name = path.basename(real);
      const judged = judgeFile(bytes.subarray(0, SNIFF_BYTES), name, undefined);
      // A text file is judged by its first bytes; what its masked text still holds further on in
      // another form (UTF-16 past them, say) is looked for in its bytes, as in a binary file.
      const outgoing =
        judged.kind === 'text'
          ? await refuseSecrets(Buffer.from(mask(bytes.toString('utf8')), 'utf8'), mask, shown, signal, ['latin1'])
          : await refuseSecrets(bytes, mask, shown, signal);
      // Its own bytes first (a member's name, a stored member), then what compression hides.
      const format = judged.kind === 'other' ? compressedFormat(bytes) : undefined;
      const unchecked = format
        ? await checkCompressedContents(bytes, format, shown, {
            holdsSecret: (inner) => holdsSecret(inner, mask, undefined, signal),
            allowUnreadable: allowCompressed,
            signal,
          })
        : [];
      const limit = await sink.maxBytes?.(thread);
      if (limit !== undefined && outgoing.length > limit) {
        throw new Error(
          `refused: ${shown} is ${formatBytes(outgoing.length)}, over the ${formatBytes(limit)} this ${thread.platform} thread accepts`,
        );
      }
      // The snapshot checked is the snapshot posted: the file may change while it uploads.
      const dir = await mkdtemp(path.join(tmpdir(), 'attach-'));
      try {
        const snapshot = path.join(dir, name);
        await writeFile(snapshot, outgoing, { mode: 0o600 });
        const posted = await sink.post(
          thread,
          { path: snapshot, name, mimeType: judged.mimeType, size: outgoing.length, ...(comment ? { comment } : {}) },
          signal,
        );
        return {
          posted: shown,
          size: outgoing.length,
          type: judged.mimeType,
          ...(!outgoing.equals(bytes) ? { note: 'secret values in it were masked' } : {}),
          ...(unchecked.length > 0
            ? {
                unchecked: `posted without checking these for secret values (ATTACH_COMPRESSED=allow): ${listed(unchecked)}`,
              }
            : {}),
          ...(posted.link ? { link: posted.link } : {}),
        };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  });
}

/** The first few of a list that may run to thousands (an archive of encrypted members). */
function listed(items: readonly string[], shown = 10): string {
  return items.length > shown
    ? `${items.slice(0, shown).join('; ')}; and ${items.length - shown} more`
    : items.join('; ');
}

/** A binary file leaves whole or not at all: one that holds a secret value is refused. */
async function refuseSecrets(
  bytes: Buffer,
  mask: (text: string) => string,
  shown: string,
  signal: AbortSignal | undefined,
  readings?: readonly ByteReading[],
): Promise<Buffer> {
  if (await holdsSecret(bytes, mask, readings, signal))
    throw new Error(`refused: ${shown} holds a configured secret value, which cannot be masked in a binary file`);
  return bytes;
}

/** The card's line on a compressed file: what the check will do with it when it runs. */
function compressedFact(format: string, allowCompressed: boolean): string {
  const kind = aFormat(format);
  if (readableFormat(format)) {
    return allowCompressed
      ? `${kind}: it will be opened and what is inside checked for secret values (refused if it holds one); what cannot be read goes unchecked (ATTACH_COMPRESSED=allow)`
      : `${kind}: it will be opened and what is inside checked for secret values; refused if it holds one, or if something inside cannot be read (ATTACH_COMPRESSED)`;
  }
  return allowCompressed
    ? `${kind}: its contents cannot be read, so they are not checked for secret values (ATTACH_COMPRESSED=allow)`
    : `${kind}: the check cannot read it, so it will be refused (ATTACH_COMPRESSED)`;
}

/** The card's facts about the file, read without following a link at the end; never throws. */
function peek(
  workspace: Workspace,
  input: string,
  mask: (text: string) => string,
  allowCompressed: boolean,
): Record<string, unknown> {
  let fd: number | undefined;
  try {
    const real = realpathSync(path.resolve(workspace.root, input));
    if (!isInside(real, workspace.root)) return { where: "outside the conversation's folder: checked when it runs" };
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW);
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { where: 'not a plain file' };
    const head = Buffer.alloc(Math.min(SNIFF_BYTES, stats.size));
    readSync(fd, head, 0, head.length, 0);
    const judged = judgeFile(head, real, undefined);
    const facts: Record<string, unknown> = {
      name: path.basename(real),
      size: formatBytes(stats.size),
      type: judged.mimeType,
    };
    const format = judged.kind === 'other' ? compressedFormat(head) : undefined;
    if (format) facts.compressed = compressedFact(format, allowCompressed);
    if (judged.kind === 'text') {
      const lines = mask(head.toString('utf8')).split('\n').slice(0, PREVIEW_LINES).join('\n');
      facts.first_lines = lines.length > PREVIEW_CHARS ? `${lines.slice(0, PREVIEW_CHARS)}…` : lines;
    }
    return facts;
  } catch (error) {
    return { where: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'cannot be read' };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
