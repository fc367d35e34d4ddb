// The built-in tools of one session: files, search, shell and web, all bound to one
// workspace directory.
//
// One idea: one instance per session. The shell's working directory and its running
// commands live in the instance, so a session's `cd` never leaks into another's, and
// `dispose()` at the end of a session stops everything that session's shell started.
import { type ToolDefinition } from '../engine/index.js';
import { editFileTool } from './edit-file.js';
import { DEFAULT_FETCH_MAX_BYTES, DEFAULT_FETCH_TIMEOUT_MS, fetchUrlTool, type FetchImpl } from './fetch-url.js';
import { listDirTool } from './list-dir.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from './output.js';
import { readFileTool } from './read-file.js';
import { BwrapLauncher } from '../sandbox/bwrap-launcher.js';
import type { BwrapSandbox } from '../sandbox/bwrap-sandbox.js';
import { runAsWriterFor } from '../sandbox/run-as-writer.js';
import { shellEnvironment } from '../sandbox/shell-environment.js';
import type { WorkspaceDisk } from '../sandbox/workspace-disks.js';
import { HostLauncher } from './command-launcher.js';
import { runShellTool } from './run-shell.js';
import { searchTool } from './search.js';
import { DEFAULT_SHELL_TIMEOUT_MS, ShellSession } from './shell-session.js';
import type { ShellWriteCheck } from './grant-rules.js';
import { Workspace } from './workspace.js';
import { WorkspaceQuota } from './workspace-usage.js';
import { writeFileTool } from './write-file.js';

/** Below this, the notes about what was cut would crowd out the content itself. */
const MIN_OUTPUT_CHARS = 1_000;

export interface BuiltinToolsOptions {
  /** The directory the file tools are confined to and the shell starts in; created if missing. */
  workspaceDir: string;
  /**
   * WORKSPACE_DIR, when `workspaceDir` is one conversation's folder in it: nothing else in it
   * may be granted (another conversation's files). Unset in `shared` scope.
   */
  workspaceBase?: string;
  /** GRANT_ROOTS, real paths: request_directory grants only folders inside one of them. */
  grantRoots?: readonly string[];
  /** Whether shell commands could write in a folder, for the grant card (default: the bot's own access). */
  shellCanWrite?: ShellWriteCheck;
  /** A shell command is stopped after this long (default 120 s). */
  shellTimeoutMs?: number;
  /** Every tool answer is capped at this many characters (default 20,000). */
  maxOutputChars?: number;
  /** The fetch fetch_url uses (default: undici's, through the vetted connection); tests pass their own. */
  fetchImpl?: FetchImpl;
  /** fetch_url gives up after this long, body included (default 30 s). */
  fetchTimeoutMs?: number;
  /** fetch_url reads at most this many bytes of a body (default 2 MiB). */
  fetchMaxBytes?: number;
  /**
   * Where shell commands run: in the bubblewrap sandbox, on the host (unconfined), or not
   * at all (run_shell is not offered). Default: on the host; the core decides from SHELL_SANDBOX.
   */
  shell?: ShellSetup;
  /** Variables passed to commands besides the allow-list (SHELL_ENV). */
  shellEnvNames?: readonly string[];
  /** The environment shell commands see (default: the allow-list, from this process's). */
  shellEnv?: Record<string, string>;
  /** Between SIGINT and SIGKILL when a command is stopped (default 2 s). */
  shellKillGraceMs?: number;
  /** fetch_url may reach loopback and private networks (default false: public internet only). */
  fetchAllowPrivate?: boolean;
  /** The bot's own files and folders: no granted folder may overlap one (protected-paths.ts). */
  protectedPaths?: readonly string[];
  /** The bot user's home folder: never granted, nor any folder holding it. */
  homeDir?: string;
  /** What the workspace may hold on disk, in bytes (WORKSPACE_MAX_MB); unset: no cap. */
  workspaceMaxBytes?: number;
  /** How often a running command's workspace is measured against the cap (default 2 s). */
  quotaCheckMs?: number;
  /** The workspace folder's own disk (src/sandbox/workspace-disks.ts): holds WORKSPACE_MAX_MB in the kernel. */
  workspaceDisk?: WorkspaceDisk;
}

export type ShellSetup = { kind: 'sandbox'; sandbox: BwrapSandbox } | { kind: 'host' } | { kind: 'withheld' };

/** What the tools of one session are built from. */
interface ToolContext {
  workspace: Workspace;
  quota: WorkspaceQuota | undefined;
  maxOutputChars: number;
  /** The session's run_shell; undefined where commands may not run (SHELL_SANDBOX=auto without a sandbox). */
  shell: ToolDefinition | undefined;
  fetch: Parameters<typeof fetchUrlTool>[0];
}

