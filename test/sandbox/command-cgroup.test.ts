// The memory cgroup of each command under cgroup v2, step by step against a folder standing in
// for /sys/fs/cgroup: whether the bot's cgroup is delegated to it, the move of its processes
// into a leaf of their own (the kernel's no-internal-processes rule), the controllers given to
// the children, each command's memory.max, memory.swap.max and pids.max, and what the start-up
// line and the doctor say where nothing is delegated. A real cgroup v2 is held to the bound in
// test/tools/shell-sandbox-bounds.test.ts, on a machine that has one.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assessCgroupV2, CgroupV2Commands } from '../../src/sandbox/cgroup-v2.js';
import { openCommandCgroups } from '../../src/sandbox/command-cgroup.js';
import { boundsText } from '../../src/sandbox/shell-sandbox.js';
import { DEFAULT_SANDBOX_LIMITS } from '../../src/sandbox/bwrap-sandbox.js';

const MB = 1024 * 1024;
const UNIT = 'system.slice/chat-agent.service';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface StandIn {
  root: string;
  own: string;
  selfCgroupFile: string;
}

/**
 * A folder laid out as the unified hierarchy is, the bot in `cgroupPath` with `procs` in it.
 * What the kernel makes by itself (a new cgroup's control files) is not there: the steps write them.
 */
async function standIn(
  options: { cgroupPath?: string; procs?: number[]; controllers?: string; subtreeControl?: boolean } = {},
): Promise<StandIn> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-cgroupfs-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const own = path.join(root, UNIT);
  await mkdir(own, { recursive: true });
  await writeFile(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
  await writeFile(path.join(own, 'cgroup.controllers'), `${options.controllers ?? 'cpu io memory pids'}\n`);
  await writeFile(
    path.join(own, 'cgroup.procs'),
    (options.procs ?? [process.pid, process.ppid]).map((pid) => `${pid}\n`).join(''),
  );
  if (options.subtreeControl !== false) await writeFile(path.join(own, 'cgroup.subtree_control'), '');
  const selfCgroupFile = path.join(root, 'self-cgroup');
  await writeFile(selfCgroupFile, `0::/${options.cgroupPath ?? UNIT}\n`);
  return { root, own, selfCgroupFile };
}

const read = (file: string): string => readFileSync(file, 'utf8');

describe('cgroup v2, delegated to the bot (a systemd unit with Delegate=yes, a container with its own cgroup namespace)', () => {
  it("the bot's processes move into the leaf `bot`, memory and pids go to the children, and each command gets memory.max, memory.swap.max 0 and pids.max", async () => {
    const fs = await standIn();
    const assessment = assessCgroupV2({ root: fs.root, selfCgroupFile: fs.selfCgroupFile });
    expect(assessment).toEqual({ kind: 'delegated', own: fs.own, controllers: ['cpu', 'io', 'memory', 'pids'] });
    if (assessment.kind !== 'delegated') return;

    const groups = CgroupV2Commands.open(256 * MB, {
      root: fs.root,
      selfCgroupFile: fs.selfCgroupFile,
      assessment,
      maxProcesses: 40,
    });
    expect(groups).not.toBeNull();
    // One pid per write into the leaf (the stand-in keeps each line the kernel would have taken).
    expect(read(path.join(fs.own, 'bot', 'cgroup.procs'))).toBe(`${process.pid}\n${process.ppid}\n`);
    expect(read(path.join(fs.own, 'cgroup.subtree_control'))).toBe('+memory +pids');

    const command = groups!.create()!;
    const made = readdirSync(fs.own)
      .filter((name) => name.startsWith('cmd-'))
      .sort();
    // The trial command cgroup proved the cap can be set; this is the second.
    expect(made).toHaveLength(2);
    const folder = path.join(fs.own, made.at(-1)!);
    expect(path.basename(folder)).toMatch(new RegExp(`^cmd-${process.pid}-\\d+-2$`));
    expect(read(path.join(folder, 'memory.max'))).toBe(String(256 * MB));
    expect(read(path.join(folder, 'memory.swap.max'))).toBe('0');
    expect(read(path.join(folder, 'pids.max'))).toBe('40');

    expect(command.add(4242)).toBe(true);
    expect(read(path.join(folder, 'cgroup.procs'))).toBe('4242');
    await writeFile(path.join(folder, 'memory.events'), 'low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n');
    expect(command.oomKills()).toBe(2);

    // The kernel's control files are not real files; the stand-in drops them as rmdir would ignore them.
    for (const name of readdirSync(folder)) await rm(path.join(folder, name));
    await command.remove();
    expect(existsSync(folder)).toBe(false);
  });

  it("a bot already in its leaf (a second start in one process) takes the leaf's parent as its cgroup, and moves nothing twice", async () => {
    const fs = await standIn({ cgroupPath: `${UNIT}/bot`, procs: [] });
    await mkdir(path.join(fs.own, 'bot'));
    await writeFile(path.join(fs.own, 'cgroup.subtree_control'), 'memory pids\n');
    const assessment = assessCgroupV2({ root: fs.root, selfCgroupFile: fs.selfCgroupFile });
    expect(assessment).toMatchObject({ kind: 'delegated', own: fs.own });
    if (assessment.kind !== 'delegated') return;
    expect(
      CgroupV2Commands.open(256 * MB, { root: fs.root, selfCgroupFile: fs.selfCgroupFile, assessment }),
    ).not.toBeNull();
    expect(existsSync(path.join(fs.own, 'bot', 'cgroup.procs'))).toBe(false);
    // Already given: not written again.
    expect(read(path.join(fs.own, 'cgroup.subtree_control'))).toBe('memory pids\n');
  });
});

