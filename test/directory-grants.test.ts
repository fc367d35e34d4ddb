// request_directory through the assembled core (the real OpenAI SDK against the fake server,
// the session layer, the inbox): a system folder, one reached through a link, another
// conversation's folder and, with GRANT_ROOTS, anything outside the roots are refused before
// anyone is asked; a folder that may be granted is shown by its real path, with what becomes
// writable, and the grant is of that very folder.
import { chown, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startCore, type Core } from '../src/core.js';
import type { EngineEvent, InboxItem } from '../src/engine/index.js';
import type { SessionKey } from '../src/store/session-store.js';
import { conversationFolderName } from '../src/tools/conversation-folder.js';
import { SYSTEM_FOLDERS } from '../src/tools/grant-rules.js';
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
  shown: { event: EngineEvent; prompt?: InboxItem }[];
}

async function boot(env: Record<string, string> = {}, again?: Pick<Bot, 'dir' | 'fake'>): Promise<Bot> {
  const dir = again ? { path: again.dir } : await tempDir();
  if (!again) cleanups.push((dir as Awaited<ReturnType<typeof tempDir>>).remove);
  const fake = again?.fake ?? (await new FakeOpenAI().start());
  if (!again) cleanups.push(() => fake.stop());
  const config = loadConfig({ ...coreTestEnv(dir.path, fake), TURNS_PER_USER_PER_MINUTE: '1000', ...env });
  const core = await startCore(config, { logger: memoryLogger() });
  cleanups.push(() => core.close());
  const shown: Bot['shown'] = [];
  core.observers.add('test', {
    onEvent: (_s, event, prompt) => void shown.push({ event, ...(prompt ? { prompt } : {}) }),
  });
  await core.recover();
  return { core, fake, dir: dir.path, shown };
}

const key: SessionKey = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };
let eventIds = 0;

/** Ask for `path`; resolves with the result the model read, having answered a card with `answer` if one was shown. */
async function requestDirectory(
  bot: Bot,
  path: string,
  answer: 'grant' | 'deny' = 'grant',
): Promise<{ result: string; card: EngineEvent | undefined }> {
  bot.fake.replyToolCalls([
    { name: 'request_directory', arguments: { path, reason: 'the project lives there', writable: true } },
  ]);
  bot.fake.replyText('ok');
  const before = bot.fake.requests.length;
  const cards = bot.shown.length;
  expect(
    await bot.core.manager.deliver(key, { text: `grant ${path}`, userId: 'U1', eventId: `e${++eventIds}` }),
  ).toMatchObject({ status: 'started' });
  await waitFor(() => bot.shown.slice(cards).some((s) => s.prompt) || bot.fake.requests.length >= before + 2, 30_000);
  const prompted = bot.shown.slice(cards).find((s) => s.prompt);
  if (prompted) await bot.core.manager.resolve(prompted.prompt!.id, { choice: answer }, 'U1');
  await bot.core.manager.idle();
  const body = bot.fake.requests[before + 1]!.body as { messages: { role: string; content: string }[] };
  return { result: body.messages.at(-1)!.content, card: prompted?.event };
}

describe('request_directory never grants a system folder', () => {
  it('each system folder, a folder under one and a link to one are refused before any card is shown', async () => {
    const bot = await boot();
    const links = await tempDir();
    cleanups.push(links.remove);
    await symlink('/etc', join(links.path, 'looks-like-a-project'));
    await symlink('/proc/self', join(links.path, 'me'));
    // Whether or not each exists here (a container may have no /boot).
    const targets = [
      ...SYSTEM_FOLDERS,
      '/lib',
      '/lib64',
      '/usr/local/src',
      '/var/lib',
      '/etc/cron.d',
      '/etc/no-such-folder',
      join(links.path, 'looks-like-a-project'),
      join(links.path, 'me'),
    ];
    for (const target of targets) {
      const { result, card } = await requestDirectory(bot, target);
      expect(card, target).toBeUndefined();
      expect(result, target).toContain('"granted":false');
      expect(result, target).toMatch(/(is|in \/[a-z0-9]+,) a system folder; only project folders are granted/);
    }
    expect(bot.shown.some((s) => s.prompt)).toBe(false);
  }, 120_000);

  it('a link in the thread’s own folder that leads to /etc is judged by where it leads', async () => {
    const bot = await boot();
    // The thread's folder exists once the thread does.
    await requestDirectory(bot, '/proc');
    const folder = join(bot.dir, 'workspace', conversationFolderName('thread', key));
    await symlink('/etc', join(folder, 'config'));
    const { result, card } = await requestDirectory(bot, 'config');
    expect(card).toBeUndefined();
    expect(result).toMatch(/refused: \/etc is a system folder; only project folders are granted/);
  }, 120_000);

  it('another conversation’s folder in WORKSPACE_DIR is refused, and so is WORKSPACE_DIR itself', async () => {
    const bot = await boot();
    const other = join(bot.dir, 'workspace', conversationFolderName('thread', { ...key, thread: 'T2' }));
    await mkdir(other, { recursive: true });
    const refusedOther = await requestDirectory(bot, other);
    expect(refusedOther.card).toBeUndefined();
    expect(refusedOther.result).toMatch(
      /is in the workspace folder \(WORKSPACE_DIR\), where other conversations keep their files/,
    );
    const refusedAll = await requestDirectory(bot, join(bot.dir, 'workspace'));
    expect(refusedAll.card).toBeUndefined();
    expect(refusedAll.result).toMatch(/holds the workspace folder/);
  }, 120_000);
});

