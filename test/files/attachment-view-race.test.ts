// A shared image read back for each model call while a command in the shared folder swaps the
// thread's uploads folder for a link to a folder only the bot may read, holding an image of
// the same name: the model is sent the shared image or told it is gone, never the other one.
import { chown, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredFile } from '../../src/engine/index.js';
import { attachmentViewFor } from '../../src/files/index.js';
import { DEFAULT_RUN_AS } from '../../src/sandbox/run-as.js';
import { startSwapper } from '../support/folder-swapper.js';
import { writePng } from '../support/file-fixtures.js';
import { tempDir } from '../support/test-connector.js';

const ROOT = process.getuid?.() === 0;
const OWNER = ROOT ? DEFAULT_RUN_AS : undefined;
const VIEWS = 20_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a shared image read back while a command swaps its folder for a link', () => {
  it(
    'is sent as shared, or named as gone: the image where the link leads is never sent',
    { timeout: 120_000 },
    async () => {
      const dir = await tempDir();
      cleanups.push(dir.remove);
      const folder = join(dir.path, 'channel');
      const uploads = join(folder, 'uploads', 'thread-b');
      const guarded = join(dir.path, 'guarded');
      await mkdir(uploads, { recursive: true });
      await mkdir(guarded, { mode: 0o700 });
      const shared = await readFile(await writePng(join(uploads, 'shot.png'), 40, 30));
      const secret = await readFile(await writePng(join(guarded, 'shot.png'), 64, 48));
      if (OWNER)
        for (const made of [folder, join(folder, 'uploads'), uploads, join(uploads, 'shot.png')])
          await chown(made, OWNER.uid, OWNER.gid);

      const view = attachmentViewFor(folder);
      const file: StoredFile = {
        path: 'uploads/thread-b/shot.png',
        name: 'shot.png',
        mimeType: 'image/png',
        size: shared.length,
        kind: 'image',
      };
      const sentSecret = `data:image/png;base64,${secret.toString('base64')}`;
      const swapper = await startSwapper(uploads, join(folder, 'uploads', 'held'), guarded, OWNER);
      let leaked = 0;
      let swaps = 0;
      try {
        for (let i = 0; i < VIEWS; i++) {
          const parts = view(file, { tools: true, vision: true, pdf: false, contextWindow: 100_000 });
          if (parts.some((part) => part.type === 'image_url' && part.image_url.url === sentSecret)) leaked++;
          // Now and then a turn of the event loop, as between model calls.
          if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        swaps = await swapper.stop();
      }
      expect(swaps).toBeGreaterThan(100);
      expect(leaked).toBe(0);
    },
  );
});