/**
 * The registry of built-in tools: each tool under the name the model calls it by, in the
 * order it is offered. It is the one list: a session gets these tools, and DISABLED_TOOLS
 * accepts these names (BUILTIN_TOOL_NAMES); a test checks each key is its tool's name.
 */
const BUILTIN_TOOLS = {
  read_file: (c: ToolContext) => readFileTool(c.workspace, c.maxOutputChars),
  list_dir: (c: ToolContext) => listDirTool(c.workspace, c.maxOutputChars),
  search: (c: ToolContext) => searchTool(c.workspace, c.maxOutputChars),
  write_file: (c: ToolContext) => writeFileTool(c.workspace, c.quota),
  edit_file: (c: ToolContext) => editFileTool(c.workspace, c.quota),
  run_shell: (c: ToolContext) => c.shell,
  fetch_url: (c: ToolContext) => fetchUrlTool(c.fetch),
} satisfies Record<string, (context: ToolContext) => ToolDefinition | undefined>;

export type BuiltinToolName = keyof typeof BUILTIN_TOOLS;

/** Every built-in tool's name, as the model sees it: what DISABLED_TOOLS may name. */
export const BUILTIN_TOOL_NAMES = Object.keys(BUILTIN_TOOLS) as readonly BuiltinToolName[];

export interface BuiltinTools {
  tools: ToolDefinition[];
  /** Give to the engine's `hooks.onInterrupt`: a stop interrupts the running shell command. */
  interruptHook: () => void;
  /** Stop everything the shell still runs, background jobs included. Call when the session ends. */
  dispose(): Promise<void>;
  workspace: Workspace;
}

export function createBuiltinTools(options: BuiltinToolsOptions): BuiltinTools {
  const maxOutputChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  if (!Number.isInteger(maxOutputChars) || maxOutputChars < MIN_OUTPUT_CHARS) {
    throw new Error(`maxOutputChars must be an integer of at least ${MIN_OUTPUT_CHARS}, got ${maxOutputChars}`);
  }
  const shellTimeoutMs = positive('shellTimeoutMs', options.shellTimeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS);
  const setup = options.shell ?? { kind: 'host' };
  // A root bot's commands run as another uid: what the tools create is theirs too (run-as.ts).
  const owner = setup.kind === 'sandbox' ? setup.sandbox.runAs : undefined;
  const workspace = Workspace.open(options.workspaceDir, {
    protectedPaths: options.protectedPaths,
    homeDir: options.homeDir,
    base: options.workspaceBase,
    grantRoots: options.grantRoots,
    shellCanWrite: options.shellCanWrite,
    owner,
    // A root bot's file tools write in granted folders as its commands' user (run-as-writer.ts).
    ...(owner ? { grantWriter: runAsWriterFor(owner) } : {}),
  });
  const quota =
    options.workspaceMaxBytes === undefined
      ? undefined
      : new WorkspaceQuota(() => workspace.root, options.workspaceMaxBytes);
  const shell = new ShellSession(workspace, {
    maxOutputChars,
    killGraceMs: options.shellKillGraceMs,
    env:
      options.shellEnv ??
      shellEnvironment(process.env, {
        home: workspace.root,
        pass: options.shellEnvNames,
        hide: setup.kind === 'sandbox' ? setup.sandbox.protectedPaths : [],
      }),
    launcher: setup.kind === 'sandbox' ? new BwrapLauncher(setup.sandbox) : new HostLauncher(),
    quota,
    quotaCheckMs: options.quotaCheckMs,
    disk: options.workspaceDisk,
  });
  const context: ToolContext = {
    workspace,
    quota,
    maxOutputChars,
    shell:
      setup.kind === 'withheld'
        ? undefined
        : runShellTool(
            shell,
            shellTimeoutMs,
            setup.kind === 'sandbox' ? { sandboxed: true, network: setup.sandbox.network } : { sandboxed: false },
          ),
    fetch: {
      fetchImpl: options.fetchImpl,
      timeoutMs: positive('fetchTimeoutMs', options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS),
      maxBytes: positive('fetchMaxBytes', options.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES),
      maxOutputChars,
      allowPrivateNetworks: options.fetchAllowPrivate ?? false,
    },
  };
  const tools = BUILTIN_TOOL_NAMES.map((name) => BUILTIN_TOOLS[name](context)).filter(
    (tool): tool is ToolDefinition => tool !== undefined,
  );
  return {
    tools,
    interruptHook: () => shell.interrupt(),
    dispose: () => shell.dispose(),
    workspace,
  };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${value}`);
  return value;
}
