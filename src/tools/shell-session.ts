// The session's shell: runs one command line at a time with `bash -c`, in a working
// directory that persists from one command to the next, and can stop any command at once.
//
// Where a command runs is the launcher's business (command-launcher.ts): in a bubblewrap
// sandbox by default, or on the host. This file owns what is the same for both: a stop sends
// SIGINT, then SIGKILL after a grace if anything the command started is still alive; the
// caller gets its answer at once with the output so far, and the escalation finishes in the
// background (dispose awaits it).
//
// The cwd survives between commands through an EXIT trap that writes `pwd -P` to a file; it
// is only accepted if it is inside the workspace or a granted folder (shell-cwd.ts). On the host,
// background jobs (`server &`) keep running after their command returns; their output is
// drained and discarded, and dispose() stops them. In the sandbox they end with the command.
//
// With a workspace cap (workspace-usage.ts, command-cap.ts), a command is refused while the
// workspace is over it (one that only deletes runs, and is never ended), may write no file
// larger than what is left, and is ended if it takes the workspace past the cap while it runs,
// unless the folder's own disk holds the cap; the launcher says which bound it ran into.
//
// What the command printed reaches the model cleaned (command-output.ts): escape sequences
// dropped, control characters made visible, binary summarised in a line and a note.
import { rm } from 'node:fs/promises';
import { sleep } from '../engine/index.js';
import { shellEnvironment } from '../sandbox/shell-environment.js';
import type { WorkspaceDisk } from '../sandbox/workspace-disks.js';
import { HostLauncher, type CommandLauncher, type LaunchedCommand } from './command-launcher.js';
import { CommandOutput } from './command-output.js';
import { formatCount } from './output.js';
import { createCwdFile, ShellWorkingDirectory } from './shell-cwd.js';
import type { Workspace } from './workspace.js';
import { commandCap, type CommandCap } from './command-cap.js';
import type { WorkspaceQuota } from './workspace-usage.js';

export const DEFAULT_SHELL_TIMEOUT_MS = 120_000;
/** Between SIGINT and SIGKILL: long enough for a test runner to print its summary. */
const DEFAULT_KILL_GRACE_MS = 2_000;
/**
 * After a stop, how long to wait for the command to exit before answering anyway. Under
 * the engine's 50 ms grace, so the partial output reaches the model instead of "did not
 * stop in time".
 */
const STOP_SETTLE_MS = 20;
/** After the shell exits, output still in the pipe is read for this long (pipes held by a
 * background job never close, so `close` alone would wait forever). */
const DRAIN_AFTER_EXIT_MS = 50;
const GROUP_POLL_MS = 25;
/** How often a running command's workspace is measured against its cap. */
const DEFAULT_QUOTA_CHECK_MS = 2_000;

export interface ShellSessionOptions {
  maxOutputChars: number;
  killGraceMs?: number;
  /** The environment commands see. Default: the allow-list of shell-environment.ts. */
  env?: Record<string, string>;
  /** Where commands run. Default: on the host, unconfined. */
  launcher?: CommandLauncher;
  /** The workspace's cap on disk (WORKSPACE_MAX_MB): checked before a command and while it runs. */
  quota?: WorkspaceQuota;
  /** How often a running command's workspace is measured (default 2 s). */
  quotaCheckMs?: number;
  /** The workspace's own disk (src/sandbox/workspace-disks.ts), where it gets one: made at the first command. */
  disk?: WorkspaceDisk;
}

export interface ShellRunOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** Variables added to (or replacing some of) the session's environment for this command. */
  extraEnv?: Readonly<Record<string, string>>;
}

export interface ShellRunResult {
  /** Null when the command did not exit by itself in time (stopped, or still dying). */
  exitCode: number | null;
  /** The signal that ended the shell, if one did. */
  signal: NodeJS.Signals | null;
  /** The working directory after the command, relative to the workspace root. */
  cwd: string;
  /** stdout and stderr interleaved, cleaned (command-output.ts), middle-trimmed to the output budget. */
  output: string;
  timedOut: boolean;
  interrupted: boolean;
  /** Things the model should know: a reset cwd, a kill. */
  notes: string[];
}

interface RunningCommand {
  launched: LaunchedCommand;
  /** The file size limit it was given (what was left of the workspace's cap). */
  maxFileBytes?: number;
  /** What the workspace's cap did to it (command-cap.ts). */
  cap: CommandCap;
  /** Settles when the shell has exited (or could not start). */
  gone: Promise<void>;
  /** Set when a stop was requested: the reason, for the result. */
  stop?: StopReason;
  requestStop(reason: StopReason): void;
}

/** `workspace-full`: the workspace passed its cap while the command ran. */
type StopReason = 'interrupted' | 'timeout' | 'workspace-full';

