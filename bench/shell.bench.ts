// What the shell sandbox costs: the time from asking run_shell for `true` to its answer,
// on the host and in the bubblewrap sandbox (fresh namespaces, mounts and reaper per
// command), and the start-up probe. Goal: the sandbox adds at most 20 ms at p50. As the core
// runs it: as the run-as uid when the bench runs as root, with the workspace's cap measured
// before each command (WORKSPACE_MAX_MB's default).
import { chmod, chown, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { botPaths } from '../src/sandbox/protected-paths.js';
import { decideShellSandbox } from '../src/sandbox/shell-sandbox.js';
import { shellEnvironment } from '../src/sandbox/shell-environment.js';
import { decideRunAs } from '../src/sandbox/run-as.js';
import { createBuiltinTools, type ShellSetup } from '../src/tools/index.js';
import { elapsedSince, median, percentile } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const WARMUP = 10;
const RUNS = 200;
const WORKSPACE_MAX_BYTES = 2048 * 1024 * 1024;

async function spawnTimes(workspace: string, shell: ShellSetup): Promise<number[]> {
  const builtin = createBuiltinTools({ workspaceDir: workspace, shell, workspaceMaxBytes: WORKSPACE_MAX_BYTES });
  const runShell = builtin.tools.find((tool) => tool.name === 'run_shell')!;
  const context = { signal: new AbortController().signal, toolCallId: 'bench', sessionId: 'bench' };
  const samples: number[] = [];
  try {
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const started = performance.now();
      const result = (await runShell.execute({ command: 'true' }, context)) as { exitCode: number };
      if (result.exitCode !== 0) throw new Error(`true exited with ${result.exitCode}`);
      if (i >= WARMUP) samples.push(elapsedSince(started));
    }
  } finally {
    await builtin.dispose();
  }
  return samples;
}

export const shellSuite: BenchSuite = {
  name: 'shell',
  async run(): Promise<BenchRow[]> {
    const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'chat-agent-bench-shell-')));
    const workspace = path.join(base, 'workspace');
    await mkdir(workspace);
    const runAs = decideRunAs(undefined);
    if (runAs.runAs) {
      await chmod(base, 0o755);
      await chown(workspace, runAs.runAs.uid, runAs.runAs.gid);
    }
    try {
      const paths = botPaths({ storeUrl: 'sqlite://data/bot.sqlite', mcpConfig: './mcp.json' });
      const probes: number[] = [];
      let sandbox: ShellSetup | null = null;
      for (let i = 0; i < 5; i++) {
        const decision = await decideShellSandbox({
          mode: 'bwrap',
          network: false,
          workspaceRoot: workspace,
          botPaths: paths,
          runAs: runAs.runAs,
          commandUid: runAs.uid,
          env: shellEnvironment(process.env, { home: workspace }),
        });
        if (decision.kind !== 'sandbox') throw new Error(decision.message);
        probes.push(decision.probeMs);
        sandbox = { kind: 'sandbox', sandbox: decision.sandbox };
      }
      const host = await spawnTimes(workspace, { kind: 'host' });
      const sandboxed = await spawnTimes(workspace, sandbox!);
      const note = `run_shell \`true\`, ${RUNS} runs after ${WARMUP} warm-up`;
      return [
        { key: 'shell.spawn_ms_p50.unsandboxed', value: median(host), unit: 'ms', note },
        { key: 'shell.spawn_ms_p50.sandboxed', value: median(sandboxed), unit: 'ms', note },
        { key: 'shell.spawn_ms_p99.unsandboxed', value: percentile(host, 99), unit: 'ms', note },
        { key: 'shell.spawn_ms_p99.sandboxed', value: percentile(sandboxed, 99), unit: 'ms', note },
        {
          key: 'shell.sandbox_added_ms_p50',
          value: median(sandboxed) - median(host),
          unit: 'ms',
          note: 'goal: at most 20 ms',
        },
        {
          key: 'shell.probe_ms_p50',
          value: median(probes),
          unit: 'ms',
          note: 'start-up probe (system view + bwrap true), 5 runs',
        },
      ];
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  },
};
