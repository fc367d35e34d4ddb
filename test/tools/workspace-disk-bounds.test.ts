// The workspace's cap held by a disk of its own (WORKSPACE_DISKS): what a hostile command
// does to fill the host's disk through one conversation's folder, and what it gets. Each
// stays within a tenth of the cap, however it writes: allocation (fallocate), many small
// files, a sparse file written in the middle, hard links. Through run_shell and the file
// tools, as an approved call runs them, with real bwrap and a real loop-mounted ext4 disk:
// CI runs as root in a VM with loop devices, so these never skip.
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mountedAt } from '../../src/sandbox/disk-image.js';
import { DEFAULT_RUN_AS } from '../../src/sandbox/run-as.js';
import type { WorkspaceDisk, WorkspaceDisks } from '../../src/sandbox/workspace-disks.js';
import { openWorkspaceDisks } from '../../src/sandbox/workspace-disks-startup.js';
import type { BwrapSandbox } from '../../src/sandbox/bwrap-sandbox.js';
import { createBuiltinTools, type BuiltinTools } from '../../src/tools/index.js';
import { measureFolder } from '../../src/tools/workspace-usage.js';
import { fakeBot, sandboxFor, type FakeBot } from '../support/sandbox-kit.js';

const MB = 1024 * 1024;
const CAP = 2 * MB;
/** What a disk cap promises: it holds within a tenth, whatever one command does. */
const HELD = CAP * 1.1;

let bot: FakeBot;
let sandbox: BwrapSandbox;
let disks: WorkspaceDisks;
let folder: string;
let disk: WorkspaceDisk | undefined;
let builtin: BuiltinTools | undefined;

beforeAll(async () => {
  bot = await fakeBot();
  sandbox = await sandboxFor(bot);
  // WORKSPACE_DISKS=on: a disk must be made here, or the start (and this test) fails.
  const decision = await openWorkspaceDisks({ mode: 'on', workspaceDir: bot.workspace, maxBytes: CAP });
  disks = decision.disks!;
});
afterAll(async () => {
  await disks?.close();
  await bot.cleanup();
});

afterEach(async () => {
  await builtin?.dispose();
  builtin = undefined;
  await disk?.release();
  disk = undefined;
  await disks.forget(folder);
  await rm(folder, { recursive: true, force: true });
});

let conversations = 0;
/** A conversation's folder as openConversationFolder makes it (the run-as uid's, mode 700), and its tools. */
async function conversation(): Promise<BuiltinTools> {
  folder = path.join(bot.workspace, `slack-T1-C1-${++conversations}-0a1b2c3d`);
  await mkdir(folder, { mode: 0o700 });
  await chown(folder, DEFAULT_RUN_AS.uid, DEFAULT_RUN_AS.gid);
  disk = await disks.hold(folder);
  builtin = createBuiltinTools({
    workspaceDir: folder,
    workspaceBase: bot.workspace,
    shell: { kind: 'sandbox', sandbox },
    workspaceMaxBytes: CAP,
    workspaceDisk: disk,
  });
  return builtin;
}

type Answer = { exitCode: unknown; output: string; note?: string };

async function call(box: BuiltinTools, name: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const tool = box.tools.find((candidate) => candidate.name === name)!;
  return (await tool.execute(input, {
    signal: new AbortController().signal,
    toolCallId: 'call',
    sessionId: 'session',
  })) as Record<string, unknown>;
}

async function sh(box: BuiltinTools, command: string): Promise<Answer> {
  const result = await call(box, 'run_shell', { command });
  return {
    exitCode: result.exitCode,
    output: String(result.output),
    note: typeof result.note === 'string' ? result.note : undefined,
  };
}

/** What the folder takes on the host's disk, as the file system counts it. */
async function used(): Promise<number> {
  return (await measureFolder(folder)).bytes;
}

const FULL_NOTE =
  /the workspace is full, at its cap of 2\.\d\d MB \(WORKSPACE_MAX_MB, held by a disk of its own\); delete files/;

