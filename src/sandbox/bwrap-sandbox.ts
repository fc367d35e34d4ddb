// The bubblewrap sandbox every shell command runs in: how one command's `bwrap` line is
// built, and the start-up probe that decides whether it can run here at all.
//
// Per command, a fresh set of namespaces: PID (no process of the bot or of another session
// is visible; /proc is the sandbox's own; when the command ends, everything it started ends
// with it, `setsid` included), IPC, UTS, cgroup, user where unprivileged, and network unless
// SHELL_NETWORK=on. The file system is empty but for: the system read-only (system-mounts.ts),
// /dev's basics (read-only but for a sized /dev/shm), a private /tmp of SHELL_TMP_MB, and,
// writable, the session's workspace and granted folders, each at its real path so a path
// means the same to the shell and to the file tools.
//
// When the bot is root, bwrap is started as an unprivileged uid (run-as.ts), so the kernel
// treats the command as that user: /proc/sys and /proc/sysrq-trigger are not writable and
// RLIMIT_NPROC applies. Each command's bounds are rlimits set by bash before the command runs:
// processes, address space per process, and file size (no more than what is left of the
// workspace's cap, see workspace-usage.ts); and, where the host lets the bot make one, a
// memory cgroup that caps all of the command's processes together (command-cgroup.ts).
//
// `--new-session` makes the sandbox's PID 1 (bwrap's reaper) lead a new session and process
// group, which the command inherits. A stop signals that group by its host pid: the command
// gets SIGINT while bwrap's outer process, in our own group, does not (were it to die first,
// --die-with-parent would SIGKILL the command before it could print a summary). PID 1 itself
// ignores SIGINT: the kernel delivers to a namespace's init only signals it handles.
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { isInside } from '../tools/real-paths.js';
import type { CommandCgroups } from './cgroup-port.js';
import type { SandboxOwner } from './run-as.js';
import { mountArgs, type SystemView } from './system-mounts.js';

/** Where the command's final working directory is written, inside the sandbox. */
export const SANDBOX_CWD_FILE = '/tmp/.chat-agent-cwd';

export interface SandboxLimits {
  /** RLIMIT_NPROC: processes of the user. The kernel exempts uid 0 outside a user namespace. */
  maxProcesses: number;
  /** RLIMIT_FSIZE: the largest file a command may write, in bytes. */
  maxFileBytes: number;
  /** RLIMIT_AS: the address space of each process, in bytes (SHELL_MAX_MEMORY_MB). */
  maxMemoryBytes: number;
  /** The size of the private /tmp, and of /dev/shm, in bytes (SHELL_TMP_MB). */
  tmpBytes: number;
}

const MB = 1024 * 1024;

/**
 * 4 GiB of address space: Node 20 reserves about 1 GiB before its first line (it aborts under
 * 1 GiB) and held a 1 GB heap under 2 GiB; git and Python need far less.
 */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  maxProcesses: 1024,
  maxFileBytes: 1024 * MB,
  maxMemoryBytes: 4096 * MB,
  tmpBytes: 512 * MB,
};

/** The folders a command's PATH may name, in the usual order, where they exist. */
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export interface BwrapSandboxOptions {
  view: SystemView;
  network: boolean;
  /** Bounds per command; what is left out takes DEFAULT_SANDBOX_LIMITS'. */
  limits?: Partial<SandboxLimits>;
  /** The bwrap executable (default: `bwrap` on PATH). */
  bwrapPath?: string;
  /** The bot's own paths (protected-paths.ts). */
  protectedPaths?: readonly string[];
  /** Extra read-only folders (SHELL_READ_PATHS), real paths: their programs may be on PATH. */
  readOnlyPaths?: readonly string[];
  /** Start bwrap as this user (the bot is root, run-as.ts); undefined: as the bot's own. */
  runAs?: SandboxOwner;
  /** A memory cgroup per command (command-cgroup.ts); null or undefined: the memory cap is per process only. */
  cgroups?: CommandCgroups | null;
  /** Where a bare bwrapPath is looked for (default: the bot's PATH); commands get another PATH. */
  searchPath?: string;
}

export interface SandboxedCommand {
  /** Writable folders, real paths: the workspace, then granted folders. */
  roots: readonly string[];
  cwd: string;
  /** The host file the command's final cwd is written to (bound at SANDBOX_CWD_FILE). */
  cwdFile: string;
  script: string;
  /** A smaller RLIMIT_FSIZE for this command (what is left of the workspace's cap). */
  maxFileBytes?: number;
}

export type ProbeResult = { ok: true; ms: number } | { ok: false; ms: number; reason: string };

export class BwrapSandbox {
  readonly network: boolean;
  readonly limits: SandboxLimits;
  readonly bwrapPath: string;
  /** bwrapPath found on the bot's PATH (null: not there), so spawning with the commands' PATH finds the same one. */
  readonly executable: string | null;
  readonly runAs: SandboxOwner | undefined;
  readonly cgroups: CommandCgroups | null;
  private readonly systemArgs: string[];
  private readonly readOnlyPaths: readonly string[];

  constructor(private readonly options: BwrapSandboxOptions) {
    this.network = options.network;
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
    this.bwrapPath = options.bwrapPath ?? 'bwrap';
    this.executable = findExecutable(this.bwrapPath, options.searchPath ?? process.env.PATH);
    this.runAs = options.runAs;
    this.cgroups = options.cgroups ?? null;
    this.readOnlyPaths = options.readOnlyPaths ?? [];
    this.systemArgs = options.view.mounts.flatMap(mountArgs);
  }

