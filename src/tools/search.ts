// search: find text in the workspace's files, grep-style, in pure Node (no ripgrep).
//
// One idea: the answer is `path:line: text`, capped and honest about what it did not look
// at: the cap, skipped binary and oversized files, the folders never entered, and a pattern
// stopped for taking too long. A search that silently stops at 100 hits reads to the model
// like "there are exactly 100".
//
// A regular expression runs in a worker thread (pattern-worker.ts) with a time budget, so a
// pathological pattern (`^(a+)+$`) stalls only that thread, and a stop or the budget ends
// it. Files are still opened and read here, through safe-open.ts, and sent to the worker a
// batch at a time. Literal text is found here with indexOf, which cannot backtrack.
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { describeFsError } from './fs-errors.js';
import { escapeRegExp, globMatcher } from './glob.js';
import { capOutput, formatCount } from './output.js';
import { FileRefusedError } from './file-refusals.js';
import { openForReading } from './safe-open.js';
import { PatternWorker, type BatchMatches, type LineMatch, type PatternTooSlowError } from './pattern-worker.js';
import { looksBinary, readPrefix } from './text-file.js';
import { NOT_DESCENDED, walkTree } from './walk.js';
import type { Workspace } from './workspace.js';

const DEFAULT_SEARCH_RESULTS = 100;
const MAX_SEARCH_RESULTS = 1000;
/** Larger files are skipped (and counted): they are logs or data, not what a search means. */
const MAX_SEARCH_FILE_BYTES = 4 * 1024 * 1024;
/** A matching line is shown up to this many characters, around the match. */
const MAX_LINE_CHARS = 300;
/** A regular expression may spend this long matching, over the whole search. */
const DEFAULT_SEARCH_TIME_LIMIT_MS = 10_000;
/**
 * Files go to the matcher in batches of about this many characters (and at most
 * BATCH_FILES files): one message per file would cost a round trip per tiny file, one
 * message for the workspace would hold all of it in memory twice.
 */
const BATCH_CHARS = 1024 * 1024;
const BATCH_FILES = 256;

const schema = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('What to look for: a JavaScript regular expression, or plain text with literal: true.'),
  literal: z.boolean().default(false).describe('Treat the pattern as plain text rather than a regular expression.'),
  ignoreCase: z.boolean().default(false).describe('Match regardless of letter case.'),
  path: z
    .string()
    .default('.')
    .describe(
      'A directory (searched recursively) or a single file, relative to the workspace root. Default: the root.',
    ),
  glob: z
    .string()
    .optional()
    .describe(
      'Only files matching this glob: "*.ts" matches names anywhere; "src/**/*.test.ts" matches workspace-relative paths.',
    ),
  maxResults: z
    .int()
    .min(1)
    .max(MAX_SEARCH_RESULTS)
    .default(DEFAULT_SEARCH_RESULTS)
    .describe(`Stop after this many matching lines. Default ${DEFAULT_SEARCH_RESULTS}.`),
});

export interface SearchToolOptions {
  /** How long a regular expression may spend matching, in all (default 10 s). */
  timeLimitMs?: number;
}

