// edit_file: replace an exact piece of text in a workspace file.
//
// One idea: an edit must be unambiguous. The old text has to occur exactly once (or the
// model must say replaceAll), and a refusal says how many times it did occur, so the model
// knows whether to add context or to re-read the file. Replacement is plain text: no `$&`
// or `$1` patterns, which String.replace would otherwise interpret inside code.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { describeFsError } from './fs-errors.js';
import { MAX_READ_BYTES } from './read-file.js';
import { writeGranted } from './granted-writes.js';
import { openForEditing, openForReading, replaceContent } from './safe-open.js';
import { readTextFile } from './text-file.js';
import type { Workspace } from './workspace.js';
import type { WorkspaceQuota } from './workspace-usage.js';
import { refuseOverCap } from './write-file.js';

const schema = z.object({
  path: z.string().describe('The file to edit, relative to the workspace root.'),
  old: z
    .string()
    .min(1)
    .describe('The exact text to replace, including whitespace and indentation, copied from the file.'),
  new: z.string().describe('The text to put in its place (may be empty, to delete).'),
  replaceAll: z.boolean().default(false).describe('Replace every occurrence. Without it, old must occur exactly once.'),
});

export function editFileTool(workspace: Workspace, quota?: WorkspaceQuota): ToolDefinition {
  return defineTool({
    name: 'edit_file',
    description:
      'Replace an exact piece of text in a workspace file with new text. old must match the file exactly and occur ' +
      'once (add surrounding lines to make it unique), unless replaceAll is true.',
    schema,
    metadata: { risk: 'medium', category: 'write', idempotent: false },
    async execute({ path: input, old, new: replacement, replaceAll }, { signal }) {
      const real = await workspace.resolve(input);
      const shown = workspace.relative(real);
      try {
        // One descriptor for the read and the write: the text replaced is the text that was read.
        // A root bot's edit in a granted folder is written as its commands' user, to the very
        // file read (granted-writes.ts).
        const granted = workspace.grantedWriterFor(real);
        const file = granted
          ? await openForReading(workspace, real, shown)
          : await openForEditing(workspace, real, shown);
        try {
          const { text, size, truncated } = await readTextFile(file, shown, { maxBytes: MAX_READ_BYTES, strict: true });
          if (truncated) throw new Error(`${shown} is too large to edit here (${size} bytes); use run_shell`);
          const positions = occurrences(text, old);
          if (positions.length === 0) {
            throw new Error(
              `old text not found in ${shown}; read the file again and copy the exact text, including whitespace`,
            );
          }
          if (positions.length > 1 && !replaceAll) {
            throw new Error(
              `old text matches ${positions.length} times in ${shown}; include more surrounding lines to make it unique, or pass replaceAll: true`,
            );
          }
          const bytes = Buffer.from(spliceAll(text, positions, old.length, replacement), 'utf8');
          await refuseOverCap(quota, workspace, file.realPath, bytes.length, size);
          if (granted)
            await writeGranted(granted, file.realPath, shown, bytes, {
              sameAs: { dev: file.stats.dev, ino: file.stats.ino },
              signal,
            });
          else await replaceContent(file, bytes, signal);
          return { path: shown, replacements: positions.length, bytesWritten: bytes.length };
        } finally {
          await file.handle.close();
        }
      } catch (error) {
        throw describeFsError(error, shown);
      }
    },
  });
}

/** Start offsets of non-overlapping occurrences, left to right (as a global replace sees them). */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

function spliceAll(text: string, positions: number[], length: number, replacement: string): string {
  let result = '';
  let from = 0;
  for (const at of positions) {
    result += text.slice(from, at) + replacement;
    from = at + length;
  }
  return result + text.slice(from);
}
