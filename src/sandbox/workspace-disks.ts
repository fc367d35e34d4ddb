// A disk of its own for each conversation's folder (WORKSPACE_DISKS): the kernel holds
// WORKSPACE_MAX_MB, whatever a command does (disk-image.ts). This file owns when a folder
// gets its disk, that it is mounted whenever the bot works in the folder, and that no file
// is ever lost on the way.
//
// - Where: the images live beside WORKSPACE_DIR, in `<WORKSPACE_DIR>.disks/` (root's, mode
//   700, never mounted in a sandbox nor grantable), one `<folder>.img` per conversation
//   folder, mounted over that folder. Only folders of one thread or one channel
//   (WORKSPACE_SCOPE thread or channel): a shared folder holds other profiles' folders, which
//   a mount over it would hide; its cap stays measured (workspace-usage.ts).
// - When: at the conversation's first command, not before (a bot with a thousand
//   conversations that never run a command makes no disk). The folder's files so far are
//   copied in, the disk is mounted over the folder, then the files beneath it are removed.
//   After that the disk is mounted whenever a session holds the folder, and unmounted when
//   the last one ends (sessions end when idle).
// - Never lost: an image exists only once it holds a complete copy; the `.moving` marker
//   says the files beneath may be removed because the image has them all, and that happens
//   only while the disk is mounted over them (a mount that fails drops the copy, or the
//   marker); a start that finds the marker finishes the move. An image whose folder holds
//   files nobody moved in (written while the disk was not mounted: a bot run with
//   WORKSPACE_DISKS=off) is not mounted over them: the folder keeps its measured cap, and the
//   log says what to do.
// - Restarts and other processes: a mount outlives a bot that was killed; the next one finds
//   it (mountinfo, the loop device's file) and uses it. Every process that uses a disk keeps a
//   folder of it open, so the kernel refuses to unmount it under another (EBUSY), and a lock
//   file beside the image keeps two processes from mounting one image twice.
// - The cap changed: a disk grows to a raised cap online; it never shrinks (that would need
//   every file moved), so under a lowered cap the folder is measured as well.
import { closeSync, existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EngineLogger } from '../engine/logger.js';
import { measureFolder } from '../tools/workspace-usage.js';
import { bindMount, checkImage, diskSpace, growImage, makeImage, mountedAt, mountImage, runProgram, unmountFolder, type DiskTools } from './disk-image.js';
import { lockedImage, pinMounted, serialByKey, sleep } from './disk-locks.js';

/** What holds the cap for the command about to run. */
export type DiskState = { held: true; usableBytes: number; freeBytes(): number } | { held: false; reason: string };

/** One session's hold on its conversation folder's disk. */
export interface WorkspaceDisk {
  readonly folder: string;
  /** Before each command: the folder on its disk, made at the first command (its files moved in). */
  ensure(): Promise<DiskState>;
  /** The session is over: the disk is unmounted once no session of this process holds it. */
  release(): Promise<void>;
}

interface FolderDisk {
  holders: number;
  /** A folder of the mounted disk held open: the kernel's sign, to every process, that it is in use. */
  pin: number | null;
  /** Why this folder keeps no disk while this process holds it; said once. */
  refused: string | null;
}

const MB = 1024 * 1024;
/** A folder being moved in gets room for what it holds and a tenth more, if that is more than the cap. */
const MOVE_HEADROOM = 1.1;
const UNMOUNT_TRIES = 40;
const UNMOUNT_PAUSE_MS = 50;

export interface WorkspaceDisksOptions {
  /** WORKSPACE_DIR's real path: conversation folders are in it. */
  workspaceDir: string;
  /** WORKSPACE_MAX_MB in bytes: what files may use on each disk. */
  maxBytes: number;
  tools: DiskTools;
  logger?: EngineLogger;
}

export class WorkspaceDisks {
  /** Where the images are: `<WORKSPACE_DIR>.disks`. */
  readonly imageRoot: string;
  private readonly folders = new Map<string, FolderDisk>();
  private readonly serial = serialByKey();

  constructor(private readonly options: WorkspaceDisksOptions) {
    this.imageRoot = imageRootOf(options.workspaceDir);
  }

