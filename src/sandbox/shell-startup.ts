// The shell's start-up, from the configuration: check the workspace holds none of the
// bot's own files, build the commands' environment, decide where commands run
// (shell-sandbox.ts) and what holds the workspace's cap (workspace-disks-startup.ts, loaded
// only when WORKSPACE_DISKS asks for disks), and say so in one log line. Everything here
// fails at start, with the setting to fix, rather than at the first command.
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config.js';
import type { EngineLogger } from '../engine/logger.js';
import type { ShellSetup } from '../tools/builtin-tools.js';
import { isInside } from '../tools/real-paths.js';
import { botPaths, realOrResolved, workspaceProblem, type BotPaths } from './protected-paths.js';
import { decideRunAs, unreachableBy, type RunAsDecision, type SandboxOwner } from './run-as.js';
import { parseShellEnvNames, shellEnvironment } from './shell-environment.js';
import { decideShellSandbox } from './shell-sandbox.js';
import type { WorkspaceDisks } from './workspace-disks.js';
import { thousands } from '../text/thousands.js';

const MB = 1024 * 1024;

/** Settings whose values are secrets, or URLs that may carry a password. */
const SECRET_SETTING = /TOKEN|KEY|SECRET|PASSWORD|_URL$/;

export interface ShellStartup {
  shell: ShellSetup;
  /** Names passed to commands besides the allow-list (SHELL_ENV). */
  envNames: string[];
  paths: BotPaths;
  /** The workspace's real path (created if missing). */
  workspaceRoot: string;
  /**
   * Folders the user commands run as must walk to when that is not the bot (a root bot's
   * run-as user): the workspace and SHELL_READ_PATHS. Nothing at start-up may close them.
   */
  reachable: string[];
  /** The start-up line: where commands run, or why they do not. */
  message: string;
  /** Whether the message is a warning (unconfined, or no shell at all). */
  warn: boolean;
  /** Disks of their own for conversation folders (WORKSPACE_DISKS), where they are made; null: the cap is measured. */
  disks: WorkspaceDisks | null;
}

export interface ShellStartupOptions {
  /** The bwrap executable (default: `bwrap` on PATH). */
  bwrapPath?: string;
  /** Where `.env` is read (default: process.cwd()). */
  workingDir?: string;
  /** The bot user's home folder (default: os.homedir()). */
  homeDir?: string;
  /**
   * Create the workspace when it is missing (default true). `npm run doctor` creates nothing:
   * it probes the sandbox with a temporary folder in the workspace's place.
   */
  createWorkspace?: boolean;
  /** Where the workspace disks say what they did (a folder that got one, one that could not). */
  logger?: EngineLogger;
}

export async function prepareShell(config: Config, options: ShellStartupOptions = {}): Promise<ShellStartup> {
  const paths = botPaths({
    storeUrl: config.STORE_URL,
    mcpConfig: config.MCP_CONFIG,
    workingDir: options.workingDir,
    homeDir: options.homeDir,
  });
  // Unconfined (SHELL_SANDBOX=off), commands run as the bot itself: nobody to hand anything to.
  const runAs: RunAsDecision =
    config.SHELL_SANDBOX === 'off' ? { uid: process.getuid?.() ?? -1 } : decideRunAs(config.SHELL_RUN_AS);
  const existed = existsSync(config.WORKSPACE_DIR);
  if (options.createWorkspace !== false) mkdirSync(config.WORKSPACE_DIR, { recursive: true });
  const workspaceRoot = realOrResolved(config.WORKSPACE_DIR);
  const problem = workspaceProblem(workspaceRoot, paths);
  if (problem) throw new Error(problem);
  // A workspace the bot creates is the commands' own; one that existed is the operator's (docs/security.md, "Workspaces").
  if (!existed && existsSync(workspaceRoot) && runAs.runAs) chownSync(workspaceRoot, runAs.runAs.uid, runAs.runAs.gid);
  // The probe mounts the workspace as a command would: one that does not exist yet (a check
  // that creates nothing) is stood in for by an empty temporary folder.
  const standIn =
    existsSync(workspaceRoot) || config.SHELL_SANDBOX === 'off'
      ? undefined
      : mkdtempSync(path.join(os.tmpdir(), 'chat-agent-workspace-'));
  // As the workspace would be when the bot makes it: the run-as user's.
  if (standIn && runAs.runAs) chownSync(standIn, runAs.runAs.uid, runAs.runAs.gid);
  try {
    const startup = await decideShell(config, paths, workspaceRoot, standIn ?? workspaceRoot, options, runAs);
    return startup;
  } finally {
    if (standIn) rmSync(standIn, { recursive: true, force: true });
  }
}

