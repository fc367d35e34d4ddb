// list_dir: what is in a workspace directory, one entry per line, optionally recursive.
//
// One idea: a listing is an overview, so it goes breadth first and stops at a cap: the
// model sees the top levels of a big tree rather than every file of its first subfolder.
import { lstat, readlink, stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { describeFsError } from './fs-errors.js';
import { capOutput, formatCount } from './output.js';
import { walkTree, type WalkEntry } from './walk.js';
import type { Workspace } from './workspace.js';

const DEFAULT_LIST_ENTRIES = 500;
const MAX_LIST_ENTRIES = 5000;

const schema = z.object({
  path: z.string().default('.').describe('The directory to list, relative to the workspace root. Default: the root.'),
  recursive: z
    .boolean()
    .default(false)
    .describe('Also list subdirectories, nearest first (.git and node_modules are not entered).'),
  maxEntries: z
    .int()
    .min(1)
    .max(MAX_LIST_ENTRIES)
    .default(DEFAULT_LIST_ENTRIES)
    .describe(`Stop after this many entries. Default ${DEFAULT_LIST_ENTRIES}.`),
});

export function listDirTool(workspace: Workspace, maxOutputChars: number): ToolDefinition {
  return defineTool({
    name: 'list_dir',
    description:
      'List a directory in the workspace: one line per entry, directories ending in "/", files with their size, ' +
      'symlinks with their target. Paths are relative to the workspace root.',
    schema,
    metadata: { risk: 'low', category: 'read', idempotent: true },
    async execute({ path: input, recursive, maxEntries }, { signal }) {
      const real = await workspace.resolve(input);
      const shown = workspace.relative(real);
      try {
        // Only for the message: the walk itself opens the folder without following a link.
        if (!(await stat(real)).isDirectory())
          throw new Error(`${shown} is a file, not a directory; use read_file to read it`);
      } catch (error) {
        throw describeFsError(error, shown);
      }

      const lines: string[] = [];
      let stoppedEarly = false;
      try {
        for await (const entry of walkTree(workspace, real, { recursive, signal })) {
          if (lines.length >= maxEntries) {
            stoppedEarly = true;
            break;
          }
          lines.push(await describeEntry(entry, recursive));
        }
      } catch (error) {
        throw describeFsError(error, shown);
      }
      if (lines.length === 0) return `(${shown} is empty)`;
      const listing = capOutput(lines.join('\n'), maxOutputChars - 200);
      const notes: string[] = [];
      if (stoppedEarly) notes.push(`stopped at ${formatCount(maxEntries)} entries; list a subdirectory to see more`);
      if (listing !== lines.join('\n')) notes.push('the listing was cut to fit; list a subdirectory to see more');
      return notes.length > 0 ? `${listing}\n[${notes.join('; ')}]` : listing;
    },
  });
}

async function describeEntry(entry: WalkEntry, recursive: boolean): Promise<string> {
  try {
    switch (entry.kind) {
      case 'dir':
        return entry.skipped && recursive ? `${entry.shown}/ (not entered)` : `${entry.shown}/`;
      case 'file':
        return `${entry.shown} (${formatCount((await lstat(entry.at)).size)} bytes)`;
      case 'symlink':
        return `${entry.shown} -> ${await readlink(entry.at)}`;
      case 'other':
        return `${entry.shown} (special file)`;
    }
  } catch {
    // Deleted between readdir and lstat: still worth a line, without details.
    return entry.shown;
  }
}