export class ShellSession {
  private readonly cwd: ShellWorkingDirectory;
  private readonly running = new Set<RunningCommand>();
  /** Finished commands that left something running (background jobs, on the host). */
  private readonly lingering = new Set<LaunchedCommand>();
  private readonly escalations = new Set<Promise<void>>();
  private readonly disposeController = new AbortController();
  private readonly maxOutputChars: number;
  private readonly killGraceMs: number;
  private readonly env: Record<string, string>;
  private readonly launcher: CommandLauncher;
  private readonly quota: WorkspaceQuota | undefined;
  private readonly quotaCheckMs: number;
  private readonly disk: WorkspaceDisk | undefined;

  constructor(
    private readonly workspace: Workspace,
    options: ShellSessionOptions,
  ) {
    this.cwd = new ShellWorkingDirectory(workspace);
    this.maxOutputChars = options.maxOutputChars;
    this.killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.env = options.env ?? shellEnvironment(process.env, { home: workspace.root });
    this.launcher = options.launcher ?? new HostLauncher();
    this.quota = options.quota;
    this.quotaCheckMs = options.quotaCheckMs ?? DEFAULT_QUOTA_CHECK_MS;
    this.disk = options.disk;
  }

  /** Whether background jobs outlive the command that started them (not in the sandbox). */
  get keepsBackgroundJobs(): boolean {
    return this.launcher.keepsBackgroundJobs;
  }

  get workingDirectory(): string {
    return this.cwd.shown;
  }

  /** The folders commands may write: the workspace, then granted folders (real paths). */
  get roots(): readonly string[] {
    return this.workspace.roots;
  }

  /**
   * Run one command line. Resolves once it exits or is stopped: a failure to start, a
   * timeout and an interruption are all answers, not errors. `extraEnv` is added to the
   * session's environment for this command only (an allow-listed command's hardened git).
   */
  async run(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
    if (this.disposeController.signal.aborted) throw new Error('the shell session has ended');
    const notes: string[] = [];
    await this.cwd.check(notes);
    if (options.signal.aborted) {
      notes.push('not started: the turn was stopped');
      return {
        exitCode: null,
        signal: null,
        cwd: this.workingDirectory,
        output: '',
        timedOut: false,
        interrupted: true,
        notes,
      };
    }

    // A full workspace takes no command (but `rm`, which needs none of its space, would be
    // refused too: the words say to delete files, and a command that only deletes is let through).
    const cap = await commandCap(command, this.quota, this.disk);
    if ('refused' in cap) {
      notes.push(`not started: ${cap.refused}`);
      return {
        exitCode: null,
        signal: null,
        cwd: this.workingDirectory,
        output: '',
        timedOut: false,
        interrupted: false,
        notes,
      };
    }
    const { maxFileBytes } = cap;

    const cwdFile = await createCwdFile();
    // `exec 2>&1` merges stderr into stdout inside bash, so the two arrive in the order
    // they were written (two pipes would only interleave by arrival). bash runs a -c script
    // line by line, so this prefix is in force even when the command has a syntax error.
    const script = `trap 'pwd -P >"$CHAT_AGENT_CWD_FILE" 2>/dev/null' EXIT; exec 2>&1\n${command}`;
    const launched = this.launcher.launch({
      script,
      cwd: this.cwd.realPath,
      cwdFile,
      env: { ...this.env, ...options.extraEnv, CHAT_AGENT_CWD_FILE: this.launcher.cwdFileInside(cwdFile) },
      roots: this.workspace.roots,
      maxFileBytes,
    });
    const { child } = launched;
    const output = new CommandOutput(this.maxOutputChars);

    return new Promise<ShellRunResult>((resolve, reject) => {
      let finished = false;
      let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
      const timers: NodeJS.Timeout[] = [];
      const later = (ms: number, action: () => void): void => {
        timers.push(setTimeout(action, ms));
      };

      const collect = (stream: NodeJS.ReadableStream | null): void => {
        if (!stream) return;
        const pipe = output.pipe();
        stream.on('data', (chunk: Buffer) => {
          if (!finished) pipe.write(chunk);
        });
        stream.on('end', () => {
          if (!finished) pipe.end();
        });
      };
      collect(child.stdout);
      collect(child.stderr);

      const running: RunningCommand = {
        launched,
        maxFileBytes,
        cap,
        gone: new Promise<void>((resolveGone) => {
          child.once('exit', () => resolveGone());
          child.once('error', () => resolveGone());
        }),
        requestStop: (reason) => {
          if (running.stop || finished) return;
          running.stop = reason;
          if (reason === 'workspace-full') {
            // Filling the disk is not something to wait on: everything it started ends now.
            launched.kill();
            later(this.killGraceMs + 1_000, finish);
            return;
          }
          this.stopCommand(launched);
          // A stop by the user answers now; a timeout may wait for the kill to land.
          if (reason === 'interrupted') later(STOP_SETTLE_MS, finish);
          else later(this.killGraceMs + 1_000, finish);
        },
      };
      const onAbort = (): void => running.requestStop('interrupted');

      const finish = (): void => {
        if (finished) return;
        finished = true;
        for (const timer of timers) clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        this.running.delete(running);
        this.settle(running, exited, output, cwdFile, notes).then(resolve, reject);
      };

      child.once('error', (error) => {
        output.note(`could not start the command: ${error.message}\n`);
        finish();
      });
      child.once('exit', (code, signal) => {
        exited = { code, signal };
        if (finished) {
          // Answered already (a stop); the trap may have written the cwd file since.
          void rm(cwdFile, { force: true }).catch(() => undefined);
          return;
        }
        later(running.stop ? 5 : DRAIN_AFTER_EXIT_MS, finish);
      });
      child.once('close', () => {
        if (!finished) finish();
        else if (!launched.alive()) this.lingering.delete(launched);
      });

      if (child.pid === undefined) return; // spawn failed: 'error' follows
      this.running.add(running);
      options.signal.addEventListener('abort', onAbort, { once: true });
      later(options.timeoutMs, () => running.requestStop('timeout'));
      cap.watch(
        this.quotaCheckMs,
        () => running.requestStop('workspace-full'),
        () => finished,
        later,
      );
    });
  }

