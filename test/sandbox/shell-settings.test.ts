// The shell's start-up settings (SHELL_ENV, SHELL_READ_PATHS), the environment's PATH, and
// what the sandbox takes away besides files: capabilities and the kernel's knobs.
import { chmod, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openCommandCgroups } from '../../src/sandbox/command-cgroup.js';
import { decideShellSandbox } from '../../src/sandbox/shell-sandbox.js';
import { shellEnvironment } from '../../src/sandbox/shell-environment.js';
import { decideRunAs } from '../../src/sandbox/run-as.js';
import { prepareShell } from '../../src/sandbox/shell-startup.js';
import { createBuiltinTools } from '../../src/tools/index.js';
import { fakeBot, type FakeBot } from '../support/sandbox-kit.js';

let bot: FakeBot;
beforeAll(async () => {
  bot = await fakeBot();
});
afterAll(async () => {
  await bot.cleanup();
});

const configFor = (env: Record<string, string>) =>
  loadConfig({
    STORE_URL: `sqlite://${bot.dir}/data/bot.sqlite`,
    MCP_CONFIG: path.join(bot.dir, 'mcp.json'),
    WORKSPACE_DIR: bot.workspace,
    ...env,
  });

async function run(command: string, readOnlyPaths: string[] = []): Promise<string> {
  const decision = await decideShellSandbox({
    mode: 'bwrap',
    network: false,
    workspaceRoot: bot.workspace,
    botPaths: bot.paths,
    readOnlyPaths,
    runAs: decideRunAs(undefined).runAs,
    env: { PATH: '/usr/bin:/bin' },
  });
  if (decision.kind !== 'sandbox') throw new Error(decision.message);
  const builtin = createBuiltinTools({
    workspaceDir: bot.workspace,
    shell: { kind: 'sandbox', sandbox: decision.sandbox },
  });
  try {
    const runShell = builtin.tools.find((tool) => tool.name === 'run_shell')!;
    const result = (await runShell.execute(
      { command },
      { signal: new AbortController().signal, toolCallId: 'c', sessionId: 's' },
    )) as { output: string };
    return result.output;
  } finally {
    await builtin.dispose();
  }
}

describe('SHELL_READ_PATHS', () => {
  it('shows a toolchain folder read-only', async () => {
    const toolchain = path.join(path.dirname(bot.dir), 'toolchain');
    await mkdir(path.join(toolchain, 'bin'), { recursive: true });
    await writeFile(path.join(toolchain, 'bin', 'tool'), '#!/bin/sh\necho tool-ran\n', { mode: 0o755 });
    expect(await run(`${toolchain}/bin/tool; touch ${toolchain}/x 2>&1`, [toolchain])).toMatch(
      /^tool-ran\n.*Read-only file system/s,
    );
    expect(await run(`${toolchain}/bin/tool 2>&1`)).toMatch(/No such file or directory/);
  });

  it("refuses relative paths, the home folder or what holds it, and the bot's own files, all in one message", async () => {
    const attempt = prepareShell(
      configFor({
        SHELL_READ_PATHS: `relative/bin, ${bot.home}, ${path.dirname(bot.home)}, ${bot.dir}/data, /no/such/folder`,
      }),
      { workingDir: bot.dir, homeDir: bot.home },
    );
    await expect(attempt).rejects.toThrow(
      /SHELL_READ_PATHS: relative\/bin: give an absolute path; .*: it holds the home folder.*: it holds the home folder.*: it overlaps the folder the bot runs in.*\/no\/such\/folder: does not exist/,
    );
  });

  it('a folder inside the home folder (a toolchain such as ~/.nvm) is accepted', async () => {
    const nvm = path.join(bot.home, '.nvm');
    await mkdir(nvm, { recursive: true });
    const shell = await prepareShell(configFor({ SHELL_SANDBOX: 'bwrap', SHELL_READ_PATHS: nvm }), {
      workingDir: bot.dir,
      homeDir: bot.home,
    });
    expect(shell.shell.kind).toBe('sandbox');
  });
});

describe("the commands' PATH", () => {
  it("drops entries inside the bot's own folders (a project's node_modules/.bin)", () => {
    const env = shellEnvironment(
      { PATH: `${bot.dir}/node_modules/.bin:/usr/local/bin:${bot.home}/.cargo/bin:/usr/bin` },
      { home: bot.workspace, hide: [bot.dir, bot.home] },
    );
    expect(env.PATH).toBe('/usr/local/bin:/usr/bin');
  });
});

describe('no privileges inside', () => {
  it("no capabilities, the kernel's knobs read-only, no mounting", async () => {
    const output = await run(
      'grep CapEff /proc/self/status; echo h > /proc/sysrq-trigger 2>&1 || echo sysrq-refused; mount -t tmpfs none /tmp 2>&1 || echo mount-refused',
    );
    expect(output).toMatch(/CapEff:\s+0+\n/);
    expect(output).toContain('sysrq-refused');
    expect(output).toContain('mount-refused');
  });
});

