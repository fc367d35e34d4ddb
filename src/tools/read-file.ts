// read_file: a text file from the workspace, whole or a range of lines.
//
// One idea: the content comes back verbatim (no line numbers, no quoting), so the model can
// copy a passage straight into edit_file; anything about the content — which lines these
// are, what was cut — goes in one bracketed note after it.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { describeFsError } from './fs-errors.js';
import { capOutput, formatCount } from './output.js';
import { FileRefusedError } from './file-refusals.js';
import { openForReading } from './safe-open.js';
import { readTextFile, type TextFileContent } from './text-file.js';
import type { Workspace } from './workspace.js';

/** Files are read up to this size; past it, use the shell (`tail`, `sed -n`). */
export const MAX_READ_BYTES = 8 * 1024 * 1024;

const schema = z.object({
  path: z
    .string()
    .describe('The file to read, relative to the workspace root (an absolute path must be inside the workspace).'),
  startLine: z.int().min(1).optional().describe('First line to return, 1-based. Default: the first line.'),
  endLine: z.int().min(1).optional().describe('Last line to return, inclusive. Default: the last line.'),
});

export function readFileTool(workspace: Workspace, maxOutputChars: number): ToolDefinition {
  return defineTool({
    name: 'read_file',
    description:
      'Read a text file from the workspace. Returns the content verbatim; for long files, pass startLine/endLine ' +
      '(search gives line numbers). Binary files are refused.',
    schema,
    metadata: { risk: 'low', category: 'read', idempotent: true },
    async execute({ path: input, startLine, endLine }) {
      const real = await workspace.resolve(input);
      const shown = workspace.relative(real);
      if (startLine !== undefined && endLine !== undefined && endLine < startLine) {
        throw new Error(`endLine (${endLine}) is before startLine (${startLine})`);
      }
      const file = await readVerified(workspace, real, shown).catch((error: unknown) => {
        if (error instanceof FileRefusedError && error.reason === 'directory') {
          throw new Error(`${shown} is a directory; use list_dir to see what is in it`);
        }
        throw describeFsError(error, shown);
      });
      if (file.size === 0) return `(${shown} is empty)`;

      const lines = file.text.split('\n');
      // A final newline ends the last line; it does not start another one.
      if (lines.at(-1) === '' && !file.truncated) lines.pop();
      const total = lines.length;
      const first = startLine ?? 1;
      if (first > total)
        throw new Error(`startLine ${first} is past the end of ${shown} (${formatCount(total)} lines)`);
      const last = Math.min(endLine ?? total, total);
      const body = lines.slice(first - 1, last).join('\n');

      const notes: string[] = [];
      if (first > 1 || last < total)
        notes.push(`lines ${first}–${last} of ${formatCount(total)}${file.truncated ? '+' : ''}`);
      if (file.truncated) {
        notes.push(
          `only the first ${formatCount(MAX_READ_BYTES)} of ${formatCount(file.size)} bytes can be read; use run_shell (tail, sed -n) for the rest`,
        );
      }
      const capped = capOutput(body, maxOutputChars - 200);
      if (capped !== body) notes.push('the text was cut to fit: pass startLine/endLine to read the rest');
      return notes.length > 0 ? `${capped}\n[${notes.join('; ')}]` : capped;
    },
  });
}

/** The file's text, read through a descriptor checked to be inside the workspace (safe-open.ts). */
async function readVerified(workspace: Workspace, real: string, shown: string): Promise<TextFileContent> {
  const file = await openForReading(workspace, real, shown);
  try {
    return await readTextFile(file, shown, { maxBytes: MAX_READ_BYTES });
  } finally {
    await file.handle.close();
  }
}
