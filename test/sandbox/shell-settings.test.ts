// The shell's start-up settings (SHELL_ENV, SHELL_READ_PATHS), the environment's PATH, and
// what the sandbox takes away besides files: capabilities and the kernel's knobs.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { decideShellSandbox, shellEnvironment } from '../../src/sandbox/index.js';
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
  loadConfig({ STORE_URL: `sqlite://${bot.dir}/data/bot.sqlite`, MCP_CONFIG: path.join(bot.dir, 'mcp.json'), WORKSPACE_DIR: bot.workspace, ...env });

async function run(command: string, readOnlyPaths: string[] = []): Promise<string> {
  const decision = await decideShellSandbox({ mode: 'bwrap', network: false, workspaceRoot: bot.workspace, botPaths: bot.paths, readOnlyPaths, env: { PATH: '/usr/bin:/bin' } });
  if (decision.kind !== 'sandbox') throw new Error(decision.message);
  const builtin = createBuiltinTools({ workspaceDir: bot.workspace, shell: { kind: 'sandbox', sandbox: decision.sandbox } });
  try {
    const runShell = builtin.tools.find((tool) => tool.name === 'run_shell')!;
    const result = (await runShell.execute({ command }, { signal: new AbortController().signal, toolCallId: 'c', sessionId: 's' })) as { output: string };
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
    expect(await run(`${toolchain}/bin/tool; touch ${toolchain}/x 2>&1`, [toolchain])).toMatch(/^tool-ran\n.*Read-only file system/s);
    expect(await run(`${toolchain}/bin/tool 2>&1`)).toMatch(/No such file or directory/);
  });

  it('refuses relative paths, the home folder or what holds it, and the bot\'s own files, all in one message', async () => {
    const attempt = prepareShell(configFor({ SHELL_READ_PATHS: `relative/bin, ${bot.home}, ${path.dirname(bot.home)}, ${bot.dir}/data, /no/such/folder` }), { workingDir: bot.dir, homeDir: bot.home });
    await expect(attempt).rejects.toThrow(
      /SHELL_READ_PATHS: relative\/bin: give an absolute path; .*: it holds the home folder.*: it holds the home folder.*: it overlaps the folder the bot runs in.*\/no\/such\/folder: does not exist/,
    );
  });

  it('a folder inside the home folder (a toolchain such as ~/.nvm) is accepted', async () => {
    const nvm = path.join(bot.home, '.nvm');
    await mkdir(nvm, { recursive: true });
    const shell = await prepareShell(configFor({ SHELL_SANDBOX: 'bwrap', SHELL_READ_PATHS: nvm }), { workingDir: bot.dir, homeDir: bot.home });
    expect(shell.shell.kind).toBe('sandbox');
  });
});

describe('the commands\' PATH', () => {
  it('drops entries inside the bot\'s own folders (a project\'s node_modules/.bin)', () => {
    const env = shellEnvironment({ PATH: `${bot.dir}/node_modules/.bin:/usr/local/bin:${bot.home}/.cargo/bin:/usr/bin` }, { home: bot.workspace, hide: [bot.dir, bot.home] });
    expect(env.PATH).toBe('/usr/local/bin:/usr/bin');
  });
});

describe('no privileges inside', () => {
  it('no capabilities, the kernel\'s knobs read-only, no mounting', async () => {
    const output = await run('grep CapEff /proc/self/status; echo h > /proc/sysrq-trigger 2>&1 || echo sysrq-refused; mount -t tmpfs none /tmp 2>&1 || echo mount-refused');
    expect(output).toMatch(/CapEff:\s+0+\n/);
    expect(output).toContain('sysrq-refused');
    expect(output).toContain('mount-refused');
  });
});