export function searchTool(
  workspace: Workspace,
  maxOutputChars: number,
  options: SearchToolOptions = {},
): ToolDefinition {
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_SEARCH_TIME_LIMIT_MS;
  return defineTool({
    name: 'search',
    description:
      'Search the text files of the workspace for a regular expression or plain text. Returns matching lines as ' +
      '"path:line: text". Skips binary files, files over 4 MB, .git and node_modules. A regular expression that ' +
      `keeps matching for over ${timeLimitMs / 1000} s is stopped; literal text never is.`,
    schema,
    metadata: { risk: 'low', category: 'read', idempotent: true },
    async execute(args, { signal }) {
      let regex: RegExp;
      try {
        // Only parsed here (linear in the pattern's length); a regular expression is matched
        // in the worker, never on this thread.
        regex = new RegExp(args.literal ? escapeRegExp(args.pattern) : args.pattern, args.ignoreCase ? 'i' : '');
      } catch (error) {
        throw new Error(
          `invalid regular expression: ${(error as Error).message} (pass literal: true to search for the text as is)`,
        );
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
      const matcher: LineMatcher = args.literal
        ? literalMatcher(args.pattern, args.ignoreCase)
        : new PatternWorker({
            source: regex.source,
            flags: regex.flags,
            timeLimitMs,
            maxLineChars: MAX_LINE_CHARS,
            signal,
          });
      const hits: string[] = [];
      const counts = { searched: 0, binary: 0, large: 0, refused: 0 };
      let capped = false;
      let tooSlow: PatternTooSlowError | null = null as PatternTooSlowError | null;
      let batch: SearchText[] = [];
      let batchChars = 0;

      /** Match the batch; false once the search should end (the cap, or the time). */
      const matchBatch = async (): Promise<boolean> => {
        const texts = batch;
        batch = [];
        batchChars = 0;
        // One more than still fits, to know whether the cap cut anything.
        const found = await matcher.match(
          texts.map((file) => file.text),
          args.maxResults - hits.length + 1,
        );
        for (const [index, matches] of found.perText.entries()) {
          for (const [line, shown] of matches) {
            if (hits.length >= args.maxResults) {
              capped = true;
              return false;
            }
            hits.push(`${texts[index]!.shown}:${line}: ${shown}`);
          }
          counts.searched++;
        }
        tooSlow = found.tooSlow;
        return tooSlow === null;
      };

      try {
        for await (const file of files) {
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
          const text = bytes.toString('utf8');
          batch.push({ shown: file.shown, text });
          batchChars += text.length;
          if ((batchChars >= BATCH_CHARS || batch.length >= BATCH_FILES) && !(await matchBatch())) break;
        }
        if (batch.length > 0 && !capped && tooSlow === null) await matchBatch();
      } finally {
        await matcher.close();
      }

      const notes: string[] = [];
      if (capped) notes.push(`stopped at ${formatCount(args.maxResults)} matches; narrow the search with path or glob`);
      if (counts.binary > 0) notes.push(`${formatCount(counts.binary)} binary file(s) skipped`);
      if (counts.large > 0)
        notes.push(`${formatCount(counts.large)} file(s) over ${formatCount(MAX_SEARCH_FILE_BYTES)} bytes skipped`);
      if (counts.refused > 0)
        notes.push(
          `${formatCount(counts.refused)} file(s) not opened (hard links, special files, or changed while searching)`,
        );
      const note = notes.length > 0 ? `\n[${notes.join('; ')}]` : '';
      if (tooSlow) {
        // Said first and plainly: the model must not read a stopped search as "no matches".
        const stopped = `${tooSlow.message}; simplify it or use literal: true`;
        if (hits.length === 0) {
          return `${stopped} (no matches in the ${formatCount(counts.searched)} file(s) searched before it was stopped)${note}`;
        }
        return `${capOutput(hits.join('\n'), maxOutputChars - 400)}\n[${stopped}; these are the matches in the ${formatCount(counts.searched)} file(s) searched before that]${note}`;
      }
      if (hits.length === 0) {
        return `no matches for ${regex.toString()} in ${shownRoot} (${formatCount(counts.searched)} file(s) searched; ${[...NOT_DESCENDED].join(' and ')} not entered)${note}`;
      }
      return capOutput(hits.join('\n'), maxOutputChars - 300) + note;
    },
  });
}

/** Finds the matching lines in each text, at most `limit` in all (pattern-worker.ts, or here). */
interface LineMatcher {
  match(texts: string[], limit: number): Promise<BatchMatches>;
  close(): Promise<void>;
}

interface SearchText {
  shown: string;
  text: string;
}

/**
 * Literal text, found on this thread: indexOf cannot backtrack, so a line costs at most its
 * length times the pattern's. With ignoreCase both sides are lower-cased first.
 */
function literalMatcher(pattern: string, ignoreCase: boolean): LineMatcher {
  const needle = ignoreCase ? pattern.toLowerCase() : pattern;
  return {
    async match(texts, limit) {
      let found = 0;
      const perText = texts.map((text) => {
        const inFile: LineMatch[] = [];
        let lineNumber = 0;
        for (let start = 0; start <= text.length && found < limit;) {
          let end = text.indexOf('\n', start);
          if (end === -1) end = text.length;
          lineNumber++;
          let line = text.slice(start, end);
          if (line.endsWith('\r')) line = line.slice(0, -1);
          const at = (ignoreCase ? line.toLowerCase() : line).indexOf(needle);
          if (at !== -1) {
            inFile.push([lineNumber, excerpt(line, at)]);
            found++;
          }
          start = end + 1;
        }
        return inFile;
      });
      return { perText, tooSlow: null };
    },
    async close() {},
  };
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

/**
 * The line, or a window of it around the match when it is long (minified code). The pattern
 * worker has its own copy (WORKER_SOURCE in pattern-worker.ts): keep the two in step.
 */
function excerpt(line: string, matchIndex: number): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(matchIndex - 100, line.length - MAX_LINE_CHARS));
  const end = start + MAX_LINE_CHARS;
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}
