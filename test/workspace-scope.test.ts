// A workspace per conversation, through the assembled core (the real OpenAI SDK against the
// fake server, the real tools, the bubblewrap sandbox this machine has): what thread A writes
// is not there for any tool of thread B; a path out of a thread's folder is refused alike
// whether or not its target exists; /forget and retention take the thread's folder with it;
// and a git filter planted by an approved command in thread A never runs at thread B's
// allow-listed `git status`.
import { existsSync } from 'node:fs';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startCore, type Core } from '../src/core.js';
import type { InboxItem } from '../src/engine/index.js';
import { sessionIdOf, type SessionKey } from '../src/store/session-store.js';
import { conversationFolderName } from '../src/tools/conversation-folder.js';
import { FakeOpenAI } from './fakes/openai-server.js';
import { coreTestEnv } from './support/core-env.js';
import { memoryLogger, waitFor } from './support/engine-kit.js';
import { tempDir } from './support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Bot {
  core: Core;
  fake: FakeOpenAI;
  dir: string;
  workspace: string;
  prompts: InboxItem[];
}

async function boot(env: Record<string, string> = {}): Promise<Bot> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  // SHELL_SANDBOX=bwrap: these run the real sandbox, or fail (CI is root with bwrap).
  // Each tool call is a turn of its own here, more than fair use lets one person start a minute.
  const config = loadConfig({
    ...coreTestEnv(dir.path, fake),
    SHELL_SANDBOX: 'bwrap',
    TURNS_PER_USER_PER_MINUTE: '1000',
    ...env,
  });
  const core = await startCore(config, { logger: memoryLogger() });
  cleanups.push(() => core.close());
  const prompts: InboxItem[] = [];
  core.observers.add('slack', { onEvent: (_s, _event, prompt) => void (prompt ? prompts.push(prompt) : undefined) });
  await core.recover();
  return { core, fake, dir: dir.path, workspace: join(dir.path, 'workspace'), prompts };
}

const threadA: SessionKey = {
  platform: 'slack',
  workspace: 'T024BE7LD',
  channel: 'C0123ABCD',
  thread: '1700000000.000100',
};
const threadB: SessionKey = { ...threadA, thread: '1700000000.000200' };
const otherChannel: SessionKey = { ...threadA, channel: 'C0999ZZZZ', thread: '1700000000.000300' };

let eventIds = 0;

/** One turn in `key` that makes one tool call (approved by U1 if asked); resolves with the tool's result as the model read it. */
async function callTool(
  bot: Bot,
  key: SessionKey,
  name: string,
  args: Record<string, unknown>,
  approve = true,
): Promise<string> {
  bot.fake.replyToolCalls([{ name, arguments: args }]);
  bot.fake.replyText('done');
  const before = bot.fake.requests.length;
  const asked = bot.prompts.length;
  expect(
    await bot.core.manager.deliver(key, { text: `use ${name}`, userId: 'U1', eventId: `e${++eventIds}` }),
  ).toMatchObject({ status: 'started' });
  // Approved or not, the prompt is answered: a turn never waits on a test that forgot it.
  await waitFor(() => bot.prompts.length > asked || bot.fake.requests.length >= before + 2, 30_000);
  const prompt = bot.prompts[asked];
  if (prompt) await bot.core.manager.resolve(prompt.id, { choice: approve ? 'once' : 'deny' }, 'U1');
  await bot.core.manager.idle();
  const body = bot.fake.requests[before + 1]!.body as { messages: { role: string; content: string }[] };
  return body.messages.filter((message) => message.role === 'tool').at(-1)!.content;
}

function shellOutput(result: string): { exitCode: number | null; output: string; cwd: string } {
  return JSON.parse(result) as { exitCode: number | null; output: string; cwd: string };
}

const folderOf = (bot: Bot, key: SessionKey, scope: 'thread' | 'channel' = 'thread') =>
  join(bot.workspace, conversationFolderName(scope, key));