describe('SHELL_RUN_AS and the bounds at start-up', () => {
  const ROOT = process.getuid?.() === 0;
  const MEMORY = openCommandCgroups(64 * 1024 * 1024, { dryRun: true });

  it('the start-up line says which uid commands run as and every bound, from the settings', async () => {
    const shell = await prepareShell(
      configFor({ SHELL_SANDBOX: 'bwrap', SHELL_MAX_MEMORY_MB: '3072', SHELL_TMP_MB: '128', WORKSPACE_MAX_MB: '500' }),
      { workingDir: bot.dir, homeDir: bot.home },
    );
    expect(shell.shell.kind).toBe('sandbox');
    expect(shell.message).toContain(
      ROOT ? 'as uid 65534 (SHELL_RUN_AS; the bot is root)' : `as uid ${process.getuid?.()} (the bot's own)`,
    );
    // Where the bot may make memory cgroups (a root bot here and in CI: cgroup v1), the cap holds for the command as a whole.
    const memory = {
      'cgroup v1':
        '3,072 MB of memory for all its processes together \\(a memory cgroup per command, cgroup v1\\) and of address space for each',
      'cgroup v2':
        '3,072 MB of memory for all its processes together \\(a memory cgroup per command, cgroup v2, delegated to the bot\\) and of address space for each',
      'per process':
        '3,072 MB of memory per process, not for the command as a whole \\(no memory cgroup per command: .*\\)',
    }[MEMORY.kind];
    expect(shell.message).toMatch(
      new RegExp(
        `bounds per command: 1,024 processes, ${memory}, 128 MB /tmp, 1,024 MB per file, 500 MB per workspace`,
      ),
    );
  });

  it('a workspace the start creates belongs to the run-as uid; one from before that does not is named, with the chown that hands it over', async () => {
    const fresh = path.join(path.dirname(bot.dir), 'fresh-workspace');
    const config = (dir: string) => configFor({ SHELL_SANDBOX: 'bwrap', WORKSPACE_DIR: dir });
    const created = await prepareShell(config(fresh), { workingDir: bot.dir, homeDir: bot.home });
    expect((await stat(fresh)).uid).toBe(ROOT ? 65534 : process.getuid?.());
    expect(created.warn).toBe(false);
    if (ROOT) {
      const old = path.join(path.dirname(bot.dir), 'old-workspace');
      await mkdir(old);
      const inherited = await prepareShell(config(old), { workingDir: bot.dir, homeDir: bot.home });
      expect(inherited.warn).toBe(true);
      expect(inherited.message).toContain(
        `belongs to uid 0, so commands (uid 65534) cannot write there: hand it over with chown -R 65534:65534 ${old}`,
      );
    }
  });

  it('a workspace the run-as uid cannot reach is refused at start with the folder that blocks it', async () => {
    const closed = path.join(path.dirname(bot.dir), 'closed');
    await mkdir(path.join(closed, 'workspace'), { recursive: true });
    await chmod(closed, 0o700);
    try {
      const attempt = prepareShell(
        configFor({ SHELL_SANDBOX: 'bwrap', WORKSPACE_DIR: path.join(closed, 'workspace') }),
        { workingDir: bot.dir, homeDir: bot.home },
      );
      if (ROOT)
        await expect(attempt).rejects.toThrow(
          /WORKSPACE_DIR \(.*\) cannot be reached by the user commands run as: .*closed \(mode 700, owner uid 0\) may not be entered by uid 65534/,
        );
      else expect((await attempt).shell.kind).toBe('sandbox');
    } finally {
      await rm(closed, { recursive: true, force: true });
    }
  });

  it('SHELL_RUN_AS takes uid:gid and never 0; a bot that is not root ignores it, and says so', () => {
    expect(() => loadConfig({ SHELL_RUN_AS: '0:0' })).toThrow(/SHELL_RUN_AS.*must not be 0/);
    expect(() => loadConfig({ SHELL_RUN_AS: '1000:0' })).toThrow(/SHELL_RUN_AS.*must not be 0/);
    expect(() => loadConfig({ SHELL_RUN_AS: 'nobody' })).toThrow(/SHELL_RUN_AS.*uid:gid/);
    expect(() => loadConfig({ SHELL_MAX_MEMORY_MB: '10' })).toThrow(/SHELL_MAX_MEMORY_MB/);
    expect(decideRunAs('2000:2000', 0)).toEqual({ runAs: { uid: 2000, gid: 2000 }, uid: 2000 });
    expect(decideRunAs(undefined, 0)).toEqual({ runAs: { uid: 65534, gid: 65534 }, uid: 65534 });
    expect(decideRunAs('2000:2000', 1000)).toEqual({
      uid: 1000,
      note: expect.stringContaining('SHELL_RUN_AS is ignored: the bot runs as uid 1000, not root'),
    });
  });
});