  get maxBytes(): number {
    return this.options.maxBytes;
  }

  /** The image of a conversation folder (a folder directly, or a profile's folder deep, in WORKSPACE_DIR). */
  imageOf(folder: string): string {
    if (!this.inWorkspace(folder)) throw new Error(`${folder} is not a folder in WORKSPACE_DIR (${this.options.workspaceDir})`);
    return path.join(this.imageRoot, `${path.relative(this.options.workspaceDir, folder)}.img`);
  }

  private inWorkspace(folder: string): boolean {
    const relative = path.relative(this.options.workspaceDir, folder);
    return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
  }

  /** A session starts in `folder`: its disk, if it has one, is mounted now. */
  async hold(folder: string): Promise<WorkspaceDisk> {
    await this.serial(folder, async () => {
      const state = this.stateOf(folder);
      state.holders++;
      if (!this.inWorkspace(folder)) state.refused = `${folder} is not a folder in WORKSPACE_DIR (${this.options.workspaceDir})`;
      else if (state.pin === null && state.refused === null && this.hasImage(folder)) await this.attach(folder, state);
    });
    let released = false;
    return {
      folder,
      ensure: () => this.ensure(folder),
      release: async () => {
        if (released) return;
        released = true;
        await this.release(folder);
      },
    };
  }

  /** Run `work` with the folder's disk mounted, if it has one (removing a thread's uploads from a channel's folder). */
  async visit<T>(folder: string, work: () => Promise<T>): Promise<T> {
    const disk = await this.hold(realFolder(folder));
    try {
      return await work();
    } finally {
      await disk.release();
    }
  }

  /**
   * A thread's folder is being removed (/forget, retention): its disk goes, unmounted first.
   * The thread's sessions have ended; a disk still busy after a few tries is an error.
   */
  async forget(named: string): Promise<void> {
    const folder = realFolder(named);
    if (!this.inWorkspace(folder)) return;
    await this.serial(folder, async () => {
      const state = this.folders.get(folder);
      if (state?.pin != null) closeSync(state.pin);
      this.folders.delete(folder);
      if (!this.hasImage(folder) && !existsSync(`${this.imageOf(folder)}.new`)) return;
      const image = this.imageOf(folder);
      await lockedImage(image, async () => {
        for (let attempt = 0; mountedAt(folder)?.backingFile === image; attempt++) {
          if (attempt >= UNMOUNT_TRIES) throw new Error(`the disk of ${folder} is still in use; it was not removed`);
          if (!(await unmountFolder(this.options.tools, folder))) await sleep(UNMOUNT_PAUSE_MS);
        }
        await Promise.all([image, `${image}.new`, `${image}.moving`].map((file) => rm(file, { force: true })));
      });
    });
  }

  /** At shutdown: every disk this process holds is unmounted (one still busy stays, for the next start). */
  async close(): Promise<void> {
    for (const folder of [...this.folders.keys()]) {
      await this.serial(folder, async () => {
        const state = this.folders.get(folder);
        this.folders.delete(folder);
        if (state?.pin != null) await this.unmount(folder, state.pin);
      });
    }
  }

  private async ensure(folder: string): Promise<DiskState> {
    return this.serial(folder, async () => {
      const state = this.stateOf(folder);
      if (state.pin === null && state.refused === null) {
        if (this.hasImage(folder)) await this.attach(folder, state);
        else if (state.holders > 1) return { held: false, reason: 'other threads work in this folder now; its disk is made when one thread alone does' } as const;
        else await this.create(folder, state);
      }
      if (state.pin === null) return { held: false, reason: state.refused ?? 'no disk' } as const;
      return { held: true, usableBytes: diskSpace(folder).usableBytes, freeBytes: () => diskSpace(folder).freeBytes } as const;
    });
  }

  private async release(folder: string): Promise<void> {
    await this.serial(folder, async () => {
      const state = this.folders.get(folder);
      if (!state) return;
      state.holders--;
      if (state.holders > 0) return;
      this.folders.delete(folder);
      if (state.pin !== null) await this.unmount(folder, state.pin);
    });
  }