describe('WORKSPACE_SCOPE=thread (the default): each thread has a folder of its own', () => {
  it('a file written in thread A is invisible to every file tool and to the shell in thread B', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto' });
    expect(
      await callTool(bot, threadA, 'write_file', { path: 'secret.txt', content: 'thread A only: 5b1e\n' }),
    ).toMatch(/secret\.txt/);
    const inA = join(folderOf(bot, threadA), 'secret.txt');
    expect(existsSync(inA)).toBe(true);
    // The folder is named so an operator can find it.
    expect(conversationFolderName('thread', threadA)).toMatch(
      /^slack-T024BE7LD-C0123ABCD-1700000000\.000100-[0-9a-f]{8}$/,
    );

    expect(await callTool(bot, threadB, 'read_file', { path: 'secret.txt' })).toMatch(
      /no such file|not found|does not exist/i,
    );
    expect(await callTool(bot, threadB, 'list_dir', { path: '.', recursive: true })).not.toContain('secret.txt');
    expect(await callTool(bot, threadB, 'search', { pattern: '5b1e' })).not.toContain('secret.txt');
    expect(await callTool(bot, threadB, 'edit_file', { path: 'secret.txt', old: 'only', new: 'pwned' })).toMatch(
      /no such file|not found|does not exist/i,
    );
    for (const spelling of [inA, `../${conversationFolderName('thread', threadA)}/secret.txt`, '../../workspace']) {
      expect(await callTool(bot, threadB, 'read_file', { path: spelling })).toContain('path escapes the workspace');
      expect(await callTool(bot, threadB, 'write_file', { path: join(spelling, 'x'), content: 'x' })).toContain(
        'path escapes the workspace',
      );
      expect(await callTool(bot, threadB, 'list_dir', { path: spelling })).toContain('path escapes the workspace');
      expect(await callTool(bot, threadB, 'search', { pattern: '5b1e', path: spelling })).toContain(
        'path escapes the workspace',
      );
    }

    const shell = shellOutput(
      await callTool(bot, threadB, 'run_shell', {
        command: `cat secret.txt; cat ${inA}; echo ---; ls -a ..; grep -rs 5b1e .. /tmp; pwd`,
      }),
    );
    expect(shell.output).toMatch(/cat: secret\.txt: No such file or directory/);
    expect(shell.output).not.toContain('thread A only');
    const [, listing] = shell.output.split('---\n');
    expect(listing).not.toContain(conversationFolderName('thread', threadA));
    expect(listing).toContain(folderOf(bot, threadB));
    // And thread A still has it, untouched.
    expect(await callTool(bot, threadA, 'read_file', { path: 'secret.txt' })).toContain('thread A only: 5b1e');
  }, 120_000);

  it('a path out of the thread’s folder is refused in the same words whether or not its target exists: .., absolute, and links', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto' });
    await callTool(bot, threadA, 'write_file', { path: 'there.txt', content: 'A\n' });
    const aFolder = folderOf(bot, threadA);
    // Links made by thread B's own shell, to A's folder and to a name that does not exist.
    await callTool(bot, threadB, 'run_shell', {
      command: `ln -s ${aFolder} to-a && ln -s ${aFolder}/there.txt file-link && ln -s ${aFolder}/nowhere.txt dangling-link`,
    });
    const aName = conversationFolderName('thread', threadA);
    const pairs: [existing: string, missing: string][] = [
      [`../${aName}/there.txt`, `../${aName}/nowhere.txt`],
      [join(aFolder, 'there.txt'), join(aFolder, 'nowhere.txt')],
      ['to-a/there.txt', 'to-a/nowhere.txt'],
      ['file-link', 'dangling-link'],
      ['/etc/passwd', '/etc/no-such-file'],
    ];
    for (const [existing, missing] of pairs) {
      const refusedExisting = await callTool(bot, threadB, 'read_file', { path: existing });
      const refusedMissing = await callTool(bot, threadB, 'read_file', { path: missing });
      expect(refusedExisting).toContain(`path escapes the workspace: ${existing} is outside it`);
      // Word for word the same but for the path as given: nothing says which one exists.
      expect(refusedMissing.replace(missing, '<path>')).toBe(refusedExisting.replace(existing, '<path>'));
    }
    expect(await callTool(bot, threadB, 'write_file', { path: 'dangling-link', content: 'planted' })).toContain(
      'path escapes the workspace',
    );
    expect(existsSync(join(aFolder, 'nowhere.txt'))).toBe(false);
  }, 120_000);

  it('/forget removes the thread’s folder, and nothing else: not another thread’s, nor what a link in it leads to', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto' });
    const outside = await tempDir();
    cleanups.push(outside.remove);
    await writeFile(join(outside.path, 'keep.txt'), 'keep me');
    await callTool(bot, threadA, 'write_file', { path: 'deep/notes.txt', content: 'A\n' });
    await callTool(bot, threadB, 'write_file', { path: 'notes.txt', content: 'B\n' });
    await symlink(outside.path, join(folderOf(bot, threadA), 'deep', 'link-out'));
    await symlink(join(outside.path, 'keep.txt'), join(folderOf(bot, threadA), 'file-out'));

    expect(await bot.core.manager.controls.forget(sessionIdOf(threadA), 'U1')).toMatchObject({ status: 'done' });
    expect(existsSync(folderOf(bot, threadA))).toBe(false);
    expect(existsSync(join(outside.path, 'keep.txt'))).toBe(true);
    expect(existsSync(join(folderOf(bot, threadB), 'notes.txt'))).toBe(true);
    expect(existsSync(bot.workspace)).toBe(true);
  }, 120_000);

  it('the retention sweep removes an expired thread’s folder with its session', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto', RETENTION_DAYS: '30' });
    await callTool(bot, threadA, 'write_file', { path: 'old.txt', content: 'old\n' });
    expect(existsSync(folderOf(bot, threadA))).toBe(true);
    const day = 24 * 60 * 60 * 1000;
    expect(await bot.core.manager.sweepExpired(30 * day, Date.now() + 10 * day)).toEqual([]);
    expect(existsSync(folderOf(bot, threadA))).toBe(true);
    expect(await bot.core.manager.sweepExpired(30 * day, Date.now() + 31 * day)).toEqual([sessionIdOf(threadA)]);
    expect(existsSync(folderOf(bot, threadA))).toBe(false);
    expect(await bot.core.store.getSession(sessionIdOf(threadA))).toBeUndefined();
  }, 120_000);
});