  /**
   * PATH inside: only what the sandbox shows. The host's entries that are system folders or
   * lie in a SHELL_READ_PATHS folder, in the host's order; then each SHELL_READ_PATHS
   * folder's bin/ and the system folders not named yet. A host entry such as
   * /root/.cargo/bin names a folder the command cannot see (and tells it where the bot lives).
   */
  commandPath(hostPath: string | undefined): string {
    const shown = (entry: string): boolean =>
      SYSTEM_PATH.includes(entry) || this.readOnlyPaths.some((folder) => isInside(entry, folder));
    const entries = (hostPath ?? '').split(':').filter((entry) => entry.startsWith('/') && shown(entry));
    const extra = [...this.readOnlyPaths.map((folder) => `${folder}/bin`), ...SYSTEM_PATH].filter((entry) =>
      existsSync(entry),
    );
    return [...new Set([...entries, ...extra])].join(':');
  }

  /** The command's environment with the sandbox's own PATH. */
  environment(env: Record<string, string>): Record<string, string> {
    return { ...env, PATH: this.commandPath(env.PATH) };
  }

  /** What the sandbox covers up: private entries of /etc and the bot's own paths under mounted folders. */
  get hidden(): readonly string[] {
    return this.options.view.hidden;
  }

  /** The bot's own paths, never visible inside (PATH entries under them are dropped). */
  get protectedPaths(): readonly string[] {
    return this.options.protectedPaths ?? [];
  }

  /** The argument list of `bwrap` for one command; fd 3 must be a pipe for --info-fd. */
  args(command: SandboxedCommand): string[] {
    const writable = command.roots.flatMap((root) => ['--bind', root, root]);
    return [
      '--unshare-all',
      ...(this.network ? ['--share-net'] : []),
      '--die-with-parent',
      '--new-session',
      // As root, bwrap keeps every capability unless told otherwise.
      '--cap-drop',
      'ALL',
      '--hostname',
      'sandbox',
      // /tmp first: a read-only folder (SHELL_READ_PATHS) or the workspace may lie under it.
      '--proc',
      '/proc',
      // bwrap's /dev is a writable tmpfs of half the machine's memory: read-only here, but
      // for a sized /dev/shm (writes to /dev/null and the like still work on a read-only mount).
      '--dev',
      '/dev',
      '--size',
      String(this.limits.tmpBytes),
      '--tmpfs',
      '/dev/shm',
      '--remount-ro',
      '/dev',
      '--size',
      String(this.limits.tmpBytes),
      '--tmpfs',
      '/tmp',
      ...this.systemArgs,
      ...writable,
      '--bind',
      command.cwdFile,
      SANDBOX_CWD_FILE,
      '--chdir',
      command.cwd,
      '--info-fd',
      '3',
      '--',
      'bash',
      '-c',
      `${this.limitsLine(command.maxFileBytes)}\n${command.script}`,
    ];
  }

  /**
   * bash's ulimit sets the rlimits prlimit would, without another binary in the sandbox.
   * bash counts -f and -v in KiB. Each is set hard and soft (-H -S is bash's default for a
   * value): the command cannot raise it again.
   */
  private limitsLine(maxFileBytes = this.limits.maxFileBytes): string {
    const kib = (bytes: number): number => Math.max(1, Math.floor(bytes / 1024));
    const fileBytes = Math.min(maxFileBytes, this.limits.maxFileBytes);
    return (
      `ulimit -u ${this.limits.maxProcesses} 2>/dev/null; ulimit -f ${kib(fileBytes)} 2>/dev/null; ` +
      `ulimit -v ${kib(this.limits.maxMemoryBytes)} 2>/dev/null`
    );
  }

  /**
   * Run `true` in a sandbox built exactly as a command's would be: it proves bwrap exists,
   * may create the namespaces, and can mount everything it will be asked to.
   */
  probe(workspaceRoot: string, cwdFile: string, env: Record<string, string>): Promise<ProbeResult> {
    const started = performance.now();
    const args = this.args({ roots: [workspaceRoot], cwd: workspaceRoot, cwdFile, script: 'test "$$" -lt 10' });
    args.splice(args.indexOf('--info-fd'), 2);
    return new Promise((resolve) => {
      const elapsed = (): number => performance.now() - started;
      let stderr = '';
      if (this.executable === null) {
        resolve({ ok: false, ms: elapsed(), reason: `${this.bwrapPath} was not found` });
        return;
      }
      // Started as a command's bwrap is: as the run-as user when the bot is root.
      const child = spawn(this.executable, args, {
        env: this.environment(env),
        stdio: ['ignore', 'ignore', 'pipe'],
        ...this.runAs,
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (stderr.length < 2_000) stderr += chunk.toString('utf8');
      });
      child.once('error', (error: NodeJS.ErrnoException) => {
        const reason =
          error.code === 'ENOENT'
            ? `${this.bwrapPath} was not found`
            : `${this.bwrapPath} could not start: ${error.message}`;
        resolve({ ok: false, ms: elapsed(), reason });
      });
      child.once('close', (code, signal) => {
        if (code === 0) resolve({ ok: true, ms: elapsed() });
        else {
          const said = stderr.trim().split('\n').slice(-2).join(' ');
          resolve({ ok: false, ms: elapsed(), reason: said || `${this.bwrapPath} exited with ${code ?? signal}` });
        }
      });
    });
  }
}

/** `name` as the shell would find it on `searchPath`; a name with a slash is taken as given. */
function findExecutable(name: string, searchPath: string | undefined): string | null {
  if (name.includes('/')) return name;
  for (const folder of (searchPath ?? '').split(':')) {
    if (!folder) continue;
    const candidate = path.join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
