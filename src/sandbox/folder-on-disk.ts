// A conversation folder put on its disk, and mounted on it again later: the steps, each run by
// workspace-disks.ts under the image's lock (it decides when, and keeps the folder held).
//
// - Never lost: an image exists only once it holds a complete copy; the `.moving` marker
//   says the files beneath may be removed because the image has them all, and that happens
//   only while the disk is mounted over them (a mount that fails drops the copy, or the
//   marker); a start that finds the marker finishes the move. An image whose folder holds
//   files nobody moved in (written while the disk was not mounted: a bot run with
//   WORKSPACE_DISKS=off) is not mounted over them: the folder keeps its measured cap, and the
//   log says what to do.
// - The cap changed: a disk grows to a raised cap online; it never shrinks (that would need
//   every file moved), so under a lowered cap the folder is measured as well.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { chmod, mkdtemp, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EngineLogger } from '../engine/logger.js';
import { measureFolder } from '../tools/workspace-usage.js';
import {
  bindMount,
  checkImage,
  diskSpace,
  growImage,
  makeImage,
  mountedAt,
  mountImage,
  runProgram,
  unmountFolder,
  type DiskTools,
} from './disk-image.js';

/** What putting a folder on its disk needs. */
export interface FolderDiskSetup {
  tools: DiskTools;
  /** WORKSPACE_MAX_MB in bytes: what files may use on each disk. */
  maxBytes: number;
  /** `<WORKSPACE_DIR>.disks`: a move's own mount points are made there too. */
  imageRoot: string;
  logger?: EngineLogger | undefined;
}

/** What a folder's first disk was made with, for the log. */
export interface MadeDisk {
  usableBytes: number;
  /** How many files and folders were moved in. */
  moved: number;
}

const MB = 1024 * 1024;
/** A folder being moved in gets room for what it holds and a tenth more, if that is more than the cap. */
const MOVE_HEADROOM = 1.1;

/**
 * Mount the folder's existing disk (or find it mounted), finishing a move a stop cut short.
 * False when no disk is left (a stop came before the image held every file).
 */
export async function mountFolderDisk(setup: FolderDiskSetup, folder: string, image: string): Promise<boolean> {
  await finishMove(image);
  if (!existsSync(image)) return false;
  const mounted = mountedAt(folder);
  if (mounted && mounted.backingFile !== image)
    throw new Error(`another file system (${mounted.source}) is mounted on ${folder}`);
  if (!mounted) {
    if (!existsSync(`${image}.moving`) && readdirSync(folder).length > 0) {
      throw new Error(
        `${folder} holds files written while its disk (${image}) was not mounted; neither is hidden by mounting the other: move the folder's files into the disk by hand ` +
          `(mount it elsewhere, copy them in, empty the folder) or remove the disk, and the next session mounts it`,
      );
    }
    if (!(await checkImage(setup.tools, image)))
      throw new Error(`e2fsck could not repair ${image}; run e2fsck on it by hand`);
    await mountImage(setup.tools, image, folder).catch(async (error: unknown) => {
      // What is beneath is never removed while the disk is not mounted over it: from now
      // on the folder and the disk are two, and a person decides (the refusal says how).
      await rm(`${image}.moving`, { force: true });
      throw error;
    });
    await grow(setup, folder, image);
  }
  await finishBeneath(setup, folder, image);
  return true;
}

/**
 * The folder's first disk: made at its cap (or what the folder holds and a tenth more), the
 * folder's files copied in on a mount of its own, then removed from under the mount.
 */
export async function makeFolderDisk(setup: FolderDiskSetup, folder: string, image: string): Promise<MadeDisk> {
  const fresh = `${image}.new`;
  const usage = await measureFolder(folder, Number.MAX_SAFE_INTEGER);
  const owner = statSync(folder);
  const usableBytes = Math.max(setup.maxBytes, Math.ceil(usage.bytes * MOVE_HEADROOM) + MB);
  await rm(fresh, { force: true });
  await makeImage(setup.tools, fresh, {
    usableBytes,
    owner: { uid: owner.uid, gid: owner.gid },
    mode: owner.mode & 0o7777,
    inodes: inodesFor(usableBytes, usage.entries),
  });
  const moving = usage.entries > 0;
  if (moving) {
    await copyInto(setup, fresh, folder).catch(async (error: unknown) => {
      await rm(fresh, { force: true });
      throw error;
    });
    // From here the image holds every file: once it is mounted over the folder, what is
    // beneath may go (finishBeneath, now or at the next mount after a stop).
    await writeFile(`${image}.moving`, `${folder}\n`, { mode: 0o600 });
  }
  await rename(fresh, image);
  await mountImage(setup.tools, image, folder).catch(async (error: unknown) => {
    // The folder still holds everything: the copy goes.
    await Promise.all([image, `${image}.moving`].map((file) => rm(file, { force: true })));
    throw error;
  });
  // The root of the disk is the conversation's folder: its owner (mkfs), its mode, no lost+found.
  await chmod(folder, owner.mode & 0o7777);
  await rmdir(path.join(folder, 'lost+found')).catch(() => undefined);
  await finishBeneath(setup, folder, image);
  return { usableBytes, moved: usage.entries };
}