describe('GRANT_ROOTS', () => {
  it('only folders inside a listed root are offered; the rest are refused before a card', async () => {
    const roots = await tempDir();
    cleanups.push(roots.remove);
    await mkdir(join(roots.path, 'projects', 'app'), { recursive: true });
    await mkdir(join(roots.path, 'elsewhere'), { recursive: true });
    const bot = await boot({ GRANT_ROOTS: join(roots.path, 'projects') });

    const outside = await requestDirectory(bot, join(roots.path, 'elsewhere'));
    expect(outside.card).toBeUndefined();
    expect(outside.result).toMatch(/is outside the folders grants may come from \(GRANT_ROOTS: /);

    const inside = await requestDirectory(bot, join(roots.path, 'projects', 'app'));
    expect(inside.card).toBeDefined();
    expect(inside.result).toContain('"granted":true');
  }, 120_000);

  it('a GRANT_ROOTS entry that is relative, missing or a system folder stops the start, naming each', async () => {
    await expect(boot({ GRANT_ROOTS: 'projects, /no/such/folder, /usr/local' })).rejects.toThrow(
      /GRANT_ROOTS: projects: give an absolute path; \/no\/such\/folder: not an existing folder; \/usr\/local: it is in \/usr, a system folder/,
    );
  }, 60_000);
});

describe('the card shows the real folder and what becomes writable', () => {
  it('a folder asked for through a link is shown, and granted, by its real path', async () => {
    const bot = await boot();
    const project = await tempDir();
    cleanups.push(project.remove);
    await mkdir(join(project.path, 'real-project'));
    await symlink(join(project.path, 'real-project'), join(project.path, 'nice-name'));
    const { result, card } = await requestDirectory(bot, join(project.path, 'nice-name'));
    expect(card).toMatchObject({ type: 'interaction_required', kind: 'directory' });
    const shownArgs = (card as Extract<EngineEvent, { type: 'interaction_required' }>).arguments as Record<
      string,
      unknown
    >;
    expect(shownArgs.path).toBe(join(project.path, 'real-project'));
    // A root bot's commands run as uid 65534 (SHELL_RUN_AS), which may not write a folder root made
    // 0755, and so do its file tools' writes in a granted folder.
    expect(shownArgs.access).toBe(
      process.getuid?.() === 0
        ? 'read only: neither the file tools nor shell commands can write there'
        : 'read and write: the file tools and shell commands can change and delete files there',
    );
    expect(JSON.stringify(shownArgs)).not.toContain('nice-name');
    expect(result).toContain(`"path":"${join(project.path, 'real-project')}"`);
  }, 120_000);

  it('a card still waiting after a restart is drawn again with the real path and the access, and a grant given then takes effect', async () => {
    const first = await boot();
    const project = await tempDir();
    cleanups.push(project.remove);
    await mkdir(join(project.path, 'real-project'));
    // Handed to the commands' uid, as an operator would: both the file tools and commands may write it.
    if (process.getuid?.() === 0) await chown(join(project.path, 'real-project'), 65534, 65534);
    await symlink(join(project.path, 'real-project'), join(project.path, 'nice-name'));
    first.fake.replyToolCalls([
      { name: 'request_directory', arguments: { path: join(project.path, 'nice-name'), reason: 'the project' } },
    ]);
    await first.core.manager.deliver(key, { text: 'grant it', userId: 'U1', eventId: 'before-restart' });
    await waitFor(() => first.shown.some((s) => s.prompt), 30_000);
    // A deploy: the turn is left as a crash would leave it, its prompt pending.
    await first.core.suspend();
    await first.core.close();

    const again = await boot({}, first);
    const redrawn = again.shown.find((s) => s.event.type === 'interaction_required');
    expect(redrawn?.prompt).toBeDefined();
    expect((redrawn!.event as Extract<EngineEvent, { type: 'interaction_required' }>).arguments).toMatchObject({
      path: join(project.path, 'real-project'),
      access: 'read and write: the file tools and shell commands can change and delete files there',
    });

    // Granted now, with nothing waiting since the restart: the grant takes effect all the same.
    await writeFile(join(project.path, 'real-project', 'notes.md'), 'granted after the restart');
    first.fake.replyToolCalls([
      { name: 'read_file', arguments: { path: join(project.path, 'real-project', 'notes.md') } },
    ]);
    first.fake.replyText('Read it.');
    const before = first.fake.requests.length;
    expect(await again.core.manager.resolve(redrawn!.prompt!.id, { choice: 'grant' }, 'U1')).toMatchObject({
      ok: true,
    });
    await waitFor(() => first.fake.requests.length >= before + 2, 30_000);
    await again.core.manager.idle();
    const body = (i: number) => first.fake.requests[i]!.body as { messages: { role: string; content: string }[] };
    expect(body(before).messages.at(-1)!.content).toContain(
      `"granted":true,"path":"${join(project.path, 'real-project')}"`,
    );
    expect(body(before + 1).messages.at(-1)!.content).toContain('granted after the restart');
  }, 120_000);
});

describe.runIf(process.getuid?.() === 0)(
  "a root bot's file tools write in a granted folder as its commands' user",
  () => {
    it("a new file is that user's, and a file only root may change is refused to write_file and edit_file alike, unchanged", async () => {
      // Writes run without a card here: what is checked is who they run as.
      const bot = await boot({ PERMISSION_MODE: 'auto' });
      const project = await tempDir();
      cleanups.push(project.remove);
      const folder = join(project.path, 'service');
      await mkdir(folder);
      // The operator handed the folder to the commands' user; a root-owned config stays in it.
      await chown(folder, 65534, 65534);
      await writeFile(join(folder, 'root.conf'), 'listen = 127.0.0.1\n', { mode: 0o644 });
      const { result, card } = await requestDirectory(bot, folder);
      expect(result).toContain('"granted":true');
      expect((card as Extract<EngineEvent, { type: 'interaction_required' }>).arguments).toMatchObject({
        access: 'read and write: the file tools and shell commands can change and delete files there',
      });

      const toolResult = async (name: string, args: Record<string, unknown>): Promise<string> => {
        bot.fake.replyToolCalls([{ name, arguments: args }]);
        bot.fake.replyText('done');
        const before = bot.fake.requests.length;
        await bot.core.manager.deliver(key, { text: `${name} please`, userId: 'U1', eventId: `e${++eventIds}` });
        await bot.core.manager.idle();
        const body = bot.fake.requests[before + 1]!.body as { messages: { role: string; content: string }[] };
        return body.messages.at(-1)!.content;
      };

      expect(await toolResult('write_file', { path: join(folder, 'notes.md'), content: 'from the model' })).toContain(
        '"bytesWritten":14',
      );
      const made = await stat(join(folder, 'notes.md'));
      expect({ uid: made.uid, gid: made.gid }).toEqual({ uid: 65534, gid: 65534 });

      const refusal =
        'permission denied: ' +
        join(folder, 'root.conf') +
        ' (in a granted folder the file tools write as the user shell commands run as, and that user may not write there)';
      expect(
        await toolResult('write_file', { path: join(folder, 'root.conf'), content: 'listen = 0.0.0.0\n' }),
      ).toContain(refusal);
      expect(
        await toolResult('edit_file', { path: join(folder, 'root.conf'), old: '127.0.0.1', new: '0.0.0.0' }),
      ).toContain(refusal);
      expect(await readFile(join(folder, 'root.conf'), 'utf8')).toBe('listen = 127.0.0.1\n');
      expect((await stat(join(folder, 'root.conf'))).uid).toBe(0);
    }, 120_000);
  },
);
