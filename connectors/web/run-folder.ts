// The playground's folder for one run's files (staged uploads, posted copies): made private
// (0700) under the system's temp folder, with the run's process id in it, and removed at
// close. A run that died without closing (SIGKILL, a crash) leaves its folder behind: the
// next start removes every such folder whose process is gone (or, with no owner written, that
// is over an hour old), so they never pile up.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../../src/sandbox/process-alive.js';

const PREFIX = 'chat-agent-playground-';
const OWNER = 'owner.pid';
/** A folder with no owner file this old was not being made by a start: the one making it died. */
const UNOWNED_AFTER_MS = 60 * 60_000;

/** A new private folder for this run, after removing those of runs that are gone. */
export async function makeRunFolder(base = tmpdir()): Promise<string> {
  await removeAbandoned(base);
  const folder = await mkdtemp(join(base, PREFIX));
  await writeFile(join(folder, OWNER), String(process.pid), { mode: 0o600 });
  return folder;
}

async function removeAbandoned(base: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const folder = join(base, name);
    let pid: number;
    try {
      pid = Number((await readFile(join(folder, OWNER), 'utf8')).trim());
    } catch {
      // No owner file: being made right now by another start (left alone), or left by one
      // that died between making the folder and writing the file (removed once it is old).
      if (await olderThan(folder, UNOWNED_AFTER_MS))
        await rm(folder, { recursive: true, force: true }).catch(() => undefined);
      continue;
    }
    if (Number.isInteger(pid) && pid > 0 && !processAlive(pid))
      await rm(folder, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function olderThan(folder: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(folder)).mtimeMs > ms;
  } catch {
    return false;
  }
}
