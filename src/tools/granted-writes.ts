// What a root bot's write_file and edit_file write in a granted folder, written as its
// commands' run-as user (Workspace.grantedWriterFor, src/sandbox/run-as-writer.ts).
//
// One idea: a grant gives the file tools no more than it gives the commands. Root may write
// anything, so a granted folder holding files only root may change (a service's config, a
// root-owned script) would otherwise be theirs to rewrite; written as the run-as user, the
// kernel refuses what that user may not do, and what is made belongs to that user. The walk
// and the open never follow a link (folder-writer.ts); a file with more than one name is
// refused as the other file tools refuse it.
import type { WrittenFile } from './folder-writer.js';
import { NotAFileError, type FolderWriter } from './folder-writer.js';
import { folderPathBelow, NotAFolderError, type FileIdentity } from './pinned-folder.js';
import { FileRefusedError } from './file-refusals.js';
import path from 'node:path';

/** Content is sent to the writer in pieces of this size. */
const WRITE_CHUNK_BYTES = 1024 * 1024;

export interface GrantedTarget {
  writer: FolderWriter;
  /** The granted folder the file is in (a real path). */
  root: string;
}

/**
 * Replace the whole content of `realPath` (created if missing) with `bytes`, as the writer's
 * user. With `sameAs`, the file must be the one read before (edit_file): one put in its place
 * since is refused. Resolves with whether the file was created and the size it had.
 */
export async function writeGranted(
  target: GrantedTarget,
  realPath: string,
  shown: string,
  bytes: Uint8Array,
  options: { sameAs?: FileIdentity; signal?: AbortSignal } = {},
): Promise<{ created: boolean; replacedBytes: number }> {
  let file: WrittenFile;
  try {
    file = await target.writer.openForWriting(
      folderPathBelow(target.root, path.dirname(realPath)),
      path.basename(realPath),
    );
  } catch (error) {
    throw inWords(error, shown);
  }
  try {
    if (file.nlink > 1) {
      throw new FileRefusedError(
        'hard-link',
        `refused: ${shown} has ${file.nlink} hard links (other names for the same file), and another one may lie outside the workspace, so the file tools do not open it`,
      );
    }
    if (
      options.sameAs &&
      (file.created || file.identity.dev !== options.sameAs.dev || file.identity.ino !== options.sameAs.ino)
    ) {
      throw new FileRefusedError('unstable', `refused: ${shown} was replaced while it was being edited; read it again`);
    }
    // Checked once, before the file is emptied: a stop halfway would leave half a file.
    options.signal?.throwIfAborted();
    await file.truncate();
    for (let at = 0; at < bytes.byteLength; at += WRITE_CHUNK_BYTES)
      await file.write(bytes.subarray(at, at + WRITE_CHUNK_BYTES));
    await file.close();
    return { created: file.created, replacedBytes: file.size };
  } catch (error) {
    await file.discard();
    throw inWords(error, shown);
  }
}

function inWords(error: unknown, shown: string): unknown {
  if (error instanceof NotAFileError) {
    if (error.kind === 'directory') return new FileRefusedError('directory', `${shown} is a directory`);
    if (error.kind === 'link')
      return new FileRefusedError(
        'symlink',
        `refused: ${shown} is a symbolic link; the file tools write only regular files`,
      );
    return new FileRefusedError('special', `${shown} is not a regular file; only regular files can be written`);
  }
  if (error instanceof NotAFolderError) {
    return new FileRefusedError(
      'symlink',
      `refused: ${shown}: a folder on its path (${error.shown}) was replaced by a link or a file`,
    );
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM') {
    return new Error(
      `permission denied: ${shown} (in a granted folder the file tools write as the user shell commands run as, and that user may not write there)`,
    );
  }
  return error;
}
