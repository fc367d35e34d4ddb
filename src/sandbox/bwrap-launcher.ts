// Starting one shell command inside a fresh bubblewrap sandbox, and stopping it.
//
// Stopping: SIGINT goes to the sandbox's process group (its PID 1 leads it, see
// bwrap-sandbox.ts), so the command hears it first; SIGKILL goes to bwrap's outer process,
// whose death takes PID 1 with it (--die-with-parent), and the kernel then kills every
// process left in the PID namespace, whatever session or group it moved to. The same
// happens when the command simply exits: nothing it started survives it.
import { spawn } from 'node:child_process';
import { chownSync, existsSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import {
  signalGroup,
  type CommandLauncher,
  type FinishedCommandFacts,
  type LaunchedCommand,
  type LaunchRequest,
} from '../tools/command-launcher.js';
import { boundNotes } from './bound-notes.js';
import { SANDBOX_CWD_FILE, type BwrapSandbox } from './bwrap-sandbox.js';
import { unreachableNote } from './run-as.js';

/**
 * Waits on fd 4 until the bot has put this shell in the command's cgroup, then becomes bwrap
 * (`$0`), keeping its pid: nothing of the command runs outside the cgroup. bash, not sh: dash
 * drops variables whose names are not identifiers, and the hardened git of an allow-listed
 * command is one (`BASH_FUNC_git%%`, hardened-git.ts); bash passes it on.
 */
const GATE_SCRIPT = 'read -r go <&4 || exit 125; exec 4<&-; exec "$0" "$@"';

export class BwrapLauncher implements CommandLauncher {
  readonly keepsBackgroundJobs = false;

  constructor(private readonly sandbox: BwrapSandbox) {}

  cwdFileInside(): string {
    return SANDBOX_CWD_FILE;
  }

  boundNotes(finished: FinishedCommandFacts): string[] {
    const limits = this.sandbox.limits;
    // A root bot's bwrap that could not reach the workspace says so in its own terms: in words here.
    const unreachable = this.sandbox.runAs ? unreachableNote(finished.output, this.sandbox.runAs) : null;
    return [
      ...(unreachable ? [unreachable] : []),
      ...boundNotes(limits, {
        ...finished,
        maxFileBytes: Math.min(finished.maxFileBytes ?? limits.maxFileBytes, limits.maxFileBytes),
      }),
    ];
  }

  launch(request: LaunchRequest): LaunchedCommand {
    // A granted folder deleted since would make bwrap refuse to start: it is simply not mounted.
    const roots = request.roots.filter((root, index) => index === 0 || existsSync(root));
    const args = this.sandbox.args({
      roots,
      cwd: request.cwd,
      cwdFile: request.cwdFile,
      script: request.script,
      maxFileBytes: request.maxFileBytes,
    });
    const runAs = this.sandbox.runAs;
    // The command's EXIT trap writes its cwd there, as the run-as user.
    if (runAs) chownSync(request.cwdFile, runAs.uid, runAs.gid);
    // bwrap itself gets the command's clean environment: inside, /proc/1/environ is bwrap's.
    // As root, bwrap is started as the run-as user (run-as.ts).
    const bwrap = this.sandbox.executable ?? this.sandbox.bwrapPath;
    const cgroup = this.sandbox.cgroups?.create() ?? null;
    const options = { env: this.sandbox.environment(request.env), detached: true, ...runAs } as const;
    // In a memory cgroup, bwrap starts only once the shell that will exec it is inside (command-cgroup.ts).
    const child = cgroup
      ? spawn('bash', ['-c', GATE_SCRIPT, bwrap, ...args], {
          ...options,
          stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
        })
      : spawn(bwrap, args, { ...options, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    if (cgroup) {
      // Not let in (the kernel refused): the command still has its cap per process.
      if (child.pid !== undefined) cgroup.add(child.pid);
      const gate = child.stdio[4] as Writable | null;
      gate?.on('error', () => undefined);
      gate?.end('go\n');
    }
    const outerGroup = child.pid ?? -1;
    let sandboxGroup: number | null = null;
    let exited = false;
    let oomKills = 0;
    const ended = (): void => {
      if (exited) return;
      exited = true;
      if (!cgroup) return;
      // Read before the cgroup goes: the kills happened while the command ran.
      oomKills = cgroup.oomKills();
      void cgroup.remove();
    };
    child.once('exit', ended);
    child.once('error', ended);
    readInfo(child.stdio[3] as Readable | null, (pid) => (sandboxGroup = pid));

    const killAll = (): void => {
      // The outer process first: its death tears the namespace down.
      signalGroup(outerGroup, 'SIGKILL');
      if (sandboxGroup !== null && !exited) signalGroup(sandboxGroup, 'SIGKILL');
    };
    return {
      child,
      interrupt: () => {
        if (exited) return;
        // Before bwrap reports its PID 1, the command has not started: end it all.
        if (sandboxGroup === null) killAll();
        else signalGroup(sandboxGroup, 'SIGINT');
      },
      kill: killAll,
      alive: () => !exited,
      oomKills: () => oomKills,
    };
  }
}

/** bwrap's --info-fd writes `{"child-pid": N, …}` once the sandbox's PID 1 exists. */
function readInfo(stream: Readable | null, found: (pid: number) => void): void {
  if (!stream) return;
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    if (text.length > 4_096) return;
    text += chunk;
    const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
    if (match) found(Number(match[1]));
  });
  stream.on('error', () => undefined);
}