describe('WORKSPACE_SCOPE=channel and shared', () => {
  it('channel: the threads of one channel share a folder, another channel does not see it, and /forget of one thread keeps it', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto', WORKSPACE_SCOPE: 'channel' });
    await callTool(bot, threadA, 'write_file', { path: 'plan.md', content: 'channel plan\n' });
    expect(await callTool(bot, threadB, 'read_file', { path: 'plan.md' })).toContain('channel plan');
    expect(await callTool(bot, otherChannel, 'read_file', { path: 'plan.md' })).toMatch(
      /no such file|not found|does not exist/i,
    );
    expect(await bot.core.manager.controls.forget(sessionIdOf(threadA), 'U1')).toMatchObject({ status: 'done' });
    expect(existsSync(join(folderOf(bot, threadA, 'channel'), 'plan.md'))).toBe(true);
  }, 120_000);

  it('shared: every conversation works in WORKSPACE_DIR itself, and /forget removes none of it', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto', WORKSPACE_SCOPE: 'shared' });
    await callTool(bot, threadA, 'write_file', { path: 'common.txt', content: 'everyone\n' });
    expect(existsSync(join(bot.workspace, 'common.txt'))).toBe(true);
    expect(await callTool(bot, otherChannel, 'read_file', { path: 'common.txt' })).toContain('everyone');
    await bot.core.manager.controls.forget(sessionIdOf(threadA), 'U1');
    expect(await readdir(bot.workspace)).toEqual(['common.txt']);
  }, 120_000);

  it('a link in WORKSPACE_DIR named as a thread’s folder (left there in shared scope) is never taken for it', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto' });
    const elsewhere = await tempDir();
    cleanups.push(elsewhere.remove);
    await mkdir(bot.workspace, { recursive: true });
    await symlink(elsewhere.path, folderOf(bot, threadA));
    await expect(
      bot.core.manager.deliver(threadA, { text: 'write x', userId: 'U1', eventId: 'squatted' }),
    ).rejects.toThrow(/is not a plain folder/);
    expect(await readdir(elsewhere.path)).toEqual([]);
  }, 120_000);
});

