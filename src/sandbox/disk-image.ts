// A sized ext4 file system in a file (an "image"), loop-mounted over a folder: the few
// operations workspace-disks.ts builds a conversation's disk from, each one program of
// e2fsprogs or util-linux run with its arguments (never through a shell).
//
// One idea: the kernel, not a walk, holds the size. Whatever a command does inside the
// folder (fallocate, a thousand small files, a sparse file written in the middle, hard
// links), the file system has no more blocks or inodes than it was made with, and the writer
// gets ENOSPC. The image is sparse and mounted with `discard`, so the host pays for what is
// stored, not for the size, and deleting files gives the space back to the host.
//
// Made so that what a user may store is the cap: ext4's own overhead (inode tables, group
// descriptors, a small journal) is measured on a first `mkfs` and added to the image, and no
// blocks are reserved for root (-m 0: the commands run as another uid anyway).
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync, statfsSync } from 'node:fs';
import { open, stat, truncate } from 'node:fs/promises';
import path from 'node:path';

/** The programs a disk needs, by absolute path. */
export interface DiskTools {
  mkfs: string;
  e2fsck: string;
  dumpe2fs: string;
  resize2fs: string;
  mount: string;
  umount: string;
  losetup: string;
}

const TOOL_NAMES: Record<keyof DiskTools, string> = {
  mkfs: 'mkfs.ext4',
  e2fsck: 'e2fsck',
  dumpe2fs: 'dumpe2fs',
  resize2fs: 'resize2fs',
  mount: 'mount',
  umount: 'umount',
  losetup: 'losetup',
};

/** Where e2fsprogs and util-linux live on every distribution, whatever the bot's PATH says. */
const SYSTEM_FOLDERS = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'];

/** Below this, a disk gets no journal (ext4 refuses one under 1,024 blocks, and it would be a large share). */
const JOURNAL_FROM_BYTES = 64 * 1024 * 1024;
const JOURNAL_MB = 4;
const ALIGN = 4096;
/** One program's run: mkfs of a large disk and a copy are the slow ones. */
const PROGRAM_TIMEOUT_MS = 10 * 60_000;

/** The programs, or the names of those missing. */
export function findDiskTools(searchPath = process.env.PATH): DiskTools | { missing: string[] } {
  const folders = [...(searchPath ?? '').split(':').filter((folder) => folder.startsWith('/')), ...SYSTEM_FOLDERS];
  const found: Partial<DiskTools> = {};
  const missing: string[] = [];
  for (const [key, name] of Object.entries(TOOL_NAMES) as [keyof DiskTools, string][]) {
    const hit = folders.map((folder) => path.join(folder, name)).find(executable);
    if (hit) found[key] = hit;
    else missing.push(name);
  }
  return missing.length > 0 ? { missing } : (found as DiskTools);
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface ProgramResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a program; resolves with its exit code (a failure to start is code 127). */
export function runProgram(
  file: string,
  args: readonly string[],
  timeoutMs = PROGRAM_TIMEOUT_MS,
): Promise<ProgramResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, env: { PATH: SYSTEM_FOLDERS.join(':'), LC_ALL: 'C' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr || (error && !stdout ? error.message : '')) });
      },
    );
  });
}

async function mustRun(file: string, args: readonly string[], what: string): Promise<ProgramResult> {
  const result = await runProgram(file, args);
  if (result.code !== 0)
    throw new Error(
      `${what} failed: ${path.basename(file)} exited with ${result.code}${result.stderr.trim() ? `: ${lastLine(result.stderr)}` : ''}`,
    );
  return result;
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)!.trim();
}

export interface ImageShape {
  /** What files may use, in bytes: the cap (or what a folder being moved in holds, if more). */
  usableBytes: number;
  /** Owner and mode of the file system's root folder (the conversation's folder). */
  owner: { uid: number; gid: number };
  mode: number;
  /** Inodes at least (a folder of many small files being moved in); default: mkfs's ratio. */
  inodes?: number;
}

/**
 * Make `image` (a new file, mode 600) holding an empty ext4 file system whose free space is
 * about `usableBytes`: one mkfs to measure the overhead, one at the size that covers it.
 */
export async function makeImage(tools: DiskTools, image: string, shape: ImageShape): Promise<void> {
  const handle = await open(image, 'wx', 0o600);
  await handle.close();
  const first = alignUp(Math.max(shape.usableBytes, 1024 * 1024));
  const free = await formatImage(tools, image, first, shape);
  const size = alignUp(first + Math.max(0, shape.usableBytes - free));
  if (size !== first) await formatImage(tools, image, size, shape);
}

