// search: find text in the workspace's files, grep-style, in pure Node (no ripgrep).
//
// One idea: the answer is `path:line: text`, capped and honest about what it did not look
// at: the cap, skipped binary and oversized files, the folders never entered. A search that
// silently stops at 100 hits reads to the model like "there are exactly 100".
//
// Known limit: the pattern runs in JavaScript's backtracking regex engine on the event
// loop, so a pathological pattern (`(a+)+$`) on a long line can stall the process and no
// stop can cut it short; a `literal: true` search cannot.
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { describeFsError } from './fs-errors.js';
import { escapeRegExp, globMatcher } from './glob.js';
import { capOutput, formatCount } from './output.js';
import { FileRefusedError, openForReading } from './safe-open.js';
import { looksBinary, readPrefix } from './text-file.js';
import { NOT_DESCENDED, walkTree } from './walk.js';
import type { Workspace } from './workspace.js';

export const DEFAULT_SEARCH_RESULTS = 100;
const MAX_SEARCH_RESULTS = 1000;
/** Larger files are skipped (and counted): they are logs or data, not what a search means. */
export const MAX_SEARCH_FILE_BYTES = 4 * 1024 * 1024;
/** A matching line is shown up to this many characters, around the match. */
const MAX_LINE_CHARS = 300;

const schema = z.object({
  pattern: z.string().min(1).describe('What to look for: a JavaScript regular expression, or plain text with literal: true.'),
  literal: z.boolean().default(false).describe('Treat the pattern as plain text rather than a regular expression.'),
  ignoreCase: z.boolean().default(false).describe('Match regardless of letter case.'),
  path: z.string().default('.').describe('A directory (searched recursively) or a single file, relative to the workspace root. Default: the root.'),
  glob: z
    .string()
    .optional()
    .describe('Only files matching this glob: "*.ts" matches names anywhere; "src/**/*.test.ts" matches workspace-relative paths.'),
  maxResults: z
    .int()
    .min(1)
    .max(MAX_SEARCH_RESULTS)
    .default(DEFAULT_SEARCH_RESULTS)
    .describe(`Stop after this many matching lines. Default ${DEFAULT_SEARCH_RESULTS}.`),
});

export function searchTool(workspace: Workspace, maxOutputChars: number): ToolDefinition {
  return defineTool({
    name: 'search',
    description:
      'Search the text files of the workspace for a regular expression or plain text. Returns matching lines as ' +
      '"path:line: text". Skips binary files, files over 4 MB, .git and node_modules.',
    schema,
    metadata: { risk: 'low', category: 'read', idempotent: true },
    async execute(args, { signal }) {
      let regex: RegExp;
      try {
        regex = new RegExp(args.literal ? escapeRegExp(args.pattern) : args.pattern, args.ignoreCase ? 'i' : '');
      } catch (error) {
        throw new Error(`invalid regular expression: ${(error as Error).message} (pass literal: true to search for the text as is)`);
      }
      const matchesGlob = args.glob === undefined ? () => true : globMatcher(args.glob);
      const root = await workspace.resolve(args.path);
      const shownRoot = workspace.relative(root);
      const rootStat = await stat(root).catch((error: unknown) => {
        throw describeFsError(error, shownRoot);
      });

      const files = rootStat.isDirectory()
        ? filesUnder(workspace, root, matchesGlob, signal)
        : singleFile(root, shownRoot);
      const hits: string[] = [];
      const counts = { searched: 0, binary: 0, large: 0, refused: 0 };
      let capped = false;
      outer: for await (const file of files) {
        signal.throwIfAborted();
        let bytes: Buffer;
        try {
          const content = await readSearchable(workspace, file);
          if (content === 'large') {
            counts.large++;
            continue;
          }
          bytes = content;
        } catch (error) {
          // A file asked for by name gets its reason. In a tree, a refused file is counted and
          // one that vanished or cannot be read is passed over.
          if (!rootStat.isDirectory()) throw describeFsError(error, file.shown);
          if (error instanceof FileRefusedError) counts.refused++;
          continue;
        }
        if (looksBinary(bytes)) {
          counts.binary++;
          continue;
        }
        counts.searched++;
        const lines = bytes.toString('utf8').split('\n');
        for (let index = 0; index < lines.length; index++) {
          const line = lines[index]!;
          const match = regex.exec(line);
          if (!match) continue;
          if (hits.length >= args.maxResults) {
            capped = true;
            break outer;
          }
          hits.push(`${file.shown}:${index + 1}: ${excerpt(line.replace(/\r$/, ''), match.index)}`);
        }
      }

      const notes: string[] = [];
      if (capped) notes.push(`stopped at ${formatCount(args.maxResults)} matches; narrow the search with path or glob`);
      if (counts.binary > 0) notes.push(`${formatCount(counts.binary)} binary file(s) skipped`);
      if (counts.large > 0) notes.push(`${formatCount(counts.large)} file(s) over ${formatCount(MAX_SEARCH_FILE_BYTES)} bytes skipped`);
      if (counts.refused > 0) notes.push(`${formatCount(counts.refused)} file(s) not opened (hard links, special files, or changed while searching)`);
      const note = notes.length > 0 ? `\n[${notes.join('; ')}]` : '';
      if (hits.length === 0) {
        return `no matches for ${regex.toString()} in ${shownRoot} (${formatCount(counts.searched)} file(s) searched; ${[...NOT_DESCENDED].join(' and ')} not entered)${note}`;
      }
      return capOutput(hits.join('\n'), maxOutputChars - 300) + note;
    },
  });
}

interface SearchFile {
  realPath: string;
  shown: string;
}

async function* filesUnder(
  workspace: Workspace,
  root: string,
  matchesGlob: (relativePath: string) => boolean,
  signal: AbortSignal,
): AsyncGenerator<SearchFile> {
  // Symlinks are not followed (see walk.ts): a link to a file outside would leak it. Each file
  // is then opened through safe-open.ts, which refuses hard links and swapped folders.
  for await (const entry of walkTree(workspace, root, { recursive: true, signal })) {
    if (entry.kind === 'file' && matchesGlob(entry.shown)) yield entry;
  }
}

/** A file's bytes, through a verified descriptor (safe-open.ts), or 'large' past the size cap. */
async function readSearchable(workspace: Workspace, file: SearchFile): Promise<Buffer | 'large'> {
  const opened = await openForReading(workspace, file.realPath, file.shown);
  try {
    if (opened.stats.size > MAX_SEARCH_FILE_BYTES) return 'large';
    return await readPrefix(opened.handle, opened.stats.size);
  } finally {
    await opened.handle.close();
  }
}

async function* singleFile(realPath: string, shown: string): AsyncGenerator<SearchFile> {
  yield { realPath, shown };
}

/** The line, or a window of it around the match when it is long (minified code). */
function excerpt(line: string, matchIndex: number): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(matchIndex - 100, line.length - MAX_LINE_CHARS));
  const end = start + MAX_LINE_CHARS;
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}
