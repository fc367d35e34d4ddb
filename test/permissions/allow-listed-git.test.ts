// An allow-listed command runs without anyone looking at it, so the repository it runs in
// must not be able to make git run programs. Driven through a real TurnEngine, the real
// policy and a real host shell, against a real git repository whose config is hostile.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message, PermissionRequest } from '../../src/engine/index.js';
import { createPermissionPolicy } from '../../src/permissions/index.js';
import { createBuiltinTools, type BuiltinTools } from '../../src/tools/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, only } from '../support/engine-kit.js';
import { fakeBot, sandboxFor } from '../support/sandbox-kit.js';

let base: string;
let workspaceDir: string;
let builtin: BuiltinTools;
/** Created by the repository's fsmonitor "hook" whenever git runs it. */
let marker: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'chat-agent-allowlisted-git-'));
  workspaceDir = path.join(base, 'workspace');
  marker = path.join(base, 'fsmonitor-ran');
  builtin = createBuiltinTools({ workspaceDir, shell: { kind: 'host' } });
});
afterEach(async () => {
  await builtin.dispose();
  await rm(base, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): void {
  execFileSync(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'core.fsmonitor=false', ...args],
    {
      cwd,
      stdio: 'ignore',
    },
  );
}

/**
 * A repository at `dir` with one commit and a `core.fsmonitor` that leaves `marker`; the
 * hook lives in `hookDir` (where the shell can see it: the sandbox shows only the workspace).
 */
async function hostileRepository(dir: string, hookDir = base): Promise<void> {
  git(dir, 'init', '-q');
  await writeFile(path.join(dir, 'README.md'), 'hello\n');
  git(dir, 'add', 'README.md');
  git(dir, 'commit', '-q', '-m', 'init');
  const hook = path.join(hookDir, 'fsmonitor-hook.sh');
  await writeFile(hook, `#!/bin/sh\ntouch '${marker}'\n`);
  await chmod(hook, 0o755);
  git(dir, 'config', 'core.fsmonitor', hook);
}

function session(command: string, shellAllowList: string[], tools: BuiltinTools = builtin) {
  const asked: PermissionRequest[] = [];
  const { engine } = engineWith([callTools(call('run_shell', { command })), say('done')], {
    tools: tools.tools,
    ports: {
      policy: createPermissionPolicy({ mode: 'interactive', shellAllowList, workspaceDir: tools.workspace.root }),
      approver: async (request) => {
        asked.push(request);
        return 'once';
      },
    },
    hooks: { onInterrupt: [tools.interruptHook] },
  });
  return { engine, asked };
}

function shellAnswer(messages: readonly Message[]): { exitCode: number | null; output: string; note?: string } {
  const result = messages.find((message) => message.role === 'tool');
  if (!result || result.role !== 'tool') throw new Error('no tool result');
  return JSON.parse(result.content) as { exitCode: number | null; output: string; note?: string };
}

describe('an allow-listed command gets a git that ignores the repository’s programs', () => {
  it('allow-listed `git status` runs without asking and does not run the repository’s fsmonitor', async () => {
    await hostileRepository(workspaceDir);
    const { engine, asked } = session('git status', ['git status']);
    const events = await collect(engine.run('what changed?'));

    expect(asked).toEqual([]);
    expect(only(events, 'permission_required')).toEqual([]);
    expect(only(events, 'tool_finished')[0]).toMatchObject({ name: 'run_shell', status: 'ok' });
    const answer = shellAnswer(engine.messages);
    expect(answer.exitCode).toBe(0);
    expect(answer.output).toMatch(/On branch|nothing to commit/);
    expect(answer.note).toMatch(/allow-listed, so it ran without approval and with a hardened git/);
    expect(existsSync(marker)).toBe(false);
  });

  it('the same `git status`, approved by a person, behaves as git normally does (the fsmonitor runs)', async () => {
    await hostileRepository(workspaceDir);
    const { engine, asked } = session('git status', ['git log']);
    const events = await collect(engine.run('what changed?'));

    expect(asked.map((request) => request.command)).toEqual(['git status']);
    expect(only(events, 'permission_required')).toHaveLength(1);
    expect(shellAnswer(engine.messages).exitCode).toBe(0);
    expect(shellAnswer(engine.messages).note).toBeUndefined();
    expect(existsSync(marker)).toBe(true);
  });

  it('the hardening is in the allow-listed command’s environment, and only there', async () => {
    const allowListed = session('env', ['env']);
    await collect(allowListed.engine.run('show the environment'));
    const env = shellAnswer(allowListed.engine.messages).output;
    expect(env).toContain('GIT_CONFIG_NOSYSTEM=1');
    expect(env).toContain('GIT_CONFIG_GLOBAL=/dev/null');
    expect(env).toMatch(/^GIT_CONFIG_KEY_\d+=core\.fsmonitor$/m);
    expect(env).toMatch(/^GIT_CONFIG_KEY_\d+=core\.hooksPath$/m);
    expect(env).toMatch(/^GIT_CONFIG_COUNT=\d+$/m);
    expect(env).toContain(`GIT_CEILING_DIRECTORIES=${path.dirname(builtin.workspace.root)}`);

    const approved = session('env', []);
    await collect(approved.engine.run('show the environment'));
    expect(approved.asked).toHaveLength(1);
    expect(shellAnswer(approved.engine.messages).output).not.toContain('GIT_CONFIG_COUNT');
  });

  it('an allow-listed git does not find a repository around the workspace', async () => {
    // The workspace sits in someone's checkout (the bot's own, with SHELL_SANDBOX=off).
    await hostileRepository(base);
    const allowListed = session('git status', ['git status']);
    await collect(allowListed.engine.run('status?'));
    const answer = shellAnswer(allowListed.engine.messages);
    expect(answer.exitCode).not.toBe(0);
    expect(answer.output).toMatch(/not a git repository/);
    expect(existsSync(marker)).toBe(false);

    const approved = session('git status', []);
    await collect(approved.engine.run('status?'));
    expect(shellAnswer(approved.engine.messages).exitCode).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  it('filters and diff drivers the repository names (by any name) do not run: status passes content through, diff fails instead of running', async () => {
    await hostileRepository(workspaceDir);
    const drivers = path.join(base, 'driver-ran');
    await mkdir(drivers);
    // Names chosen by attributes, so no list could hold them (one with a dot and an "=").
    for (const [key, value] of [
      ['filter.we.ird=1.clean', `touch '${drivers}/clean'; cat`],
      ['diff.evil.textconv', `touch '${drivers}/textconv'; cat`],
      ['diff.evil.command', `touch '${drivers}/command'`],
    ]) {
      git(workspaceDir, 'config', key!, value!);
    }
    // In .git/info/attributes: ignoring the worktree's .gitattributes would not help.
    await writeFile(path.join(workspaceDir, '.git', 'info', 'attributes'), '*.md filter=we.ird=1 diff=evil\n');
    await writeFile(path.join(workspaceDir, 'README.md'), 'jello\n');

    const status = session('git status', ['git status', 'git diff']);
    await collect(status.engine.run('status?'));
    expect(status.asked).toEqual([]);
    expect(shellAnswer(status.engine.messages)).toMatchObject({
      exitCode: 0,
      output: expect.stringContaining('modified:   README.md'),
    });
    const diff = session('git diff', ['git status', 'git diff']);
    await collect(diff.engine.run('diff?'));
    expect(diff.asked).toEqual([]);
    expect(await readdir(drivers)).toEqual([]);
    expect(shellAnswer(diff.engine.messages)).toMatchObject({
      exitCode: 128,
      output: expect.stringContaining('cannot run'),
    });

    // Approved, the same status runs the repository's filter, as git normally does.
    const approved = session('git status', []);
    await collect(approved.engine.run('status?'));
    expect(await readdir(drivers)).toEqual(['clean']);
  });

  it('allow-listed `git log *` still refuses the option that rewrote .git/config, and asks instead', async () => {
    await hostileRepository(workspaceDir);
    const { engine, asked } = session('git log -1 --output=.git/config', ['git log *']);
    await collect(engine.run('log'));
    expect(asked).toHaveLength(1);
    expect(asked[0]?.reason).toMatch(/`-1` is an option, and options are never allowed as extra arguments/);
  });
});

describe('in the bubblewrap sandbox too', () => {
  it('allow-listed `git status` does not run the fsmonitor; approved, it does', async () => {
    const bot = await fakeBot();
    const sandbox = await sandboxFor(bot);
    const boxed = createBuiltinTools({ workspaceDir: bot.workspace, shell: { kind: 'sandbox', sandbox } });
    try {
      marker = path.join(bot.workspace, 'fsmonitor-ran');
      // Made by the test as the bot's user, then handed to the uid a root bot's commands run as
      // (docs/security.md): git refuses a repository its user does not own, on either side.
      const runAs = sandbox.runAs;
      if (runAs) execFileSync('chown', [`${process.getuid?.()}:${process.getgid?.()}`, bot.workspace]);
      await hostileRepository(bot.workspace, bot.workspace);
      if (runAs) execFileSync('chown', ['-R', `${runAs.uid}:${runAs.gid}`, bot.workspace]);

      const allowListed = session('git status', ['git status'], boxed);
      await collect(allowListed.engine.run('status?'));
      expect(allowListed.asked).toEqual([]);
      expect(shellAnswer(allowListed.engine.messages).exitCode).toBe(0);
      expect(existsSync(marker)).toBe(false);

      const approved = session('git status', [], boxed);
      await collect(approved.engine.run('status?'));
      expect(approved.asked).toHaveLength(1);
      expect(shellAnswer(approved.engine.messages).exitCode).toBe(0);
      expect(existsSync(marker)).toBe(true);
    } finally {
      await boxed.dispose();
      await bot.cleanup();
    }
  });
});