describe('a conversation folder on a disk of its own: one command cannot pass the cap', () => {
  it('100 allocations of 1.9 MB under a 2 MB cap (the reported one: 185.6 MB before) leave at most 2.2 MB, and the note names the cap', async () => {
    const box = await conversation();
    const result = await sh(box, 'for i in $(seq 1 100); do fallocate -l 1900K f$i; done; echo done');
    expect(result.output).toMatch(/No space left on device/);
    expect(await used()).toBeLessThanOrEqual(HELD);
    expect(result.note).toMatch(FULL_NOTE);
    expect(mountedAt(folder)?.backingFile).toBe(disks.imageOf(folder));
  });

  it('thousands of small files stop at the cap (blocks or inodes, whichever runs out first)', async () => {
    const box = await conversation();
    const result = await sh(
      box,
      'mkdir many && for i in $(seq 1 20000); do head -c 700 /dev/zero > many/s$i || break; done; ls many | wc -l',
    );
    expect(result.output).toMatch(/No space left on device/);
    expect(await used()).toBeLessThanOrEqual(HELD);
    expect(Number(result.output.trim().split('\n').at(-1))).toBeLessThan(20_000);
  });

  it('sparse files cost what is written in them: twenty of 1.9 MB, each written 1 MB in its middle, stop at the cap', async () => {
    const box = await conversation();
    // No file may be larger than what is left of the cap (RLIMIT_FSIZE), sparse or not: 1.9 MB each.
    const sparse = await sh(box, 'truncate -s 1900K hole.bin && du -k hole.bin');
    expect(sparse.output).toMatch(/^0\thole\.bin\n$/);
    const result = await sh(
      box,
      'for i in $(seq 1 20); do truncate -s 1900K s$i.bin && dd if=/dev/zero of=s$i.bin bs=64K seek=8 count=16 conv=notrunc 2>&1 | grep -v records; done; echo done',
    );
    expect(result.output).toMatch(/No space left on device/);
    expect(await used()).toBeLessThanOrEqual(HELD);
  });

  it('hard links cost nothing more: a 1.5 MB file and fifty links to it; the next command and write_file still work', async () => {
    const box = await conversation();
    const result = await sh(
      box,
      'head -c 1500000 /dev/zero > a.bin && for i in $(seq 1 50); do ln a.bin l$i.bin; done; ls | wc -l',
    );
    expect(result.output.trim()).toBe('51');
    expect(await used()).toBeLessThanOrEqual(HELD);
    expect(await sh(box, 'echo next')).toMatchObject({ exitCode: 0, output: 'next\n' });
    expect(await call(box, 'write_file', { path: 'note.txt', content: 'x' })).toMatchObject({ bytesWritten: 1 });
  });

  it('rm -rf in a full disk runs to its end, and the space is there again after it', async () => {
    const box = await conversation();
    await sh(
      box,
      'mkdir fill && for i in $(seq 1 400); do head -c 8000 /dev/zero > fill/f$i || break; done; fallocate -l 1900K big.bin',
    );
    const removed = await sh(box, 'rm -rf fill big.bin');
    expect(removed).toMatchObject({ exitCode: 0 });
    expect(removed.note ?? '').not.toMatch(/ended/);
    expect(readdirSync(folder)).toEqual([]);
    expect(await sh(box, 'fallocate -l 1500K again.bin && echo room')).toMatchObject({ exitCode: 0, output: 'room\n' });
  });
});

describe('a conversation folder gets its disk at its first command, with what it held', () => {
  it('files written before (by the file tools, as uploads are) are on the disk after it, with their owner and links; nothing is left beneath', async () => {
    const box = await conversation();
    expect(mountedAt(folder)).toBeNull();
    await call(box, 'write_file', { path: 'notes/plan.md', content: '# plan\n' });
    expect(await sh(box, 'cat notes/plan.md; stat -c %u notes/plan.md; ls -A')).toMatchObject({
      exitCode: 0,
      output: `# plan\n${DEFAULT_RUN_AS.uid}\nnotes\n`,
    });
    expect(mountedAt(folder)?.backingFile).toBe(disks.imageOf(folder));
    // The session ends: the disk is unmounted, and beneath it the folder is empty (nothing was hidden by the mount).
    await builtin!.dispose();
    builtin = undefined;
    await disk!.release();
    disk = undefined;
    expect(mountedAt(folder)).toBeNull();
    expect(readdirSync(folder)).toEqual([]);
    // The next session mounts it again before anything reads the folder.
    disk = await disks.hold(folder);
    expect(existsSync(path.join(folder, 'notes', 'plan.md'))).toBe(true);
  });
});
