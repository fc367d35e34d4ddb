// write_file: create or replace a text file in the workspace.
//
// One idea: the write lands on the resolved path the workspace approved, never on the raw
// argument, and parent directories are created along the way (a model writing
// `src/new/module.ts` should not need a separate mkdir call).
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { describeFsError } from './fs-errors.js';
import type { Workspace } from './workspace.js';

const schema = z.object({
  path: z.string().describe('The file to write, relative to the workspace root. Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file (UTF-8). An existing file is replaced.'),
});

export function writeFileTool(workspace: Workspace): ToolDefinition {
  return defineTool({
    name: 'write_file',
    description: 'Create a file in the workspace, or replace one, with the given content. For small changes to an existing file, prefer edit_file.',
    schema,
    metadata: { risk: 'medium', category: 'write', idempotent: false },
    async execute({ path: input, content }, { signal }) {
      const real = await workspace.resolve(input);
      const shown = workspace.relative(real);
      try {
        const existing = await stat(real).catch((error: unknown) => {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
          throw error;
        });
        if (existing?.isDirectory()) throw new Error(`${shown} is a directory; give a file path`);
        await mkdir(path.dirname(real), { recursive: true });
        const bytes = Buffer.from(content, 'utf8');
        await writeFile(real, bytes, { signal });
        return { path: shown, bytesWritten: bytes.length, created: existing === null };
      } catch (error) {
        throw describeFsError(error, shown);
      }
    },
  });
}
