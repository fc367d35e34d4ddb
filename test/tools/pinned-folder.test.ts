// Folders held by descriptor: counting what a thread's uploads take and removing them, while
// a command in the shared folder swaps a folder in there for a link to files only the bot
// may touch. Nothing where the link leads is counted, and nothing there is removed.
import { existsSync } from 'node:fs';
import { chown, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RUN_AS } from '../../src/sandbox/run-as.js';
import { openPinnedFolder, pinnedFolderBytes, removePinnedTree } from '../../src/tools/pinned-folder.js';
import { startSwapper } from '../support/folder-swapper.js';
import { tempDir } from '../support/test-connector.js';

const ROOT = process.getuid?.() === 0;
const OWNER = ROOT ? DEFAULT_RUN_AS : undefined;
const ROUNDS = 10;
const FILES_PER_FOLDER = 200;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function layout() {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const root = join(dir.path, 'workspace');
  const guarded = join(dir.path, 'guarded');
  await mkdir(root);
  await mkdir(guarded, { mode: 0o700 });
  const names = Array.from({ length: FILES_PER_FOLDER }, (_, i) => `f${i}.txt`);
  for (const name of names) await writeFile(join(guarded, name), 'only the bot', { mode: 0o600 });
  return { root, guarded, names };
}

/** uploads/<thread>/data with files in it, all the run-as user's (as the bot's commands would leave them). */
async function fillUploads(root: string, thread: string): Promise<void> {
  const data = join(root, 'uploads', thread, 'data');
  await mkdir(data, { recursive: true });
  for (let i = 0; i < FILES_PER_FOLDER; i++) await writeFile(join(data, `u${i}.txt`), 'upload');
  if (OWNER)
    for (const made of [join(root, 'uploads'), join(root, 'uploads', thread), data])
      await chown(made, OWNER.uid, OWNER.gid);
}

describe('folders held by descriptor', () => {
  it('counts what regular files take, never through a link', async () => {
    const { root, guarded } = await layout();
    await fillUploads(root, 'thread-b');
    await symlink(guarded, join(root, 'uploads', 'thread-b', 'sneaky'));
    expect(await pinnedFolderBytes({ root, steps: ['uploads', 'thread-b'] })).toBe(FILES_PER_FOLDER * 'upload'.length);
  });

  it('a root that is reached through a link is not worked in', async () => {
    const { root } = await layout();
    const linked = `${root}-link`;
    await symlink(root, linked);
    await expect(openPinnedFolder({ root: linked, steps: [] })).rejects.toThrow(
      'is not where it was (a link leads there)',
    );
  });

  it(
    "removing a thread's uploads while a command swaps a folder in them for a link removes nothing where the link leads",
    { timeout: 120_000 },
    async () => {
      const { root, guarded, names } = await layout();
      let swaps = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const thread = `thread-${round}`;
        await fillUploads(root, thread);
        const data = join(root, 'uploads', thread, 'data');
        const swapper = await startSwapper(data, join(root, 'uploads', thread, 'held'), guarded, OWNER);
        // A command that keeps adding to the folder, or swapping a name, may make the removal give up; it never goes elsewhere.
        let outcome: unknown;
        try {
          outcome = await removePinnedTree({ root, steps: ['uploads', thread] }).then(
            () => 'removed',
            (error: NodeJS.ErrnoException) => error.code,
          );
        } finally {
          swaps += await swapper.stop();
        }
        expect(['removed', 'ENOTEMPTY', 'EISDIR', 'EPERM']).toContain(outcome);
        expect((await readdir(guarded)).sort()).toEqual([...names].sort());
        // Once the loop has stopped, what it left goes too.
        await removePinnedTree({ root, steps: ['uploads', thread] });
        expect(existsSync(join(root, 'uploads', thread))).toBe(false);
      }
      expect(swaps).toBeGreaterThan(ROUNDS);
    },
  );
});
