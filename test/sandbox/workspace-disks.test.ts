// A conversation folder's own disk (WORKSPACE_DISKS) through its life: made at the first
// command with what the folder held, mounted whenever a session holds the folder, found again
// after a bot was killed, grown when the cap is raised, finished after a stop mid-move, never
// mounted over files nobody moved in, and gone with the thread. Real mounts: CI runs as root
// with loop devices, so none of this skips. Then the same through the assembled core.
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startCore } from '../../src/core.js';
import type { InboxItem } from '../../src/engine/index.js';
import { diskSpace, findDiskTools, mountedAt, type DiskTools } from '../../src/sandbox/disk-image.js';
import { DEFAULT_RUN_AS } from '../../src/sandbox/run-as.js';
import { prepareShell } from '../../src/sandbox/shell-startup.js';
import { WorkspaceDisks } from '../../src/sandbox/workspace-disks.js';
import { openWorkspaceDisks } from '../../src/sandbox/workspace-disks-startup.js';
import { sessionIdOf, type SessionKey } from '../../src/store/session-store.js';
import { conversationFolderName } from '../../src/tools/conversation-folder.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { fakeBot, type FakeBot } from '../support/sandbox-kit.js';
import { tempDir } from '../support/test-connector.js';

const MB = 1024 * 1024;

let bot: FakeBot;
const opened: WorkspaceDisks[] = [];
beforeAll(async () => {
  bot = await fakeBot();
});
afterEach(async () => {
  // Whatever a test left mounted is unmounted before its folder goes.
  for (const disks of opened.splice(0)) await disks.close();
  for (const name of readdirSync(bot.workspace)) {
    const folder = join(bot.workspace, name);
    const disks = await diskSet(2 * MB);
    await disks.forget(folder);
    await rm(folder, { recursive: true, force: true });
  }
});
afterAll(async () => {
  await bot.cleanup();
});

/** The disks as a start with WORKSPACE_DISKS=on makes them (one per bot process; a test may make two, as two processes would). */
async function diskSet(maxBytes: number): Promise<WorkspaceDisks> {
  const decision = await openWorkspaceDisks({ mode: 'on', workspaceDir: bot.workspace, maxBytes });
  opened.push(decision.disks!);
  return decision.disks!;
}

let folders = 0;
async function conversationFolder(): Promise<string> {
  const folder = join(bot.workspace, `slack-T1-C1-${++folders}-5e6f7a8b`);
  await mkdir(folder, { mode: 0o700 });
  await chown(folder, DEFAULT_RUN_AS.uid, DEFAULT_RUN_AS.gid);
  return folder;
}

describe("a folder's disk: made at the first command, with what the folder held", () => {
  it('a session that never runs a command makes no disk', async () => {
    const disks = await diskSet(2 * MB);
    const folder = await conversationFolder();
    const disk = await disks.hold(folder);
    await writeFile(join(folder, 'upload.txt'), 'kept as it is');
    await disk.release();
    expect(mountedAt(folder)).toBeNull();
    expect(existsSync(disks.imageOf(folder))).toBe(false);
    expect(await readFile(join(folder, 'upload.txt'), 'utf8')).toBe('kept as it is');
  });

  it('a folder holding more than the cap gets a disk large enough for all of it, so nothing is left out', async () => {
    const disks = await diskSet(1 * MB);
    const folder = await conversationFolder();
    await writeFile(join(folder, 'big.bin'), Buffer.alloc(3 * MB, 7));
    const disk = await disks.hold(folder);
    const state = await disk.ensure();
    expect(state).toMatchObject({ held: true });
    expect((await stat(join(folder, 'big.bin'))).size).toBe(3 * MB);
    expect(mountedAt(folder)?.backingFile).toBe(disks.imageOf(folder));
  });

  it("two threads of a channel hold the folder: its disk waits until one thread alone does (a move must not race another thread's writes)", async () => {
    const disks = await diskSet(2 * MB);
    const folder = await conversationFolder();
    const first = await disks.hold(folder);
    const second = await disks.hold(folder);
    expect(await first.ensure()).toMatchObject({
      held: false,
      reason: expect.stringContaining('other threads work in this folder now'),
    });
    await second.release();
    expect(await first.ensure()).toMatchObject({ held: true });
  });
});