/** cp -a keeps owners, modes, times, hard links and holes. */
async function copyInto(setup: FolderDiskSetup, image: string, folder: string): Promise<void> {
  const staging = await mkdtemp(path.join(setup.imageRoot, '.moving-'));
  try {
    await mountImage(setup.tools, image, staging);
    await rmdir(path.join(staging, 'lost+found')).catch(() => undefined);
    const copy = await runProgram('/bin/cp', ['-a', '--sparse=always', '--', `${folder}/.`, `${staging}/`]);
    if (!(await unmountFolder(setup.tools, staging))) throw new Error(`could not unmount ${staging}`);
    if (copy.code !== 0)
      throw new Error(
        `moving ${folder}'s files into its disk failed: ${copy.stderr.trim().split('\n').at(-1) ?? `cp exited with ${copy.code}`}`,
      );
  } finally {
    await rmdir(staging).catch(() => undefined);
  }
}

/** After a stop mid-move: an image being made is dropped (the folder holds everything); a complete one takes over. */
async function finishMove(image: string): Promise<void> {
  const fresh = `${image}.new`;
  const moving = `${image}.moving`;
  if (!existsSync(moving)) {
    await rm(fresh, { force: true });
    return;
  }
  if (!existsSync(image) && existsSync(fresh)) await rename(fresh, image);
  if (!existsSync(image)) await unlink(moving);
}

/**
 * With the disk mounted over the folder and the move marked done (`.moving`): the folder's
 * own files, hidden beneath the mount, go. They are reached through a bind of the parent
 * folder, which does not carry the disk's mount. A failure leaves the marker for the next
 * mount to try again; the files are on the disk either way.
 */
async function finishBeneath(setup: FolderDiskSetup, folder: string, image: string): Promise<void> {
  const moving = `${image}.moving`;
  if (!existsSync(moving)) return;
  try {
    const view = await mkdtemp(path.join(setup.imageRoot, '.beneath-'));
    try {
      await bindMount(setup.tools, path.dirname(folder), view);
      try {
        await emptyFolder(path.join(view, path.basename(folder)));
      } finally {
        await unmountFolder(setup.tools, view);
      }
    } finally {
      await rmdir(view).catch(() => undefined);
    }
    await rm(moving, { force: true });
  } catch (error) {
    setup.logger?.warn(
      { err: error, folder },
      'the files beneath a workspace disk could not be removed yet; the next mount tries again (they are on the disk)',
    );
  }
}

/** Just mounted, by this process: a disk smaller than a raised cap is unmounted, grown, and mounted again. */
async function grow(setup: FolderDiskSetup, folder: string, image: string): Promise<void> {
  const short = setup.maxBytes - diskSpace(folder).usableBytes;
  if (short <= 0) return;
  if (!(await unmountFolder(setup.tools, folder))) return;
  try {
    await growImage(setup.tools, image, short);
  } catch (error) {
    setup.logger?.warn(
      { err: error, folder },
      'a workspace disk could not grow to WORKSPACE_MAX_MB; it keeps its size',
    );
  }
  await mountImage(setup.tools, image, folder);
}

/** mkfs's own count of inodes, unless the folder moved in holds more files than that. */
function inodesFor(usableBytes: number, entries: number): number | undefined {
  const ratio = usableBytes < 512 * MB ? 4096 : 16384;
  const needed = Math.ceil((entries + 64) * 1.25);
  return needed > usableBytes / ratio ? needed : undefined;
}

/** Remove what a folder holds, keeping the folder (a mount point, or about to be one). */
async function emptyFolder(folder: string): Promise<void> {
  for (const name of readdirSync(folder)) await rm(path.join(folder, name), { recursive: true, force: true });
}
