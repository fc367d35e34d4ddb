// write_file: create or replace a text file in the workspace.
//
// One idea: the write lands on a descriptor checked to be inside the workspace, never on a
// name looked up again (safe-open.ts): the file is opened without truncating, verified, and
// only then emptied and written. Parent directories are created along the way (a model
// writing `src/new/module.ts` should not need a separate mkdir call). A root bot writes in a
// granted folder as its commands' user (granted-writes.ts).
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { describeFsError } from './fs-errors.js';
import { writeGranted } from './granted-writes.js';
import { FileRefusedError } from './file-refusals.js';
import { openForWriting, replaceContent } from './safe-open.js';
import { isInside } from './real-paths.js';
import type { Workspace } from './workspace.js';
import type { WorkspaceQuota } from './workspace-usage.js';

const schema = z.object({
  path: z
    .string()
    .describe('The file to write, relative to the workspace root. Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file (UTF-8). An existing file is replaced.'),
});

export function writeFileTool(workspace: Workspace, quota?: WorkspaceQuota): ToolDefinition {
  return defineTool({
    name: 'write_file',
    description:
      'Create a file in the workspace, or replace one, with the given content. For small changes to an existing file, prefer edit_file.',
    schema,
    metadata: { risk: 'medium', category: 'write', idempotent: false },
    async execute({ path: input, content }, { signal }) {
      const real = await workspace.resolve(input);
      const shown = workspace.relative(real);
      try {
        // A root bot's write in a granted folder: as its commands' user (granted-writes.ts).
        const granted = workspace.grantedWriterFor(real);
        if (granted) {
          const bytes = Buffer.from(content, 'utf8');
          const { created } = await writeGranted(granted, real, shown, bytes, { signal });
          return { path: shown, bytesWritten: bytes.length, created };
        }
        const file = await openForWriting(workspace, real, shown);
        try {
          const bytes = Buffer.from(content, 'utf8');
          await refuseOverCap(quota, workspace, file.realPath, bytes.length, file.stats.size);
          await replaceContent(file, bytes, signal);
          return { path: shown, bytesWritten: bytes.length, created: file.created };
        } finally {
          await file.handle.close();
        }
      } catch (error) {
        if (error instanceof FileRefusedError && error.reason === 'directory')
          throw new Error(`${shown} is a directory; give a file path`);
        throw describeFsError(error, shown);
      }
    },
  });
}

/**
 * A write that would take the workspace past its cap (WORKSPACE_MAX_MB) is refused before a
 * byte is written; a file in a granted folder is outside the cap (it is the person's).
 */
export async function refuseOverCap(
  quota: WorkspaceQuota | undefined,
  workspace: Workspace,
  realPath: string,
  adding: number,
  replacing: number,
): Promise<void> {
  if (!quota || !isInside(realPath, workspace.root)) return;
  const check = await quota.check(adding, replacing);
  if (check.full) throw new Error(`refused: ${check.full}`);
}