describe("a folder's disk: across sessions, restarts and a changed cap", () => {
  it('a bot that was killed left its disk mounted: the next one uses that mount, and cannot unmount it while the other still holds it', async () => {
    const killed = await diskSet(2 * MB);
    const folder = await conversationFolder();
    const before = await killed.hold(folder);
    expect(await before.ensure()).toMatchObject({ held: true });
    await writeFile(join(folder, 'work.txt'), 'before the kill');
    const source = mountedAt(folder)!.source;
    // A second process (here, a second set of disks) starts while the first still holds the folder open.
    const next = await diskSet(2 * MB);
    const after = await next.hold(folder);
    expect(mountedAt(folder)?.source).toBe(source);
    expect(await after.ensure()).toMatchObject({ held: true });
    expect(await readFile(join(folder, 'work.txt'), 'utf8')).toBe('before the kill');
    // The second lets go: the kernel refuses the unmount while the first holds it (EBUSY), so it stays.
    await after.release();
    expect(mountedAt(folder)?.source).toBe(source);
  });

  it('a raised WORKSPACE_MAX_MB grows the disk, online, with its files; it never shrinks', async () => {
    const folder = await conversationFolder();
    const small = await (await diskSet(2 * MB)).hold(folder);
    await small.ensure();
    await writeFile(join(folder, 'keep.txt'), 'kept');
    await small.release();
    const raised = await diskSet(8 * MB);
    const disk = await raised.hold(folder);
    const state = await disk.ensure();
    expect(state.held && state.usableBytes).toBeGreaterThanOrEqual(8 * MB);
    expect(await readFile(join(folder, 'keep.txt'), 'utf8')).toBe('kept');
    await disk.release();
    const lowered = await (await diskSet(1 * MB)).hold(folder);
    const after = await lowered.ensure();
    expect(after.held && after.usableBytes).toBeGreaterThanOrEqual(8 * MB);
  });
});