  /** Unmount unless another process (or a command still dying) uses it: whoever holds it next finds it mounted. */
  private async unmount(folder: string, pin: number): Promise<void> {
    closeSync(pin);
    const image = this.imageOf(folder);
    await lockedImage(image, async () => {
      if (mountedAt(folder)?.backingFile === image && !(await unmountFolder(this.options.tools, folder))) {
        this.options.logger?.debug({ folder }, 'a workspace disk is still in use; it stays mounted');
      }
    }).catch((error: unknown) => this.options.logger?.warn({ err: error, folder }, 'could not unmount a workspace disk'));
  }

  /** Mount the folder's existing disk (or find it mounted), finishing a move a stop cut short. */
  private async attach(folder: string, state: FolderDisk): Promise<void> {
    const image = this.imageOf(folder);
    try {
      await lockedImage(image, async () => {
        await this.finishMove(image);
        if (!existsSync(image)) return;
        const mounted = mountedAt(folder);
        if (mounted && mounted.backingFile !== image) throw new Error(`another file system (${mounted.source}) is mounted on ${folder}`);
        if (!mounted) {
          if (!existsSync(`${image}.moving`) && readdirSync(folder).length > 0) {
            throw new Error(
              `${folder} holds files written while its disk (${image}) was not mounted; neither is hidden by mounting the other: move the folder's files into the disk by hand ` +
                `(mount it elsewhere, copy them in, empty the folder) or remove the disk, and the next session mounts it`,
            );
          }
          if (!(await checkImage(this.options.tools, image))) throw new Error(`e2fsck could not repair ${image}; run e2fsck on it by hand`);
          await mountImage(this.options.tools, image, folder).catch(async (error: unknown) => {
            // What is beneath is never removed while the disk is not mounted over it: from now
            // on the folder and the disk are two, and a person decides (the refusal says how).
            await rm(`${image}.moving`, { force: true });
            throw error;
          });
          await this.grow(folder, image);
        }
        await this.finishBeneath(folder, image);
        state.pin = pinMounted(folder);
      });
    } catch (error) {
      this.refuse(folder, state, error);
    }
  }

  /**
   * The folder's first disk: made at its cap (or what the folder holds and a tenth more), the
   * folder's files copied in on a mount of its own, then removed from under the mount.
   */
  private async create(folder: string, state: FolderDisk): Promise<void> {
    const image = this.imageOf(folder);
    const fresh = `${image}.new`;
    try {
      await mkdir(path.dirname(image), { recursive: true, mode: 0o700 });
      await lockedImage(image, async () => {
        const usage = await measureFolder(folder, Number.MAX_SAFE_INTEGER);
        const owner = statSync(folder);
        const usableBytes = Math.max(this.options.maxBytes, Math.ceil(usage.bytes * MOVE_HEADROOM) + MB);
        await rm(fresh, { force: true });
        await makeImage(this.options.tools, fresh, { usableBytes, owner: { uid: owner.uid, gid: owner.gid }, mode: owner.mode & 0o7777, inodes: inodesFor(usableBytes, usage.entries) });
        const moving = usage.entries > 0;
        if (moving) {
          await this.copyInto(fresh, folder).catch(async (error: unknown) => {
            await rm(fresh, { force: true });
            throw error;
          });
          // From here the image holds every file: once it is mounted over the folder, what is
          // beneath may go (finishBeneath, now or at the next mount after a stop).
          await writeFile(`${image}.moving`, `${folder}\n`, { mode: 0o600 });
        }
        await rename(fresh, image);
        await mountImage(this.options.tools, image, folder).catch(async (error: unknown) => {
          // The folder still holds everything: the copy goes.
          await Promise.all([image, `${image}.moving`].map((file) => rm(file, { force: true })));
          throw error;
        });
        // The root of the disk is the conversation's folder: its owner (mkfs), its mode, no lost+found.
        await chmod(folder, owner.mode & 0o7777);
        await rmdir(path.join(folder, 'lost+found')).catch(() => undefined);
        await this.finishBeneath(folder, image);
        state.pin = pinMounted(folder);
        this.options.logger?.info({ folder, disk: image, mb: Math.round(usableBytes / MB), moved: usage.entries }, 'a workspace folder got a disk of its own');
      });
    } catch (error) {
      this.refuse(folder, state, error);
    }
  }

