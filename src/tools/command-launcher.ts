// How the shell starts one command line, and how it stops what that command started. Two
// kinds: on the host (SHELL_SANDBOX=off), and in a bubblewrap sandbox (src/sandbox/).
//
// On the host, each command is its own process group (spawned detached, so its pid is the
// group id), and stopping means signalling the group, not the pid: `sleep 100 & sleep 100`
// leaves a child that a kill of bash alone would orphan. What leaves the group (`setsid`)
// escapes it: only the sandbox's PID namespace catches that.
import { spawn, type ChildProcess } from 'node:child_process';

export interface LaunchRequest {
  /** The bash script: the command line with the shell's preamble. */
  script: string;
  /** Real absolute path to start in. */
  cwd: string;
  /** An existing host file the script's EXIT trap writes the final cwd to. */
  cwdFile: string;
  /** The environment for the command (already built from the allow-list). */
  env: Record<string, string>;
  /** Writable folders, real paths: the workspace, then granted folders. */
  roots: readonly string[];
  /** The largest file the command may write (what is left of the workspace's cap); the sandbox applies it. */
  maxFileBytes?: number;
}

export interface LaunchedCommand {
  /** stdout and stderr are pipes; 'exit' and 'close' say when it is over. */
  readonly child: ChildProcess;
  /** SIGINT to the command and what it started (the first step of a stop). */
  interrupt(): void;
  /** SIGKILL to everything the command started. */
  kill(): void;
  /** Whether anything the command started may still be running. */
  alive(): boolean;
  /** Processes the kernel ended because the command's memory cgroup was full (the sandbox's, where it has one). */
  oomKills?(): number;
}

/** What the session knows of a finished command, for the launcher's notes on its bounds. */
export interface FinishedCommandFacts {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  /** The file size limit it was given (what was left of the workspace's cap). */
  maxFileBytes?: number;
  oomKills?: number;
  /** Set when the workspace's own disk is full after it: what the disk holds, in bytes. */
  workspaceDiskFullAt?: number;
}

export interface CommandLauncher {
  /** The variable the script's EXIT trap writes the final cwd to, as the command sees it. */
  cwdFileInside(hostFile: string): string;
  launch(request: LaunchRequest): LaunchedCommand;
  /** Whether background jobs (`server &`) outlive the command that started them. */
  readonly keepsBackgroundJobs: boolean;
  /** Which of the launcher's bounds a finished command ran into, in words (the sandbox's; none on the host). */
  boundNotes?(finished: FinishedCommandFacts): string[];
}

export class HostLauncher implements CommandLauncher {
  readonly keepsBackgroundJobs = true;

  cwdFileInside(hostFile: string): string {
    return hostFile;
  }

  launch(request: LaunchRequest): LaunchedCommand {
    const child = spawn('bash', ['-c', request.script], {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = child.pid ?? -1;
    return {
      child,
      interrupt: () => signalGroup(pgid, 'SIGINT'),
      kill: () => signalGroup(pgid, 'SIGKILL'),
      alive: () => groupAlive(pgid),
    };
  }
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (pgid <= 0) return;
  try {
    // A negative pid addresses the whole process group.
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone, which is the goal.
  }
}

/**
 * Whether any process of the group still exists. Zombies count (they are not reaped where
 * PID 1 does not reap orphans), which only means a redundant SIGKILL at the end of a grace.
 */
function groupAlive(pgid: number): boolean {
  if (pgid <= 0) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
