// The Dockerfile's entry (bin/container-entry.sh), run as a container runs it: as root, it
// hands the container's own cgroup (cgroup v2) to the bot's user, as systemd's Delegate=yes
// does, and runs the bot as that user; where there is no cgroup v2 it hands nothing over; run
// as another user already, it runs the command as it is. A folder stands in for
// /sys/fs/cgroup; `nobody` for the image's `bot` user.
import { execFileSync } from 'node:child_process';
import { chmod, copyFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ENTRY = fileURLToPath(new URL('../../bin/container-entry.sh', import.meta.url));
const NOBODY = { uid: 65534, gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim()) };
const FILES = ['cgroup.controllers', 'cgroup.procs', 'cgroup.subtree_control', 'cgroup.threads'];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cgroupStandIn(files: string[]): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-container-cgroup-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  for (const file of files)
    await writeFile(path.join(root, file), file === 'cgroup.controllers' ? 'memory pids\n' : '');
  return root;
}

function entry(root: string, command: string[], wrap: string[] = [], script = ENTRY): string {
  const [file, ...args] = [...wrap, '/bin/sh', script, ...command];
  return execFileSync(file!, args, {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', BOT_USER: 'nobody', CHAT_AGENT_CGROUP_ROOT: root },
  });
}

describe('the container entry (CI runs as root, as a container starts)', () => {
  it("cgroup v2 of its own, writable: the cgroup is handed to the bot's user, and the bot runs as that user", async () => {
    const root = await cgroupStandIn(FILES);
    expect(entry(root, ['sh', '-c', 'id -u; id -g'])).toBe(`${NOBODY.uid}\n${NOBODY.gid}\n`);
    for (const file of ['', 'cgroup.procs', 'cgroup.subtree_control', 'cgroup.threads']) {
      expect((await stat(path.join(root, file))).uid, file || 'the cgroup folder').toBe(NOBODY.uid);
    }
    // Which controllers there are is the kernel's: not handed over.
    expect((await stat(path.join(root, 'cgroup.controllers'))).uid).toBe(0);
  });

  it('no cgroup v2 (v1 or a hybrid host): nothing is handed over, and the bot still runs as its user', async () => {
    const root = await cgroupStandIn(['cgroup.procs']);
    expect(entry(root, ['id', '-u'])).toBe(`${NOBODY.uid}\n`);
    expect((await stat(path.join(root, 'cgroup.procs'))).uid).toBe(0);
    expect((await stat(root)).uid).toBe(0);
  });

  it('started as another user (docker run --user): the command runs as it is', async () => {
    const root = await cgroupStandIn(FILES);
    // Where that user can read the script (the checkout may be under a folder only root enters).
    const shared = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-entry-'));
    cleanups.push(() => rm(shared, { recursive: true, force: true }));
    await chmod(shared, 0o755);
    await copyFile(ENTRY, path.join(shared, 'container-entry.sh'));
    await chmod(path.join(shared, 'container-entry.sh'), 0o755);
    expect(
      entry(
        root,
        ['id', '-u'],
        ['setpriv', `--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, '--clear-groups'],
        path.join(shared, 'container-entry.sh'),
      ),
    ).toBe(`${NOBODY.uid}\n`);
    // Not root: nothing of the cgroup was touched.
    expect((await stat(path.join(root, 'cgroup.subtree_control'))).uid).toBe(0);
  });
});