async function decideShell(
  config: Config,
  paths: BotPaths,
  workspaceRoot: string,
  probeRoot: string,
  options: ShellStartupOptions,
  runAs: RunAsDecision,
): Promise<ShellStartup> {
  const secretNames = new Set(Object.keys(config).filter((name) => SECRET_SETTING.test(name)));
  const envNames = parseShellEnvNames(config.SHELL_ENV, secretNames);
  const readOnlyPaths = parseReadPaths(config.SHELL_READ_PATHS, paths);
  const decision = await decideShellSandbox({
    mode: config.SHELL_SANDBOX,
    network: config.SHELL_NETWORK,
    workspaceRoot: probeRoot,
    botPaths: paths,
    readOnlyPaths,
    bwrapPath: options.bwrapPath,
    runAs: runAs.runAs,
    // A check (npm run doctor) makes no cgroup: it says which memory bound a start would get.
    memoryCgroups: options.createWorkspace !== false,
    commandUid: runAs.uid,
    limits: { maxMemoryBytes: config.SHELL_MAX_MEMORY_MB * MB, tmpBytes: config.SHELL_TMP_MB * MB },
    workspaceMaxBytes: config.WORKSPACE_MAX_MB * MB,
    env: shellEnvironment(process.env, {
      home: probeRoot,
      pass: envNames,
      hide: paths.protected.map((entry) => entry.path),
    }),
  });
  const reachable = runAs.runAs ? [workspaceRoot, ...readOnlyPaths] : [];
  switch (decision.kind) {
    case 'sandbox': {
      const disks = await decideDisks(config, workspaceRoot, options).catch((error: unknown) => {
        decision.sandbox.cgroups?.close();
        throw error;
      });
      // The images are the bot's: never granted, never shown to a command.
      if (disks.disks)
        paths.protected.push({ path: disks.disks.imageRoot, what: 'the workspace disks (WORKSPACE_DISKS)' });
      const notes = [
        runAs.note,
        runAs.runAs ? ownershipNote(workspaceRoot, runAs.runAs) : undefined,
        runAs.runAs ? writerNote(runAs.runAs) : undefined,
      ].filter(Boolean);
      const message = [decision.message, disks.text, ...notes].join('; ');
      return {
        shell: { kind: 'sandbox', sandbox: decision.sandbox },
        envNames,
        paths,
        workspaceRoot,
        reachable,
        message,
        warn: notes.length > 0,
        disks: disks.disks,
      };
    }
    // No sandbox, no disks: commands that run on the host can write anywhere the bot can.
    case 'host':
      return {
        shell: { kind: 'host' },
        envNames,
        paths,
        workspaceRoot,
        reachable: [],
        message: decision.message,
        warn: true,
        disks: null,
      };
    case 'withheld':
      return {
        shell: { kind: 'withheld' },
        envNames,
        paths,
        workspaceRoot,
        reachable: [],
        message: decision.message,
        warn: true,
        disks: null,
      };
  }
}

/** What holds WORKSPACE_MAX_MB: the disks' module is loaded only when WORKSPACE_DISKS asks for them. */
async function decideDisks(
  config: Config,
  workspaceRoot: string,
  options: ShellStartupOptions,
): Promise<{ disks: WorkspaceDisks | null; text: string }> {
  const cap = `the workspace cap (${thousands(config.WORKSPACE_MAX_MB)} MB, WORKSPACE_MAX_MB)`;
  if (config.WORKSPACE_DISKS === 'off')
    return { disks: null, text: `${cap} is measured while commands run (best effort; WORKSPACE_DISKS=off)` };
  const { openWorkspaceDisks } = await import('./workspace-disks-startup.js');
  const decision = await openWorkspaceDisks({
    mode: config.WORKSPACE_DISKS,
    workspaceDir: workspaceRoot,
    maxBytes: config.WORKSPACE_MAX_MB * MB,
    logger: options.logger,
    trialOnly: options.createWorkspace === false,
  });
  return { disks: decision.disks, text: `${cap} is ${decision.text}` };
}

/**
 * The sandbox looked at again once start-up has changed folders after the probe (the store
 * made its folder private): the probe must have judged what commands will find. Unchanged
 * when it still holds; otherwise SHELL_SANDBOX=bwrap stops the start and `auto` withholds
 * run_shell, either way saying in words which folder closed the way.
 */
