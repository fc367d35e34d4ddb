// The playground's folder for one run's files (staged uploads, posted copies): made private
// (0700) under the system's temp folder, with the run's process id in it, and removed at
// close. A run that died without closing (SIGKILL, a crash) leaves its folder behind: the
// next start removes every such folder whose process is gone, so they never pile up.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'chat-agent-playground-';
const OWNER = 'owner.pid';

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
      // No owner file: being made right now by another start, or not ours. Left alone.
      continue;
    }
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) await rm(folder, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Whether a process with this id exists (EPERM: it does, as another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
