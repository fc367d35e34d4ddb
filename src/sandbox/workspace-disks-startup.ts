// Whether conversation folders get disks of their own (WORKSPACE_DISKS), decided once at
// start: `off` (the default) keeps the cap measured; `auto` makes disks where a trial disk
// can be made, mounted and written here; `on` makes them or stops the start. The start-up
// line says which holds WORKSPACE_MAX_MB, and why no disk can be made where none can.
//
// Where not: a bot that is not root (mounting needs it), no loop devices (a container without
// them), e2fsprogs missing, or WORKSPACE_DIR on a file system another machine may mount too
// (a loop mount of one image from two hosts destroys it).
import { existsSync, statfsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EngineLogger } from '../engine/logger.js';
import { findDiskTools, makeImage, mountImage, unmountFolder, type DiskTools } from './disk-image.js';
import { imageRootOf, WorkspaceDisks } from './workspace-disks.js';

type WorkspaceDisksMode = 'auto' | 'on' | 'off';

const MB = 1024 * 1024;

/** File systems whose files another machine may mount too: a loop mount from two hosts destroys the disk. */
const NETWORK_FILE_SYSTEMS = new Map<number, string>([
  [0x6969, 'NFS'],
  [0x517b, 'SMB'],
  [0xff534d42, 'CIFS'],
  [0xfe534d42, 'SMB2'],
  [0x65735546, 'FUSE'],
  [0x00c36400, 'Ceph'],
  [0x01021997, '9p'],
  [0x5346414f, 'AFS'],
  [0x01161970, 'GFS2'],
  [0x7461636f, 'OCFS2'],
  [0x0bd00bd0, 'Lustre'],
]);

export interface WorkspaceDisksDecision {
  /** Null: the cap is measured (WORKSPACE_DISKS=off, or no disk can be made here). */
  disks: WorkspaceDisks | null;
  /** For the start-up line: what holds WORKSPACE_MAX_MB. */
  text: string;
}

export interface WorkspaceDisksSettings {
  mode: WorkspaceDisksMode;
  workspaceDir: string;
  maxBytes: number;
  logger?: EngineLogger;
  /** `npm run doctor`: try a disk in a temporary folder, keep nothing. */
  trialOnly?: boolean;
}

const MEASURED =
  'measured before and while each command runs (best effort: a fast command can pass it before the walk sees it)';

/** Decide, at start, whether conversation folders get disks; `on` and no disk possible stops the start. */
export async function openWorkspaceDisks(settings: WorkspaceDisksSettings): Promise<WorkspaceDisksDecision> {
  if (settings.mode === 'off')
    return {
      disks: null,
      text: `${MEASURED}; WORKSPACE_DISKS=on holds it with a disk of its own per conversation (a root bot with loop devices)`,
    };
  const tools = findDiskTools();
  const why =
    'missing' in tools
      ? `${tools.missing.join(', ')} not found (e2fsprogs, util-linux)`
      : await whyNoDisk(settings, tools);
  if (why !== null || 'missing' in tools) {
    if (settings.mode === 'on')
      throw new Error(
        `WORKSPACE_DISKS=on, but no disk can be made here: ${why}. To fix: run the bot as root where loop devices exist, or set WORKSPACE_DISKS=auto or off (see docs/security.md, "The shell sandbox")`,
      );
    return { disks: null, text: `${MEASURED}; no disk of its own can be made here: ${why}` };
  }
  const disks = settings.trialOnly
    ? null
    : new WorkspaceDisks({
        workspaceDir: settings.workspaceDir,
        maxBytes: settings.maxBytes,
        tools,
        logger: settings.logger,
      });
  return {
    disks,
    text: `held by the kernel: each thread's or channel's folder gets a disk of its own at its first command (WORKSPACE_DISKS, images in ${imageRootOf(settings.workspaceDir)})`,
  };
}

/** Why no disk can be made here, or null: a trial disk is made, mounted, written and removed. */
async function whyNoDisk(settings: WorkspaceDisksSettings, tools: DiskTools): Promise<string | null> {
  if (process.platform !== 'linux') return 'loop-mounted disks are Linux only';
  if (process.getuid?.() !== 0) return `mounting needs root, and the bot runs as uid ${process.getuid?.()}`;
  const root = imageRootOf(settings.workspaceDir);
  const near = existsSync(root) ? root : path.dirname(root);
  try {
    const network = NETWORK_FILE_SYSTEMS.get(statfsSync(near).type);
    if (network) return `${near} is on ${network}, which another machine may mount too`;
  } catch {
    // not there yet: the trial below says what is wrong
  }
  let trialFolder: string;
  try {
    if (settings.trialOnly) trialFolder = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-disk-trial-'));
    else {
      await mkdir(root, { recursive: true, mode: 0o700 });
      await chmod(root, 0o700);
      trialFolder = await mkdtemp(path.join(root, '.trial-'));
    }
  } catch (error) {
    return `${root} cannot be made: ${(error as Error).message}`;
  }
  const image = `${trialFolder}.img`;
  try {
    await makeImage(tools, image, { usableBytes: MB, owner: { uid: 0, gid: 0 }, mode: 0o700 });
    await mountImage(tools, image, trialFolder);
    try {
      await writeFile(path.join(trialFolder, 'trial'), 'x');
    } finally {
      await unmountFolder(tools, trialFolder);
    }
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await rm(image, { force: true });
    await rmdir(trialFolder).catch(() => undefined);
  }
}
