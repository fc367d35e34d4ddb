// A run's files folder: private, owned by its process, and left behind by a run that died
// without closing only until the next start removes it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/test-connector.js';
import { makeRunFolder } from '../../connectors/web/run-folder.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the playground's run folder", () => {
  it("is 0700; a start removes the folder of a run whose process is gone (or an old one with no owner), and keeps a live run's and one being made", async () => {
    const base = await tempDir();
    cleanups.push(base.remove);
    const folder = async (name: string, pid?: number) => {
      const path = join(base.path, name);
      await mkdir(path);
      if (pid !== undefined) await writeFile(join(path, 'owner.pid'), String(pid));
      await writeFile(join(path, 'staged'), 'bytes');
      return path;
    };
    // A process that has exited: its id names no process now.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const dead = await folder('chat-agent-playground-dead', gone);
    const live = await folder('chat-agent-playground-live', process.pid);
    const making = await folder('chat-agent-playground-making');
    // One whose start died before it wrote its owner, two hours ago.
    const orphan = await folder('chat-agent-playground-orphan');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
    await utimes(orphan, twoHoursAgo, twoHoursAgo);
    const other = await folder('someone-else', gone);

    const mine = await makeRunFolder(base.path);
    expect((await stat(mine)).mode & 0o777).toBe(0o700);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(orphan)).toBe(false);
    for (const kept of [live, making, other, mine]) expect(existsSync(kept), kept).toBe(true);
  });
});