describe('cgroup v2, nothing delegated: the cap is per process, and the words say how to get a cgroup', () => {
  const limits = { ...DEFAULT_SANDBOX_LIMITS, maxMemoryBytes: 3072 * MB };

  it('a cgroup the bot may not write (a unit without Delegate=yes, a container whose cgroup file system is read-only)', async () => {
    const fs = await standIn({ subtreeControl: false });
    expect(assessCgroupV2({ root: fs.root, selfCgroupFile: fs.selfCgroupFile })).toMatchObject({
      kind: 'not-delegated',
      why: `the bot's cgroup /${UNIT} is not delegated to it (it may not write cgroup.subtree_control)`,
    });
    const bound = openCommandCgroups(3072 * MB, { root: fs.root, selfCgroupFile: fs.selfCgroupFile });
    expect(bound).toMatchObject({ groups: null, kind: 'per process' });
    const text = boundsText(limits, undefined, bound);
    expect(text).toContain(
      "3,072 MB of memory per process, not for the command as a whole (no memory cgroup per command: cgroup v2: the bot's cgroup",
    );
    expect(text).toContain('run it as a systemd service with Delegate=yes (docs/security.md, "The shell sandbox")');
    expect(text).toContain('docker run --cgroupns=private --privileged');
    // Nothing was touched.
    expect(existsSync(path.join(fs.own, 'bot'))).toBe(false);
  });

  it('a cgroup without a memory controller to give', async () => {
    const fs = await standIn({ controllers: 'cpu pids' });
    expect(assessCgroupV2({ root: fs.root, selfCgroupFile: fs.selfCgroupFile })).toMatchObject({
      kind: 'not-delegated',
      why: expect.stringContaining(
        'has no memory controller to give its children (a systemd unit needs Delegate=yes, or Delegate=memory pids)',
      ),
    });
  });

  it("a cgroup holding processes that are not the bot's (a root bot started from a login shell, whose session holds others): none is moved", async () => {
    // Started by a shell that exits at once: the sleep is nobody's child of ours, nor an ancestor.
    const started = spawnSync('/bin/sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' });
    const stranger = Number(started.stdout.trim());
    cleanups.push(async () => void process.kill(stranger, 'SIGKILL'));
    const fs = await standIn({ procs: [process.pid, stranger] });
    expect(assessCgroupV2({ root: fs.root, selfCgroupFile: fs.selfCgroupFile })).toMatchObject({
      kind: 'not-delegated',
      why: `the bot's cgroup /${UNIT} holds processes that are not the bot's (pid ${stranger})`,
    });
    expect(openCommandCgroups(256 * MB, { root: fs.root, selfCgroupFile: fs.selfCgroupFile }).groups).toBeNull();
    expect(existsSync(path.join(fs.own, 'bot'))).toBe(false);
  });

  it('a hybrid host (v2 mounted without controllers, as this one is) is not cgroup v2: v1 is tried, and its absence named', async () => {
    const fs = await standIn();
    await rm(path.join(fs.root, 'cgroup.controllers'));
    expect(assessCgroupV2({ root: fs.root, selfCgroupFile: fs.selfCgroupFile })).toEqual({ kind: 'not-v2' });
    const bound = openCommandCgroups(256 * MB, {
      root: fs.root,
      selfCgroupFile: fs.selfCgroupFile,
      v1Mount: path.join(fs.root, 'no-v1-here'),
    });
    expect(bound).toMatchObject({
      groups: null,
      kind: 'per process',
      missing: expect.stringContaining("cgroup v1's memory hierarchy cannot be written by the bot"),
    });
  });
});