  /** cp -a keeps owners, modes, times, hard links and holes. */
  private async copyInto(image: string, folder: string): Promise<void> {
    const staging = await mkdtemp(path.join(this.imageRoot, '.moving-'));
    try {
      await mountImage(this.options.tools, image, staging);
      await rmdir(path.join(staging, 'lost+found')).catch(() => undefined);
      const copy = await runProgram('/bin/cp', ['-a', '--sparse=always', '--', `${folder}/.`, `${staging}/`]);
      if (!(await unmountFolder(this.options.tools, staging))) throw new Error(`could not unmount ${staging}`);
      if (copy.code !== 0) throw new Error(`moving ${folder}'s files into its disk failed: ${copy.stderr.trim().split('\n').at(-1) ?? `cp exited with ${copy.code}`}`);
    } finally {
      await rmdir(staging).catch(() => undefined);
    }
  }

  /** After a stop mid-move: an image being made is dropped (the folder holds everything); a complete one takes over. */
  private async finishMove(image: string): Promise<void> {
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
  private async finishBeneath(folder: string, image: string): Promise<void> {
    const moving = `${image}.moving`;
    if (!existsSync(moving)) return;
    try {
      const view = await mkdtemp(path.join(this.imageRoot, '.beneath-'));
      try {
        await bindMount(this.options.tools, path.dirname(folder), view);
        try {
          await emptyFolder(path.join(view, path.basename(folder)));
        } finally {
          await unmountFolder(this.options.tools, view);
        }
      } finally {
        await rmdir(view).catch(() => undefined);
      }
      await rm(moving, { force: true });
    } catch (error) {
      this.options.logger?.warn({ err: error, folder }, "the files beneath a workspace disk could not be removed yet; the next mount tries again (they are on the disk)");
    }
  }

  /** Just mounted, by this process: a disk smaller than a raised cap is unmounted, grown, and mounted again. */
  private async grow(folder: string, image: string): Promise<void> {
    const short = this.options.maxBytes - diskSpace(folder).usableBytes;
    if (short <= 0) return;
    if (!(await unmountFolder(this.options.tools, folder))) return;
    try {
      await growImage(this.options.tools, image, short);
    } catch (error) {
      this.options.logger?.warn({ err: error, folder }, 'a workspace disk could not grow to WORKSPACE_MAX_MB; it keeps its size');
    }
    await mountImage(this.options.tools, image, folder);
  }

  private refuse(folder: string, state: FolderDisk, error: unknown): void {
    state.refused = error instanceof Error ? error.message : String(error);
    this.options.logger?.warn({ err: error, folder }, 'a workspace folder has no disk of its own this time: its cap is measured instead');
  }

  private hasImage(folder: string): boolean {
    const image = this.imageOf(folder);
    return existsSync(image) || existsSync(`${image}.moving`);
  }

  private stateOf(folder: string): FolderDisk {
    let state = this.folders.get(folder);
    if (!state) {
      state = { holders: 0, pin: null, refused: null };
      this.folders.set(folder, state);
    }
    return state;
  }
}

/** `<WORKSPACE_DIR>.disks`: beside the workspace, never in it. */
export function imageRootOf(workspaceDir: string): string {
  return `${workspaceDir.replace(/\/+$/, '')}.disks`;
}

/** mkfs's own count of inodes, unless the folder moved in holds more files than that. */
function inodesFor(usableBytes: number, entries: number): number | undefined {
  const ratio = usableBytes < 512 * MB ? 4096 : 16384;
  const needed = Math.ceil((entries + 64) * 1.25);
  return needed > usableBytes / ratio ? needed : undefined;
}

/** A folder by its real path, as openConversationFolder gives it (the disks know folders by it): its parent's links resolved. */
function realFolder(folder: string): string {
  try {
    return path.join(realpathSync(path.dirname(folder)), path.basename(folder));
  } catch {
    return path.resolve(folder); // no such parent: no folder, no disk
  }
}

/** Remove what a folder holds, keeping the folder (a mount point, or about to be one). */
async function emptyFolder(folder: string): Promise<void> {
  for (const name of readdirSync(folder)) await rm(path.join(folder, name), { recursive: true, force: true });
}
