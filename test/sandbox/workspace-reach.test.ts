// A root bot's commands run as another uid, which must walk to the workspace: nothing at
// start-up may close the way (the store's folder holding WORKSPACE_DIR stays open), the
// sandbox is looked at again after start-up changed a folder, and a command that cannot reach
// the workspace is told why in words, not bwrap's. Only a root bot has a run-as user, so these
// run where the tests run as root (as CI does).
import { chmod, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { openKeyvStore } from '../../src/store/keyv-factory.js';
import { prepareShell, recheckShell } from '../../src/sandbox/shell-startup.js';
import type { SessionKey } from '../../src/store/session-store.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

const ROOT = process.getuid?.() === 0;
const key: SessionKey = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The layout of the report: the store and the workspace side by side in one folder (/srv/agent). */
async function agentLayout() {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const agent = join(dir.path, 'agent');
  await mkdir(agent, { mode: 0o755 });
  await chmod(agent, 0o755);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  const env = {
    ...coreTestEnv(dir.path, fake),
    STORE_URL: `sqlite://${join(agent, 'bot.sqlite')}`,
    WORKSPACE_DIR: join(agent, 'workspace'),
    PERMISSION_MODE: 'auto',
    SHELL_SANDBOX: 'bwrap',
  };
  return { dir: dir.path, agent, fake, env };
}

async function start(env: Record<string, string>): Promise<Core> {
  const core = await startCore(loadConfig(env), { logger: memoryLogger() });
  cleanups.push(() => core.close());
  await core.recover();
  return core;
}

/** Run `command` through run_shell as the model would; resolves with the tool result the model read. */
async function runCommand(core: Core, fake: FakeOpenAI, command: string, eventId: string): Promise<string> {
  fake.replyToolCalls([{ name: 'run_shell', arguments: { command } }]);
  fake.replyText('done');
  const before = fake.requests.length;
  await core.manager.deliver(key, { text: 'run it', userId: 'U1', eventId });
  await core.manager.idle();
  const body = fake.requests[before + 1]!.body as { messages: { role: string; content: string }[] };
  return body.messages.at(-1)!.content;
}

describe.runIf(ROOT)('the way to the workspace, for the user a root bot’s commands run as', () => {
  it(
    'the store’s folder that holds WORKSPACE_DIR is left open, with a note, and commands run',
    { timeout: 120_000 },
    async () => {
      const { agent, fake, env } = await agentLayout();
      const core = await start(env);
      expect((await stat(agent)).mode & 0o777).toBe(0o755);
      expect((await stat(join(agent, 'bot.sqlite'))).mode & 0o777).toBe(0o600);
      expect(
        core.warnings.some((warning) =>
          warning.includes(
            `the store's folder ${agent} holds ${join(agent, 'workspace')}, which the user commands run as must reach, so it was left open`,
          ),
        ),
      ).toBe(true);
      expect(await runCommand(core, fake, 'echo reached the workspace', 'e1')).toContain('reached the workspace');
    },
  );

  it('a store folder elsewhere is still made private', { timeout: 120_000 }, async () => {
    const { dir, env } = await agentLayout();
    const data = join(dir, 'data');
    await mkdir(data, { mode: 0o755 });
    await chmod(data, 0o755);
    await start({ ...env, STORE_URL: `sqlite://${join(data, 'bot.sqlite')}` });
    expect((await stat(data)).mode & 0o777).toBe(0o700);
  });

  it(
    'after start-up changed a folder, the sandbox is looked at again: closed, the start stops (bwrap) or run_shell is withheld (auto), naming the folder',
    { timeout: 120_000 },
    async () => {
      const { agent, env } = await agentLayout();
      const bwrap = loadConfig(env);
      const shell = await prepareShell(bwrap);
      expect(shell.shell.kind).toBe('sandbox');
      // Nothing changed: nothing to look at again.
      expect(await recheckShell(bwrap, shell, { changedFolders: [] })).toBe(shell);
      // What the old store did to the folder holding the workspace, after the probe had passed.
      await chmod(agent, 0o700);
      const why = `${join(agent, 'workspace')} can no longer be reached by the user commands run as, since start-up changed ${agent}: ${agent} (mode 700, owner uid 0) may not be entered by uid 65534`;
      await expect(recheckShell(bwrap, shell, { changedFolders: [agent] })).rejects.toThrow(
        `SHELL_SANDBOX=bwrap, but the shell sandbox cannot run here: ${why}`,
      );

      await chmod(agent, 0o755);
      const auto = loadConfig({ ...env, SHELL_SANDBOX: 'auto' });
      const open = await prepareShell(auto);
      expect(open.shell.kind).toBe('sandbox');
      await chmod(agent, 0o700);
      const withheld = await recheckShell(auto, open, { changedFolders: [agent] });
      expect(withheld.shell.kind).toBe('withheld');
      expect(withheld.warn).toBe(true);
      expect(withheld.message).toContain(`run_shell is not offered: the shell sandbox cannot run here: ${why}`);
    },
  );

  it(
    'a command that cannot reach the workspace is told which folder closes the way, for which uid',
    { timeout: 120_000 },
    async () => {
      const { dir, fake, env } = await agentLayout();
      // The store elsewhere: nothing at start-up touches the agent folder.
      const core = await start({ ...env, STORE_URL: `sqlite://${join(dir, 'data', 'bot.sqlite')}` });
      expect(await runCommand(core, fake, 'echo first', 'e1')).toContain('first');
      // Closed by hand while the bot runs.
      await chmod(join(dir, 'agent'), 0o700);
      const result = await runCommand(core, fake, 'echo second', 'e2');
      expect(result).toContain(`the sandbox could not be built: ${join(dir, 'agent', 'workspace')}`);
      expect(result).toContain(
        `cannot be reached by uid 65534, the user commands run as (${join(dir, 'agent')} (mode 700, owner uid 0) may not be entered by uid 65534)`,
      );
    },
  );

  it('the store opened on its own keeps a folder on the way to one that must stay reachable', async () => {
    const { agent } = await agentLayout();
    const opened = await openKeyvStore(`sqlite://${join(agent, 'bot.sqlite')}`, 'bot', {
      keepReachable: [join(agent, 'workspace')],
    });
    cleanups.push(() => opened.close());
    expect(opened.changedFolders).toEqual([]);
    expect((await stat(agent)).mode & 0o777).toBe(0o755);
  });
});