/** mkfs at `size`; resolves with the bytes free for files. */
async function formatImage(tools: DiskTools, image: string, size: number, shape: ImageShape): Promise<number> {
  await truncate(image, 0);
  await truncate(image, size);
  const extended = [
    `root_owner=${shape.owner.uid}:${shape.owner.gid}`,
    'lazy_itable_init=1',
    'lazy_journal_init=1',
    'nodiscard',
  ];
  const journal = shape.usableBytes >= JOURNAL_FROM_BYTES ? ['-J', `size=${JOURNAL_MB}`] : ['-O', '^has_journal'];
  const inodes = shape.inodes ? ['-N', String(shape.inodes)] : [];
  await mustRun(
    tools.mkfs,
    ['-q', '-F', '-m', '0', '-E', extended.join(','), ...journal, ...inodes, image],
    'making the disk',
  );
  const header = (await mustRun(tools.dumpe2fs, ['-h', image], 'reading the new disk')).stdout;
  const field = (name: string): number =>
    Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(header)?.[1] ?? Number.NaN);
  const free = field('Free blocks') * field('Block size');
  if (!Number.isFinite(free)) throw new Error('reading the new disk failed: dumpe2fs printed no free blocks');
  return free;
}

function alignUp(bytes: number): number {
  return Math.ceil(bytes / ALIGN) * ALIGN;
}

/** e2fsck -p: replays the journal and fixes what is safe to fix; false when it could not. */
export async function checkImage(tools: DiskTools, image: string): Promise<boolean> {
  // 0: clean; 1: errors fixed; 2: fixed, "reboot" (only meaningful for a mounted root).
  return (await runProgram(tools.e2fsck, ['-p', image])).code <= 2;
}

/**
 * Mount `image` over `folder`: not for devices or set-uid programs, freed blocks given back
 * to the host (discard punches them out of the sparse image), read-only on an error rather
 * than carrying on with a damaged file system.
 */
export async function mountImage(tools: DiskTools, image: string, folder: string): Promise<void> {
  await mustRun(
    tools.mount,
    ['-t', 'ext4', '-o', 'loop,nodev,nosuid,discard,errors=remount-ro', image, folder],
    'mounting the disk',
  );
}

/** A second view of `folder` at `target`, without the mounts below it: what a mount over a subfolder hides is seen there. */
export async function bindMount(tools: DiskTools, folder: string, target: string): Promise<void> {
  await mustRun(tools.mount, ['--bind', folder, target], 'looking beneath the disk');
}

/** umount (never lazily: a detached file system could be mounted a second time beside itself); false when busy. */
export async function unmountFolder(tools: DiskTools, folder: string): Promise<boolean> {
  const result = await runProgram(tools.umount, [folder]);
  return result.code === 0 || !mountedAt(folder);
}

export interface MountedFileSystem {
  /** The mounted device, e.g. /dev/loop3. */
  source: string;
  fsType: string;
  /** The file a loop device reads, when the source is one. */
  backingFile: string | null;
}

/** What is mounted exactly at `folder` (the last of several: the one seen), or null. */
export function mountedAt(folder: string, mountinfo = '/proc/self/mountinfo'): MountedFileSystem | null {
  let found: MountedFileSystem | null = null;
  let text: string;
  try {
    text = readFileSync(mountinfo, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    // id parent major:minor root mount-point options [optional…] - type source super-options
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 6 || unescapeMountPath(fields[4]!) !== folder) continue;
    const source = unescapeMountPath(fields[separator + 2] ?? '');
    found = { source, fsType: fields[separator + 1] ?? '', backingFile: loopBackingFile(source) };
  }
  return found;
}

/** /proc's mount paths escape space, tab, newline and backslash as octal. */
function unescapeMountPath(raw: string): string {
  return raw.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The file behind /dev/loopN, from sysfs; null for anything else. */
function loopBackingFile(device: string): string | null {
  const match = /^\/dev\/(loop\d+)$/.exec(device);
  if (!match) return null;
  try {
    return readFileSync(`/sys/block/${match[1]}/loop/backing_file`, 'utf8')
      .trim()
      .replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

/** What files may still use on the file system holding `folder`, and what they may use in all. */
export function diskSpace(folder: string): { freeBytes: number; usableBytes: number } {
  const stats = statfsSync(folder);
  return { freeBytes: stats.bavail * stats.bsize, usableBytes: stats.blocks * stats.bsize };
}

/**
 * Grow an unmounted disk by `moreBytes` of room for files (WORKSPACE_MAX_MB was raised): the
 * image grows, then ext4 (resize2fs wants a checked file system). Offline, because online
 * growth is refused for a disk without a journal. A disk never shrinks: that would need every
 * file moved, which is not worth the risk to them.
 */
export async function growImage(tools: DiskTools, image: string, moreBytes: number): Promise<void> {
  const size = (await stat(image)).size;
  // The new block groups bring inode tables of their own: a little more than the room asked.
  await truncate(image, alignUp(size + moreBytes * 1.05 + 64 * 1024));
  if ((await runProgram(tools.e2fsck, ['-f', '-p', image])).code > 2)
    throw new Error(`growing the disk failed: e2fsck found errors in ${image}`);
  await mustRun(tools.resize2fs, [image], 'growing the disk');
}