describe('allow-listed git never runs configuration another conversation wrote', () => {
  /** Thread A's approved command: a repository whose clean filter leaves FILTER-RAN, and a tracked file changed (same size, so git must read it). */
  const PLANT = [
    'git init -q repo && cd repo',
    'echo hello > a.txt && git -c user.name=A -c user.email=a@example.com add a.txt && git -c user.name=A -c user.email=a@example.com commit -qm init',
    "git config filter.evil.clean 'touch FILTER-RAN; cat'",
    "echo '* filter=evil' > .git/info/attributes",
    'echo jello > a.txt',
    'cd ..',
  ].join(' && ');

  /** Every FILTER-RAN anywhere under WORKSPACE_DIR: the folders whose repository ran the filter. */
  async function filterRuns(bot: Bot): Promise<string[]> {
    const entries = await readdir(bot.workspace, { recursive: true });
    return entries.filter((entry) => entry.endsWith('FILTER-RAN')).map((entry) => join(bot.workspace, entry));
  }

  async function plantAndCheck(scope: 'thread' | 'channel'): Promise<void> {
    const bot = await boot({ SHELL_ALLOWLIST: 'git status', WORKSPACE_SCOPE: scope });
    expect(shellOutput(await callTool(bot, threadA, 'run_shell', { command: PLANT })).exitCode).toBe(0);

    // Thread B goes where the repository is, as a real thread once did (`cd` is not allow-listed:
    // approved; in thread scope there is no such folder), then runs the allow-listed status,
    // which nobody approves.
    const cd = shellOutput(await callTool(bot, threadB, 'run_shell', { command: 'cd repo' }));
    const asked = bot.prompts.length;
    const status = shellOutput(await callTool(bot, threadB, 'run_shell', { command: 'git status' }));
    expect(bot.prompts.length).toBe(asked);
    expect(await filterRuns(bot)).toEqual([]);
    if (scope === 'thread') {
      expect(cd.exitCode).not.toBe(0);
      expect(status.output).toMatch(/not a git repository/);
    } else {
      expect(cd.exitCode).toBe(0);
      expect(status.exitCode).toBe(0);
      expect(status.output).toContain('modified:   a.txt');
    }

    // The plant is live: thread A's own approved git status runs it (an approved command is trusted).
    await callTool(bot, threadA, 'run_shell', { command: 'cd repo && git status --short' });
    expect(await filterRuns(bot)).toEqual([join(folderOf(bot, threadA, scope), 'repo', 'FILTER-RAN')]);
  }

  it('thread scope: thread B does not even see thread A’s repository', async () => {
    await plantAndCheck('thread');
  }, 120_000);

  it('channel scope: thread B’s allow-listed git status in the shared repository runs no filter', async () => {
    await plantAndCheck('channel');
  }, 120_000);
});

describe('a bound reached in one thread ends that command only', () => {
  it('past the memory cap and the disk cap in thread A: A is told which bound, answers its next message, and thread B works throughout', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto', SHELL_MAX_MEMORY_MB: '256', WORKSPACE_MAX_MB: '2' });

    const hog = shellOutput(
      await callTool(bot, threadA, 'run_shell', {
        command: `python3 -c 'b = bytearray(512 * 1024 * 1024); print("allocated", len(b))'`,
      }),
    );
    expect(hog.output).toContain('MemoryError');
    expect(hog.output).not.toContain('allocated');
    expect(JSON.stringify(hog)).toMatch(/SHELL_MAX_MEMORY_MB/);

    // Thread A fills its folder past its 2 MB; thread B's folder has a cap of its own.
    const filler = JSON.parse(
      await callTool(bot, threadA, 'run_shell', { command: 'head -c 3000000 /dev/zero > big.bin; echo "exit $?"' }),
    ) as Record<string, unknown>;
    expect(JSON.stringify(filler)).toMatch(/WORKSPACE_MAX_MB/);
    // Filled to its cap, A's folder takes nothing more; B's folder has a cap of its own.
    const more = shellOutput(
      await callTool(bot, threadA, 'run_shell', { command: 'head -c 100000 /dev/zero > more.bin; echo "exit $?"' }),
    );
    expect(more.output).toMatch(/File size limit exceeded[\s\S]*exit 153/);
    expect(
      shellOutput(
        await callTool(bot, threadB, 'run_shell', { command: 'head -c 1000000 /dev/zero > ok.bin && echo fine' }),
      ).output,
    ).toBe('fine\n');

    // Thread A recovers by deleting, and answers as before.
    expect(shellOutput(await callTool(bot, threadA, 'run_shell', { command: 'rm -f big.bin' })).exitCode).toBe(0);
    expect(shellOutput(await callTool(bot, threadA, 'run_shell', { command: 'echo next' })).output).toBe('next\n');
  }, 120_000);
});

describe('what a sandboxed command can learn of the host’s folders', () => {
  it('the mount table in thread B names its own folder, and neither thread A’s nor WORKSPACE_DIR’s other contents nor the bot’s files', async () => {
    const bot = await boot({ PERMISSION_MODE: 'auto' });
    await callTool(bot, threadA, 'write_file', { path: 'a.txt', content: 'A\n' });
    const mounts = shellOutput(
      await callTool(bot, threadB, 'run_shell', {
        command: 'cat /proc/self/mountinfo; echo; ls / ; echo "PATH=$PATH"',
      }),
    ).output;
    // The folder is bound at its real path on purpose: the shell's cwd and the file tools' paths agree.
    expect(mounts).toContain(folderOf(bot, threadB));
    expect(mounts).not.toContain(conversationFolderName('thread', threadA));
    expect(mounts).not.toContain(join(bot.dir, 'data'));
    expect(mounts).not.toContain(process.cwd());
    expect(mounts).toMatch(/PATH=\/usr\/local\/sbin:\/usr\/local\/bin:\/usr\/sbin:\/usr\/bin:\/sbin:\/bin\n/);
  }, 120_000);
});
