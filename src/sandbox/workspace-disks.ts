// A disk of its own for each conversation's folder (WORKSPACE_DISKS): the kernel holds
// WORKSPACE_MAX_MB, whatever a command does (disk-image.ts). This file owns when a folder
// gets its disk and that it is mounted whenever the bot works in the folder; the steps that
// put a folder on its disk, losing no file on the way, are folder-on-disk.ts.
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
// - Never lost: each step of a move runs under the image's lock, and a start that finds a
//   move a stop cut short finishes it (folder-on-disk.ts).
// - Restarts and other processes: a mount outlives a bot that was killed; the next one finds
//   it (mountinfo, the loop device's file) and uses it. Every process that uses a disk keeps a
//   folder of it open, so the kernel refuses to unmount it under another (EBUSY), and a lock
//   file beside the image keeps two processes from mounting one image twice.
// - The cap changed: a disk grows to a raised cap, never shrinks (folder-on-disk.ts).
import { closeSync, existsSync, realpathSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { EngineLogger } from '../engine/logger.js';
import { diskSpace, mountedAt, unmountFolder, type DiskTools } from './disk-image.js';
import { lockedImage, pinMounted, serialByKey, sleep } from './disk-locks.js';
import { makeFolderDisk, mountFolderDisk, type FolderDiskSetup } from './folder-on-disk.js';

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
  private readonly setup: FolderDiskSetup;

  constructor(private readonly options: WorkspaceDisksOptions) {
    this.imageRoot = imageRootOf(options.workspaceDir);
    this.setup = {
      tools: options.tools,
      maxBytes: options.maxBytes,
      imageRoot: this.imageRoot,
      logger: options.logger,
    };
  }

  get maxBytes(): number {
    return this.options.maxBytes;
  }

  /** The image of a conversation folder (a folder directly, or a profile's folder deep, in WORKSPACE_DIR). */
  imageOf(folder: string): string {
    if (!this.inWorkspace(folder))
      throw new Error(`${folder} is not a folder in WORKSPACE_DIR (${this.options.workspaceDir})`);
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
      if (!this.inWorkspace(folder))
        state.refused = `${folder} is not a folder in WORKSPACE_DIR (${this.options.workspaceDir})`;
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
        else if (state.holders > 1)
          return {
            held: false,
            reason: 'other threads work in this folder now; its disk is made when one thread alone does',
          } as const;
        else await this.create(folder, state);
      }
      if (state.pin === null) return { held: false, reason: state.refused ?? 'no disk' } as const;
      return {
        held: true,
        usableBytes: diskSpace(folder).usableBytes,
        freeBytes: () => diskSpace(folder).freeBytes,
      } as const;
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
    }).catch((error: unknown) =>
      this.options.logger?.warn({ err: error, folder }, 'could not unmount a workspace disk'),
    );
  }

  /** Mount the folder's existing disk (or find it mounted), finishing a move a stop cut short. */
  private async attach(folder: string, state: FolderDisk): Promise<void> {
    const image = this.imageOf(folder);
    try {
      await lockedImage(image, async () => {
        if (await mountFolderDisk(this.setup, folder, image)) state.pin = pinMounted(folder);
      });
    } catch (error) {
      this.refuse(folder, state, error);
    }
  }

  /** The folder's first disk, its files moved in (folder-on-disk.ts). */
  private async create(folder: string, state: FolderDisk): Promise<void> {
    const image = this.imageOf(folder);
    try {
      await mkdir(path.dirname(image), { recursive: true, mode: 0o700 });
      await lockedImage(image, async () => {
        const made = await makeFolderDisk(this.setup, folder, image);
        state.pin = pinMounted(folder);
        this.options.logger?.info(
          { folder, disk: image, mb: Math.round(made.usableBytes / MB), moved: made.moved },
          'a workspace folder got a disk of its own',
        );
      });
    } catch (error) {
      this.refuse(folder, state, error);
    }
  }

  private refuse(folder: string, state: FolderDisk, error: unknown): void {
    state.refused = error instanceof Error ? error.message : String(error);
    this.options.logger?.warn(
      { err: error, folder },
      'a workspace folder has no disk of its own this time: its cap is measured instead',
    );
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

/** A folder by its real path, as openConversationFolder gives it (the disks know folders by it): its parent's links resolved. */
function realFolder(folder: string): string {
  try {
    return path.join(realpathSync(path.dirname(folder)), path.basename(folder));
  } catch {
    return path.resolve(folder); // no such parent: no folder, no disk
  }
}
