// Deciding, once at start-up, where shell commands will run (SHELL_SANDBOX):
// - `bwrap`: in the sandbox; if it cannot run here, the bot does not start.
// - `auto` (default): in the sandbox if the probe passes; otherwise run_shell is not offered
//   at all, and one start-up line says why and how to fix it. Never silently unconfined.
// - `off`: on the host, unconfined, with a warning at every start.
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BwrapSandbox, DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './bwrap-sandbox.js';
import type { MemoryBound } from './command-cgroup.js';
import type { BotPaths } from './protected-paths.js';
import { unreachableBy, type SandboxOwner } from './run-as.js';
import { systemView } from './system-mounts.js';
import { thousands } from '../text/thousands.js';

type SandboxMode = 'auto' | 'bwrap' | 'off';

export interface ShellSandboxSettings {
  mode: SandboxMode;
  network: boolean;
  /** The workspace's real path: the probe mounts it as a command would. */
  workspaceRoot: string;
  botPaths: BotPaths;
  /** Extra read-only folders (SHELL_READ_PATHS). */
  readOnlyPaths?: readonly string[];
  limits?: Partial<SandboxLimits>;
  /** Start bwrap as this user (the bot is root); undefined: as the bot's own uid. */
  runAs?: SandboxOwner;
  /** The uid commands run as, for the start-up line (default: the bot's own). */
  commandUid?: number;
  /** What one workspace may hold, in bytes, for the start-up line. */
  workspaceMaxBytes?: number;
  bwrapPath?: string;
  /** Make a memory cgroup per command where the host allows (default true); false: only say which bound a start would get (`npm run doctor`). */
  memoryCgroups?: boolean;
  /** The clean environment bwrap starts with (also for the probe). */
  env: Record<string, string>;
}

export type SandboxDecision =
  | { kind: 'sandbox'; sandbox: BwrapSandbox; probeMs: number; message: string }
  | { kind: 'host'; message: string }
  | { kind: 'withheld'; message: string };

const HOW_TO_FIX =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap) ' +
  'and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+, an AppArmor profile for bwrap), ' +
  'or set SHELL_SANDBOX=off to run commands unconfined (see docs/security.md, "The shell sandbox")';

/** @internal */
export const UNCONFINED_WARNING =
  "SHELL_SANDBOX=off: shell commands run WITHOUT a sandbox; an approved command can read the bot's .env, tokens, store and every " +
  "file the bot's user can, and reach the network";

export async function decideShellSandbox(settings: ShellSandboxSettings): Promise<SandboxDecision> {
  if (settings.mode === 'off') return { kind: 'host', message: UNCONFINED_WARNING };
  // Made before the probe, so the start-up line can say whether the memory cap is per command.
  const limits = limitsOf(settings);
  // Loaded only for a sandbox: a bot whose shell is off reads no cgroup code at start.
  const { openCommandCgroups } = await import('./command-cgroup.js');
  const memory = openCommandCgroups(limits.maxMemoryBytes, {
    maxProcesses: limits.maxProcesses,
    dryRun: settings.memoryCgroups === false,
  });
  const cgroups = memory.groups;
  const sandbox = new BwrapSandbox({
    cgroups,
    view: systemView({
      protectedPaths: settings.botPaths.protected,
      readOnlyPaths: settings.readOnlyPaths,
      network: settings.network,
    }),
    network: settings.network,
    limits: settings.limits,
    bwrapPath: settings.bwrapPath,
    protectedPaths: settings.botPaths.protected.map((entry) => entry.path),
    readOnlyPaths: settings.readOnlyPaths,
    runAs: settings.runAs,
    searchPath: settings.env.PATH,
  });
  const unreachable = settings.runAs ? unreachableFolder(settings, settings.runAs) : null;
  if (unreachable) {
    cgroups?.close();
    return refuse(settings, unreachable, 'see docs/security.md, "The shell sandbox", on a bot that runs as root');
  }
  const cwdFile = path.join(os.tmpdir(), `chat-agent-probe-${randomUUID()}`);
  await writeFile(cwdFile, '', { mode: 0o600 });
  const probe = await sandbox
    .probe(settings.workspaceRoot, cwdFile, settings.env)
    .finally(() => rm(cwdFile, { force: true }));
  if (probe.ok) {
    const network = settings.network ? 'with network (SHELL_NETWORK=on)' : 'no network';
    const uid = settings.commandUid ?? process.getuid?.() ?? -1;
    const who = settings.runAs ? `as uid ${uid} (SHELL_RUN_AS; the bot is root)` : `as uid ${uid} (the bot's own)`;
    return {
      kind: 'sandbox',
      sandbox,
      probeMs: probe.ms,
      message: `shell commands run in a bubblewrap sandbox, ${network}, ${who}; ${boundsText(sandbox.limits, settings.workspaceMaxBytes, memory)} (probe ${probe.ms.toFixed(0)} ms)`,
    };
  }
  cgroups?.close();
  return refuse(settings, probe.reason);
}

function refuse(settings: ShellSandboxSettings, reason: string, fix = HOW_TO_FIX): SandboxDecision {
  const why = `the shell sandbox cannot run here: ${reason}`;
  if (settings.mode === 'bwrap') throw new Error(`SHELL_SANDBOX=bwrap, but ${why}. To fix: ${fix}`);
  return { kind: 'withheld', message: `run_shell is not offered: ${why}. To fix: ${fix}` };
}

/**
 * bwrap, started as the run-as user, looks each folder it mounts up with that user's rights:
 * a workspace under /root (mode 700) cannot be reached. Said plainly, before bwrap's own
 * "Permission denied" would.
 */
function unreachableFolder(settings: ShellSandboxSettings, owner: SandboxOwner): string | null {
  const folders = [
    { folder: settings.workspaceRoot, name: 'WORKSPACE_DIR' },
    ...(settings.readOnlyPaths ?? []).map((folder) => ({ folder, name: 'SHELL_READ_PATHS' })),
  ];
  for (const { folder, name } of folders) {
    const why = unreachableBy(folder, owner);
    if (why)
      return `${name} (${folder}) cannot be reached by the user commands run as: ${why}; move it, or let that user enter the folder (chmod o+x)`;
  }
  return null;
}

/**
 * The bounds of one command, in words, for the start-up line.
 * @internal
 */
export function boundsText(
  limits: SandboxLimits,
  workspaceMaxBytes: number | undefined,
  memory: Pick<MemoryBound, 'kind' | 'missing'>,
): string {
  const mb = (bytes: number): string => `${thousands(Math.round(bytes / (1024 * 1024)))} MB`;
  const parts = [
    `${thousands(limits.maxProcesses)} processes`,
    memory.kind === 'per process'
      ? `${mb(limits.maxMemoryBytes)} of memory per process, not for the command as a whole (no memory cgroup per command: ${memory.missing ?? 'none can be made here'})`
      : `${mb(limits.maxMemoryBytes)} of memory for all its processes together (a memory cgroup per command, ${memory.kind === 'cgroup v2' ? 'cgroup v2, delegated to the bot' : 'cgroup v1'}) and of address space for each`,
    `${mb(limits.tmpBytes)} /tmp`,
    `${mb(limits.maxFileBytes)} per file`,
  ];
  if (workspaceMaxBytes !== undefined) parts.push(`${mb(workspaceMaxBytes)} per workspace`);
  return `bounds per command: ${parts.join(', ')}`;
}

function limitsOf(settings: ShellSandboxSettings): SandboxLimits {
  return { ...DEFAULT_SANDBOX_LIMITS, ...settings.limits };
}