export async function recheckShell(
  config: Config,
  startup: ShellStartup,
  options: { changedFolders: readonly string[] },
): Promise<ShellStartup> {
  if (startup.shell.kind !== 'sandbox' || options.changedFolders.length === 0) return startup;
  const sandbox = startup.shell.sandbox;
  let reason: string | null = null;
  for (const folder of startup.reachable) {
    const why = sandbox.runAs ? unreachableBy(folder, sandbox.runAs) : null;
    if (why) {
      reason = `${folder} can no longer be reached by the user commands run as, since start-up changed ${options.changedFolders.join(', ')}: ${why}`;
      break;
    }
  }
  if (reason === null) {
    const cwdFile = path.join(os.tmpdir(), `chat-agent-probe-${randomUUID()}`);
    writeFileSync(cwdFile, '', { mode: 0o600 });
    const env = shellEnvironment(process.env, {
      home: startup.workspaceRoot,
      pass: startup.envNames,
      hide: startup.paths.protected.map((entry) => entry.path),
    });
    const probe = await sandbox
      .probe(startup.workspaceRoot, cwdFile, env)
      .finally(() => rmSync(cwdFile, { force: true }));
    if (probe.ok) return startup;
    reason = `the probe failed again after start-up changed ${options.changedFolders.join(', ')}: ${probe.reason}`;
  }
  sandbox.cgroups?.close();
  const why = `the shell sandbox cannot run here: ${reason}`;
  const fix =
    'let that user through the folder (chmod o+x), or give the store a folder of its own beside the workspace';
  if (config.SHELL_SANDBOX === 'bwrap') throw new Error(`SHELL_SANDBOX=bwrap, but ${why}. To fix: ${fix}`);
  return {
    ...startup,
    shell: { kind: 'withheld' },
    message: `run_shell is not offered: ${why}. To fix: ${fix}`,
    warn: true,
  };
}

/**
 * Files shared in threads, and the file tools' writes in granted folders, are written by a
 * helper that Node runs as the run-as user (src/sandbox/run-as-writer.ts): a Node installed
 * where that user may not go (under /root) would fail every one of them, said here at start.
 */
function writerNote(owner: SandboxOwner): string | undefined {
  const why = unreachableBy(process.execPath, owner) ?? notExecutableBy(process.execPath, owner);
  if (why === null) return undefined;
  return `files shared in threads cannot be saved, nor granted folders written by the file tools: Node (${process.execPath}) cannot be run by uid ${owner.uid}, which writes them (${why}); install Node where every user may run it`;
}

/** Why `owner` may not execute `file` by its permission bits, or null. */
function notExecutableBy(file: string, owner: SandboxOwner): string | null {
  const info = statSync(file);
  const bit = info.uid === owner.uid ? 0o100 : info.gid === owner.gid ? 0o010 : 0o001;
  return (info.mode & bit) === 0
    ? `${file} (mode ${(info.mode & 0o777).toString(8)}) may not be run by uid ${owner.uid}`
    : null;
}

/** A workspace root commands cannot write (a root-owned one from before SHELL_RUN_AS), and how to hand it over. */
function ownershipNote(workspaceRoot: string, owner: SandboxOwner): string | undefined {
  try {
    const stats = statSync(workspaceRoot);
    if (stats.uid === owner.uid) return undefined;
    return `WORKSPACE_DIR (${workspaceRoot}) belongs to uid ${stats.uid}, so commands (uid ${owner.uid}) cannot write there: hand it over with chown -R ${owner.uid}:${owner.gid} ${workspaceRoot}`;
  } catch {
    return undefined; // stood in for (doctor): nothing to hand over yet
  }
}

/**
 * SHELL_READ_PATHS: folders shown read-only inside the sandbox. None may be `/`, the home
 * folder or an ancestor of it, or overlap the bot's own files.
 */
function parseReadPaths(raw: string | undefined, paths: BotPaths): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const problems: string[] = [];
  const accepted: string[] = [];
  for (const entry of entries) {
    const real = realOrResolved(entry);
    if (!path.isAbsolute(entry)) problems.push(`${entry}: give an absolute path`);
    else if (!existsSync(real)) problems.push(`${entry}: does not exist`);
    else if (isInside(paths.home, real))
      problems.push(`${entry}: it holds the home folder of the bot's user (${paths.home})`);
    else {
      const overlap = paths.protected.find(
        (p) => p.path !== paths.home && (isInside(p.path, real) || isInside(real, p.path)),
      );
      if (overlap) problems.push(`${entry}: it overlaps ${overlap.what} (${overlap.path})`);
      else accepted.push(real);
    }
  }
  if (problems.length > 0) throw new Error(`SHELL_READ_PATHS: ${problems.join('; ')}`);
  return accepted;
}
