// The bubblewrap sandbox every shell command runs in: how one command's `bwrap` line is
// built, and the start-up probe that decides whether it can run here at all.
//
// Per command, a fresh set of namespaces: PID (no process of the bot or of another session
// is visible; /proc is the sandbox's own; when the command ends, everything it started ends
// with it, `setsid` included), IPC, UTS, cgroup, user where unprivileged, and network unless
// SHELL_NETWORK=on. The file system is empty but for: the system read-only (system-mounts.ts),
// /dev's basics, a private /tmp, and, writable, the session's workspace and granted folders,
// each at its real path so a path means the same to the shell and to the file tools.
//
// `--new-session` makes the sandbox's PID 1 (bwrap's reaper) lead a new session and process
// group, which the command inherits. A stop signals that group by its host pid: the command
// gets SIGINT while bwrap's outer process, in our own group, does not (were it to die first,
// --die-with-parent would SIGKILL the command before it could print a summary). PID 1 itself
// ignores SIGINT: the kernel delivers to a namespace's init only signals it handles.
import { spawn } from 'node:child_process';
import { mountArgs, type SystemView } from './system-mounts.js';

/** Where the command's final working directory is written, inside the sandbox. */
export const SANDBOX_CWD_FILE = '/tmp/.chat-agent-cwd';

export interface SandboxLimits {
  /** RLIMIT_NPROC: processes of the user. The kernel exempts uid 0 outside a user namespace. */
  maxProcesses: number;
  /** RLIMIT_FSIZE: the largest file a command may write, in bytes. */
  maxFileBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { maxProcesses: 1024, maxFileBytes: 1024 * 1024 * 1024 };

export interface BwrapSandboxOptions {
  view: SystemView;
  network: boolean;
  limits?: SandboxLimits;
  /** The bwrap executable (default: `bwrap` on PATH). */
  bwrapPath?: string;
  /** The bot's own paths (protected-paths.ts). */
  protectedPaths?: readonly string[];
}

export interface SandboxedCommand {
  /** Writable folders, real paths: the workspace, then granted folders. */
  roots: readonly string[];
  cwd: string;
  /** The host file the command's final cwd is written to (bound at SANDBOX_CWD_FILE). */
  cwdFile: string;
  script: string;
}

export type ProbeResult = { ok: true; ms: number } | { ok: false; ms: number; reason: string };

export class BwrapSandbox {
  readonly network: boolean;
  readonly limits: SandboxLimits;
  readonly bwrapPath: string;
  private readonly systemArgs: string[];

  constructor(private readonly options: BwrapSandboxOptions) {
    this.network = options.network;
    this.limits = options.limits ?? DEFAULT_SANDBOX_LIMITS;
    this.bwrapPath = options.bwrapPath ?? 'bwrap';
    this.systemArgs = options.view.mounts.flatMap(mountArgs);
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
      '--cap-drop', 'ALL',
      '--hostname', 'sandbox',
      // /tmp first: a read-only folder (SHELL_READ_PATHS) or the workspace may lie under it.
      '--proc', '/proc',
      '--dev', '/dev',
      '--tmpfs', '/tmp',
      ...this.systemArgs,
      ...writable,
      '--bind', command.cwdFile, SANDBOX_CWD_FILE,
      '--chdir', command.cwd,
      '--info-fd', '3',
      '--',
      'bash', '-c', `${this.limitsLine()}\n${command.script}`,
    ];
  }

  /** bash's ulimit sets the rlimits prlimit would, without another binary in the sandbox. */
  private limitsLine(): string {
    const blocks = Math.max(1, Math.floor(this.limits.maxFileBytes / 1024)); // bash counts -f in KiB
    return `ulimit -u ${this.limits.maxProcesses} 2>/dev/null; ulimit -f ${blocks} 2>/dev/null`;
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
      const child = spawn(this.bwrapPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr.on('data', (chunk: Buffer) => {
        if (stderr.length < 2_000) stderr += chunk.toString('utf8');
      });
      child.once('error', (error: NodeJS.ErrnoException) => {
        const reason = error.code === 'ENOENT' ? `${this.bwrapPath} was not found` : `${this.bwrapPath} could not start: ${error.message}`;
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