describe("a folder's disk: no file is lost", () => {
  it('a stop while the files were being copied in (an image under construction, no marker): the folder still holds everything, and the move starts over', async () => {
    const disks = await diskSet(2 * MB);
    const folder = await conversationFolder();
    await writeFile(join(folder, 'a.txt'), 'a');
    await mkdir(join(disks.imageRoot), { recursive: true });
    await writeFile(`${disks.imageOf(folder)}.new`, 'half an image');
    const disk = await disks.hold(folder);
    expect(await disk.ensure()).toMatchObject({ held: true });
    expect(await readFile(join(folder, 'a.txt'), 'utf8')).toBe('a');
    expect(existsSync(`${disks.imageOf(folder)}.new`)).toBe(false);
  });

  it("a stop after the copy, while the folder's own files were being removed (the marker): the next hold finishes, and the disk has every file", async () => {
    const disks = await diskSet(2 * MB);
    const folder = await conversationFolder();
    await writeFile(join(folder, 'a.txt'), 'a');
    await writeFile(join(folder, 'b.txt'), 'b');
    const first = await disks.hold(folder);
    await first.ensure();
    await first.release();
    // As the stop left it: the marker, and one of the folder's own files not yet removed from beneath.
    await writeFile(join(folder, 'b.txt'), 'b, left beneath');
    await writeFile(`${disks.imageOf(folder)}.moving`, `${folder}\n`);
    const disk = await disks.hold(folder);
    expect(await disk.ensure()).toMatchObject({ held: true });
    expect(readdirSync(folder).sort()).toEqual(['a.txt', 'b.txt']);
    expect(await readFile(join(folder, 'b.txt'), 'utf8')).toBe('b');
    expect(existsSync(`${disks.imageOf(folder)}.moving`)).toBe(false);
    // Beneath the mount, the leftover went.
    await disk.release();
    expect(readdirSync(folder)).toEqual([]);
  });

  it('a disk that cannot be mounted over the folder after the copy: the copy goes, and the folder keeps every file', async () => {
    const folder = await conversationFolder();
    await writeFile(join(folder, 'a.txt'), 'a');
    // mount(8) as it fails where loop devices run out: for this folder only (the copy's own mount works).
    const failing = join(bot.dir, 'failing-mount');
    await writeFile(
      failing,
      `#!/bin/sh\nfor last; do :; done\nif [ "$last" = '${folder}' ]; then echo 'mount: ${folder}: failed to set up loop device' >&2; exit 32; fi\nexec /usr/bin/mount "$@"\n`,
      { mode: 0o755 },
    );
    const disks = new WorkspaceDisks({
      workspaceDir: bot.workspace,
      maxBytes: 2 * MB,
      tools: { ...(findDiskTools() as DiskTools), mount: failing },
    });
    const disk = await disks.hold(folder);
    expect(await disk.ensure()).toMatchObject({
      held: false,
      reason: expect.stringContaining('failed to set up loop device'),
    });
    expect(await readFile(join(folder, 'a.txt'), 'utf8')).toBe('a');
    expect(existsSync(disks.imageOf(folder))).toBe(false);
    expect(existsSync(`${disks.imageOf(folder)}.moving`)).toBe(false);
    await disk.release();
  });

  it('files written while the disk was not mounted (a run with WORKSPACE_DISKS=off) are not hidden by it: the folder keeps them and a measured cap, and the log says what to do', async () => {
    const logger = memoryLogger();
    const decision = await openWorkspaceDisks({ mode: 'on', workspaceDir: bot.workspace, maxBytes: 2 * MB, logger });
    const disks = decision.disks!;
    opened.push(disks);
    const folder = await conversationFolder();
    const first = await disks.hold(folder);
    await first.ensure();
    await writeFile(join(folder, 'on-disk.txt'), 'on the disk');
    await first.release();
    await writeFile(join(folder, 'beside.txt'), 'written beside it');
    const disk = await disks.hold(folder);
    expect(await disk.ensure()).toMatchObject({
      held: false,
      reason: expect.stringContaining('holds files written while its disk'),
    });
    expect(mountedAt(folder)).toBeNull();
    expect(readdirSync(folder)).toEqual(['beside.txt']);
    expect(existsSync(disks.imageOf(folder))).toBe(true);
    expect(
      logger.lines.some((line) => line.level === 'warn' && /no disk of its own this time/.test(line.message)),
    ).toBe(true);
  });

  it("a channel folder's disk no session holds is mounted to remove a forgotten thread's uploads from it, and unmounted after", async () => {
    const disks = await diskSet(2 * MB);
    const folder = await conversationFolder();
    const disk = await disks.hold(folder);
    await disk.ensure();
    await mkdir(join(folder, 'uploads', 'thread-a'), { recursive: true });
    await writeFile(join(folder, 'uploads', 'thread-a', 'report.pdf'), 'pdf');
    await writeFile(join(folder, 'kept.txt'), 'the channel keeps this');
    await disk.release();
    await disks.visit(folder, () => rm(join(folder, 'uploads', 'thread-a'), { recursive: true }));
    expect(mountedAt(folder)).toBeNull();
    const again = await disks.hold(folder);
    expect(readdirSync(join(folder, 'uploads'))).toEqual([]);
    expect(await readFile(join(folder, 'kept.txt'), 'utf8')).toBe('the channel keeps this');
    await again.release();
  });

  it("forget: the thread's disk is unmounted and removed, and the empty folder can go", async () => {
    const disks = await diskSet(2 * MB);
    const folder = await conversationFolder();
    const disk = await disks.hold(folder);
    await disk.ensure();
    await disk.release();
    await disks.forget(folder);
    expect(mountedAt(folder)).toBeNull();
    expect(existsSync(disks.imageOf(folder))).toBe(false);
    expect(readdirSync(folder)).toEqual([]);
  });
});