  /** Stop every running command (SIGINT to its group, SIGKILL after the grace). */
  interrupt(): void {
    for (const running of this.running) running.requestStop('interrupted');
  }

  /** End the session: kill what still runs, background jobs included, and wait for it. */
  async dispose(): Promise<void> {
    this.disposeController.abort();
    const running = [...this.running];
    for (const command of running) command.launched.kill();
    for (const launched of this.lingering) launched.kill();
    this.lingering.clear();
    // SIGKILL cannot be ignored, but a process stuck in the kernel can delay its exit: bounded.
    const waited = new AbortController();
    await Promise.race([Promise.all(running.map((command) => command.gone)), sleep(this.killGraceMs, waited.signal)]);
    waited.abort(); // so the bound's timer does not hold the process open

    await Promise.all([...this.escalations]);
  }

  private async settle(
    running: RunningCommand,
    exited: { code: number | null; signal: NodeJS.Signals | null } | null,
    output: CommandOutput,
    cwdFile: string,
    notes: string[],
  ): Promise<ShellRunResult> {
    if (exited) {
      await this.cwd.adopt(cwdFile, notes);
      // `pwd -P` prints nothing in a deleted directory: check the cwd we kept still exists.
      await this.cwd.check(notes);
      if (!running.stop && running.launched.alive()) this.lingering.add(running.launched);
    }
    await rm(cwdFile, { force: true }).catch(() => undefined);
    const collected = output.finish();
    if (collected.binaryBytes > 0) {
      notes.push(
        `${formatCount(collected.binaryBytes)} bytes of binary output (not shown); pipe it through \`xxd | head\` or \`file -\` to inspect it`,
      );
    }
    if (running.stop === 'workspace-full' && this.quota) notes.push(this.quota.endedText());
    if (exited && !running.stop && this.launcher.boundNotes) {
      notes.push(
        ...this.launcher.boundNotes({
          exitCode: exited.code,
          signal: exited.signal,
          output: collected.text,
          maxFileBytes: running.maxFileBytes,
          oomKills: running.launched.oomKills?.(),
          workspaceDiskFullAt: running.cap.diskFullAt(),
        }),
      );
    }
    if (running.stop === 'timeout') {
      notes.push(`timed out: the command was stopped (SIGINT, then SIGKILL after ${this.killGraceMs / 1000} s)`);
    } else if (running.stop === 'interrupted') {
      notes.push(
        `interrupted by the user: the command was sent SIGINT${exited ? '' : ` and is killed if still running after ${this.killGraceMs / 1000} s`}`,
      );
    }
    return {
      exitCode: exited?.code ?? null,
      signal: exited?.signal ?? null,
      cwd: this.workingDirectory,
      output: collected.text,
      timedOut: running.stop === 'timeout',
      interrupted: running.stop === 'interrupted',
      notes,
    };
  }

  /** SIGINT now; if anything the command started is still alive after the grace, SIGKILL. */
  private stopCommand(launched: LaunchedCommand): void {
    launched.interrupt();
    const escalation = (async () => {
      const deadline = Date.now() + this.killGraceMs;
      while (Date.now() < deadline && launched.alive() && !this.disposeController.signal.aborted) {
        await sleep(GROUP_POLL_MS, this.disposeController.signal);
      }
      if (launched.alive()) launched.kill();
    })();
    this.escalations.add(escalation);
    void escalation.finally(() => this.escalations.delete(escalation));
  }
}
