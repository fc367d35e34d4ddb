// Arrangements for the shell sandbox suites: a throwaway "bot" laid out as a real one is
// (its folder with .env, a store, an MCP config, a home folder, and the workspace inside
// its folder, as the default ./workspace is), the sandbox the core would build for it, and
// a look at the host's process table that sees through PID namespaces.
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { botPaths, type BotPaths } from '../../src/sandbox/protected-paths.js';
import { decideShellSandbox } from '../../src/sandbox/shell-sandbox.js';
import { shellEnvironment } from '../../src/sandbox/shell-environment.js';
import type { BwrapSandbox } from '../../src/sandbox/bwrap-sandbox.js';
import type { SandboxLimits } from '../../src/sandbox/bwrap-sandbox.js';
import { decideRunAs } from '../../src/sandbox/run-as.js';

export const ENV_SECRET = 'envfile-secret-7f3a9c1e5b';
export const STORE_SECRET = 'store-secret-2d8e4b6a0c';

export interface FakeBot {
  /** The folder the bot runs in: .env, data/bot.sqlite, mcp.json, workspace/. */
  dir: string;
  home: string;
  workspace: string;
  paths: BotPaths;
  cleanup(): Promise<void>;
}

export async function fakeBot(): Promise<FakeBot> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'chat-agent-bot-')));
  // As a bot's folder usually is: others may pass through it (mkdtemp makes it 700), so
  // commands a root bot runs as another uid can reach the workspace (docs/security.md, "The shell sandbox").
  await chmod(base, 0o755);
  const dir = path.join(base, 'bot');
  const home = path.join(base, 'home');
  const workspace = path.join(dir, 'workspace');
  await mkdir(path.join(dir, 'data'), { recursive: true });
  await mkdir(workspace);
  // The workspace a root bot creates belongs to the uid its commands run as.
  const owner = decideRunAs(undefined).runAs;
  if (owner) await chown(workspace, owner.uid, owner.gid);
  await mkdir(path.join(home, '.ssh'), { recursive: true });
  await writeFile(path.join(dir, '.env'), `OPENAI_API_KEY=${ENV_SECRET}\n`);
  await writeFile(path.join(dir, 'data', 'bot.sqlite'), STORE_SECRET);
  await writeFile(path.join(dir, 'mcp.json'), '{"mcpServers":{}}');
  await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
  const paths = botPaths({
    storeUrl: 'sqlite://data/bot.sqlite',
    mcpConfig: './mcp.json',
    workingDir: dir,
    homeDir: home,
  });
  return { dir, home, workspace, paths, cleanup: () => rm(base, { recursive: true, force: true }) };
}

/** The sandbox as the core builds it (SHELL_SANDBOX=bwrap: it must work, or the test fails). */
export async function sandboxFor(
  bot: FakeBot,
  options: { network?: boolean; limits?: Partial<SandboxLimits>; readOnlyPaths?: string[] } = {},
): Promise<BwrapSandbox> {
  const decision = await decideShellSandbox({
    mode: 'bwrap',
    network: options.network ?? false,
    workspaceRoot: bot.workspace,
    botPaths: bot.paths,
    limits: options.limits,
    readOnlyPaths: options.readOnlyPaths,
    runAs: decideRunAs(undefined).runAs,
    env: shellEnvironment(process.env, { home: bot.workspace }),
  });
  if (decision.kind !== 'sandbox') throw new Error(`expected a sandbox, got ${decision.kind}: ${decision.message}`);
  return decision.sandbox;
}

/** Host pids whose command line contains `marker` (whatever namespace they run in). */
export function hostProcessesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (state.slice(state.lastIndexOf(')') + 2).startsWith('Z')) continue; // a zombie runs nothing
      if (cmdline.includes(marker)) found.push(Number(name));
    } catch {
      // gone between the listing and the read
    }
  }
  return found;
}

/**
 * A bwrap that fails as it does where unprivileged user namespaces are off (a container,
 * Ubuntu's AppArmor): a script in a temporary folder that `cleanups` removes.
 */
export async function brokenBwrap(cleanups: (() => Promise<void>)[]): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-broken-bwrap-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  // A root bot starts bwrap as its run-as uid, which must be able to enter the folder.
  await chmod(dir, 0o755);
  const script = path.join(dir, 'bwrap');
  await writeFile(script, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
  await chmod(script, 0o755);
  return script;
}