describe('WORKSPACE_DISKS at start', () => {
  const configFor = (env: Record<string, string>) =>
    loadConfig({
      STORE_URL: `sqlite://${bot.dir}/data/bot.sqlite`,
      MCP_CONFIG: join(bot.dir, 'mcp.json'),
      WORKSPACE_DIR: bot.workspace,
      SHELL_SANDBOX: 'bwrap',
      ...env,
    });

  it("the start-up line says what holds WORKSPACE_MAX_MB; with disks, their folder is one of the bot's own (never granted, never shown)", async () => {
    const off = await prepareShell(configFor({ WORKSPACE_MAX_MB: '500' }), { workingDir: bot.dir, homeDir: bot.home });
    expect(off.disks).toBeNull();
    expect(off.message).toContain(
      'the workspace cap (500 MB, WORKSPACE_MAX_MB) is measured while commands run (best effort; WORKSPACE_DISKS=off)',
    );
    const on = await prepareShell(configFor({ WORKSPACE_MAX_MB: '500', WORKSPACE_DISKS: 'on' }), {
      workingDir: bot.dir,
      homeDir: bot.home,
    });
    expect(on.disks).not.toBeNull();
    opened.push(on.disks!);
    expect(on.message).toContain(
      `the workspace cap (500 MB, WORKSPACE_MAX_MB) is held by the kernel: each thread's or channel's folder gets a disk of its own at its first command (WORKSPACE_DISKS, images in ${bot.workspace}.disks)`,
    );
    expect(on.paths.protected.map((entry) => entry.path)).toContain(`${bot.workspace}.disks`);
    expect((await stat(`${bot.workspace}.disks`)).mode & 0o777).toBe(0o700);
  });

  it('npm run doctor tries a disk without making anything beside the workspace', async () => {
    const elsewhere = join(bot.dir, 'not-yet');
    const checked = await prepareShell(configFor({ WORKSPACE_DIR: elsewhere, WORKSPACE_DISKS: 'on' }), {
      workingDir: bot.dir,
      homeDir: bot.home,
      createWorkspace: false,
    });
    expect(checked.disks).toBeNull();
    expect(checked.message).toContain('is held by the kernel');
    expect(existsSync(`${elsewhere}.disks`)).toBe(false);
    expect(existsSync(elsewhere)).toBe(false);
  });
});

describe('WORKSPACE_DISKS=on through the core', () => {
  it("a thread's first command puts its folder on a disk; the session's end unmounts it, the next turn mounts it; /forget removes disk and folder", async () => {
    const dir = await tempDir();
    const fake = await new FakeOpenAI().start();
    const config = loadConfig({
      ...coreTestEnv(dir.path, fake),
      SHELL_SANDBOX: 'bwrap',
      WORKSPACE_DISKS: 'on',
      WORKSPACE_MAX_MB: '4',
      PERMISSION_MODE: 'auto',
      MAX_LIVE_SESSIONS: '1',
    });
    const core = await startCore(config, { logger: memoryLogger() });
    try {
      const prompts: InboxItem[] = [];
      core.observers.add('slack', {
        onEvent: (_s, _event, prompt) => void (prompt ? prompts.push(prompt) : undefined),
      });
      await core.recover();
      const key: SessionKey = {
        platform: 'slack',
        workspace: 'T024BE7LD',
        channel: 'C0123ABCD',
        thread: '1700000000.000100',
      };
      const folder = join(dir.path, 'workspace', conversationFolderName('thread', key));
      const run = async (command: string): Promise<string> => {
        fake.replyToolCalls([{ name: 'run_shell', arguments: { command } }]);
        fake.replyText('done');
        const before = fake.requests.length;
        expect(await core.manager.deliver(key, { text: 'run it', userId: 'U1', eventId: `e-${before}` })).toMatchObject(
          { status: 'started' },
        );
        await waitFor(() => fake.requests.length >= before + 2, 30_000);
        await core.manager.idle();
        const body = fake.requests[before + 1]!.body as { messages: { role: string; content: string }[] };
        return body.messages.filter((message) => message.role === 'tool').at(-1)!.content;
      };
      expect(await run('fallocate -l 3M a.bin && fallocate -l 3M b.bin; ls')).toMatch(/No space left on device/);
      expect(mountedAt(folder)?.fsType).toBe('ext4');
      expect(diskSpace(folder).usableBytes).toBeLessThanOrEqual(4.4 * MB);
      // Another thread's turn: with one live session at most, this one is dropped from memory,
      // and its disk is unmounted with nothing left beneath.
      fake.replyText('hello');
      expect(
        await core.manager.deliver(
          { ...key, thread: '1700000000.000200' },
          { text: 'hi', userId: 'U1', eventId: 'other' },
        ),
      ).toMatchObject({ status: 'started' });
      await core.manager.idle();
      await waitFor(() => mountedAt(folder) === null, 30_000);
      expect(readdirSync(folder)).toEqual([]);
      expect(await run('ls')).toContain('a.bin');
      expect(await core.manager.controls.forget(sessionIdOf(key), 'U1')).toMatchObject({ status: 'done' });
      expect(mountedAt(folder)).toBeNull();
      expect(existsSync(folder)).toBe(false);
      expect(readdirSync(`${join(dir.path, 'workspace')}.disks`).filter((name) => name.endsWith('.img'))).toEqual([]);
      expect(prompts).toEqual([]);
    } finally {
      await core.close();
      await fake.stop();
      await dir.remove();
    }
  }, 60_000);
});
