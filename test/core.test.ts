// The assembled core, from configuration to a finished turn: the real OpenAI provider
// against the fake server, the built-in tools in a temporary workspace, the permission
// policy, an MCP server over stdio, the store and the session layer.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startCore, type Core } from '../src/core.js';
import type { EngineEvent, InboxItem } from '../src/engine/index.js';
import { FakeOpenAI } from './fakes/openai-server.js';
import { notesServerEntry } from './mcp/fixtures/launch.js';
import { coreTestEnv } from './support/core-env.js';
import { memoryLogger, waitFor } from './support/engine-kit.js';
import { brokenBwrap } from './support/sandbox-kit.js';
import { tempDir } from './support/test-connector.js';
import { UNCONFINED_WARNING } from '../src/sandbox/shell-sandbox.js';
import { threadFolder } from './support/conversation-folders.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function boot(
  env: Record<string, string> = {},
  shared?: { dir: string; fake: FakeOpenAI },
  options: { bwrapPath?: string } = {},
) {
  const dir = shared ? { path: shared.dir } : await tempDir();
  if (!shared) cleanups.push((dir as Awaited<ReturnType<typeof tempDir>>).remove);
  const fake = shared?.fake ?? (await new FakeOpenAI().start());
  if (!shared) cleanups.push(() => fake.stop());
  const shown: { event: EngineEvent; prompt?: InboxItem }[] = [];
  const logger = memoryLogger();
  const config = loadConfig({
    ...coreTestEnv(dir.path, fake),
    ...env,
  });
  const core: Core = await startCore(config, { logger, ...options });
  cleanups.push(() => core.close());
  core.observers.add('test', {
    onEvent: (_s, event, prompt) => void shown.push({ event, ...(prompt ? { prompt } : {}) }),
  });
  await core.recover();
  return { core, fake, shown, logger, dir: dir.path };
}

const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };

describe('the assembled bot core', () => {
  it('a write in the workspace asks, is approved by the thread starter, and happens', async () => {
    const { core, fake, shown, dir } = await boot();
    fake.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes/todo.md', content: '- ship it\n' } }]);
    fake.replyText('Saved notes/todo.md.');
    await core.manager.deliver(key, { text: 'save a todo', userId: 'U1', eventId: 'e1' });
    await waitFor(() => shown.some((s) => s.prompt));
    const prompt = shown.find((s) => s.prompt)!.prompt!;
    expect(await core.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
    await core.manager.idle();
    expect(await readFile(join(threadFolder(join(dir, 'workspace'), key), 'notes', 'todo.md'), 'utf8')).toBe(
      '- ship it\n',
    );
    // The model was offered the built-in tools, with their schemas.
    const tools = ((fake.requests[0]!.body as { tools: { function: { name: string } }[] }).tools ?? []).map(
      (t) => t.function.name,
    );
    expect(tools).toEqual(
      expect.arrayContaining(['read_file', 'list_dir', 'search', 'write_file', 'edit_file', 'run_shell', 'fetch_url']),
    );
  });

  it('in read-only mode a write is refused without asking', async () => {
    const { core, fake, shown } = await boot({ PERMISSION_MODE: 'read-only' });
    fake.replyToolCalls([{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }]);
    fake.replyText('I cannot write in read-only mode.');
    await core.manager.deliver(key, { text: 'write x', userId: 'U1', eventId: 'e1' });
    await core.manager.idle();
    expect(shown.some((s) => s.event.type === 'permission_required')).toBe(false);
    expect(shown.find((s) => s.event.type === 'tool_finished')!.event).toMatchObject({ status: 'denied' });
  });

  it('a path outside the workspace is refused by the tool itself, even in auto mode', async () => {
    const { core, fake, shown } = await boot({ PERMISSION_MODE: 'auto' });
    fake.replyToolCalls([{ name: 'read_file', arguments: { path: '../../../etc/passwd' } }]);
    fake.replyText('That file is outside my workspace.');
    await core.manager.deliver(key, { text: 'read /etc/passwd', userId: 'U1', eventId: 'e1' });
    await core.manager.idle();
    const finished = shown.find((s) => s.event.type === 'tool_finished')!.event;
    expect(finished).toMatchObject({ status: 'error' });
    expect(JSON.stringify(finished)).toMatch(/escapes the workspace/);
  });

  it('MCP tools join the built-in ones; a server that fails to start is a warning, not a crash', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const mcpPath = join(dir.path, 'mcp.json');
    await writeFile(
      mcpPath,
      JSON.stringify({
        mcpServers: { notes: notesServerEntry(), broken: { command: join(dir.path, 'no-such-binary') } },
      }),
    );
    const { core, fake } = await boot({ MCP_CONFIG: mcpPath });
    expect(core.mcp.failures.map((f) => f.server)).toEqual(['broken']);
    expect(core.warnings.some((w) => w.includes('MCP server "broken" did not start'))).toBe(true);
    fake.replyToolCalls([{ name: 'notes__add', arguments: { a: 2, b: 3 } }]);
    fake.replyText('5');
    await core.manager.deliver(key, { text: 'add 2 and 3', userId: 'U1', eventId: 'e1' });
    await core.manager.idle();
    const second = fake.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('5') });
  });

  it('request_directory: a granted folder becomes reachable for the file tools, and stays so after a restart', async () => {
    const outside = await tempDir();
    cleanups.push(outside.remove);
    await writeFile(join(outside.path, 'notes.md'), 'granted content');
    const first = await boot();
    first.fake.replyToolCalls([
      { name: 'request_directory', arguments: { path: outside.path, reason: 'the notes live there' } },
    ]);
    first.fake.replyToolCalls([{ name: 'read_file', arguments: { path: join(outside.path, 'notes.md') } }]);
    first.fake.replyText('Read it.');
    await first.core.manager.deliver(key, { text: 'read my notes', userId: 'U1', eventId: 'e1' });
    await waitFor(() => first.shown.some((s) => s.prompt?.kind === 'directory'));
    const prompt = first.shown.find((s) => s.prompt?.kind === 'directory')!.prompt!;
    expect(prompt.choices).toEqual(['grant', 'deny']);
    expect(await first.core.manager.resolve(prompt.id, { choice: 'grant' }, 'U1')).toMatchObject({ ok: true });
    await first.core.manager.idle();
    const body = (i: number) => first.fake.requests[i]!.body as { messages: { role: string; content: string }[] };
    expect(body(1).messages.at(-1)!.content).toContain('"granted":true');
    expect(body(2).messages.at(-1)!.content).toContain('granted content');
    await first.core.close();

    const again = await boot({}, { dir: first.dir, fake: first.fake });
    first.fake.replyToolCalls([{ name: 'read_file', arguments: { path: join(outside.path, 'notes.md') } }]);
    first.fake.replyText('Still readable.');
    await again.core.manager.deliver(key, { text: 'once more', userId: 'U1', eventId: 'e2' });
    await again.core.manager.idle();
    expect(
      (first.fake.requests.at(-1)!.body as { messages: { content: string }[] }).messages.at(-1)!.content,
    ).toContain('granted content');
  });

  it("request_directory for the bot's own folders, its home or / is refused without asking anyone, with the reason", async () => {
    const { core, fake, shown, dir } = await boot();
    for (const [target, reason] of [
      [join(dir, 'data'), /refused: .* is one of the bot's own folders/],
      [dir, /refused: .* holds the workspace/],
      ['/', /refused: \/ is the whole file system/],
      [join(dir, 'no-such-folder'), /no such folder/],
      [process.env.HOME ?? '/root', /refused: .* the bot's home folder/],
    ] as const) {
      fake.replyToolCalls([{ name: 'request_directory', arguments: { path: target, reason: 'I need it' } }]);
      fake.replyText('Refused, fine.');
      const before = fake.requests.length;
      await core.manager.deliver(key, { text: `grant ${target}`, userId: 'U1', eventId: `e-${target}` });
      await core.manager.idle();
      expect(shown.some((s) => s.prompt?.kind === 'directory')).toBe(false);
      const result = (fake.requests[before + 1]!.body as { messages: { role: string; content: string }[] }).messages.at(
        -1,
      )!;
      expect(result.content).toContain('"granted":false');
      expect(result.content).toMatch(reason);
    }
  });

  it('warns when nobody is admin while shell and write tools are on, and fails closed on a malformed user list', async () => {
    const { core } = await boot();
    expect(core.warnings).toContain(
      'No ADMINS are set while shell or write tools are enabled: whoever starts a thread can approve its commands.',
    );
    await expect(boot({ ALLOWED_USERS: 'U1, <script>' })).rejects.toThrow(/ALLOWED_USERS: not user ids: <script>/);
  });
});

describe('the assembled core: where shell commands run', () => {
  const offered = (fake: FakeOpenAI) =>
    ((fake.requests[0]!.body as { tools: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);

  it('SHELL_SANDBOX=auto where bwrap cannot run: run_shell is not offered, and one start-up line says why and how to fix it', async () => {
    const { core, fake, logger } = await boot({}, undefined, { bwrapPath: await brokenBwrap(cleanups) });
    const lines = logger.lines.filter((line) => line.message.includes('run_shell is not offered'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn' });
    expect(lines[0]!.message).toContain('setting up uid map: Permission denied');
    expect(lines[0]!.message).toContain('apt-get install bubblewrap');
    expect(lines[0]!.message).toContain('SHELL_SANDBOX=off');
    fake.replyText('No shell here.');
    await core.manager.deliver(key, { text: 'run ls', userId: 'U1', eventId: 'e1' });
    await core.manager.idle();
    expect(offered(fake)).not.toContain('run_shell');
    expect(offered(fake)).toContain('read_file');
  });

  it('SHELL_SANDBOX=bwrap where bwrap cannot run: the start is refused with the reason', async () => {
    await expect(
      boot({ SHELL_SANDBOX: 'bwrap' }, undefined, { bwrapPath: await brokenBwrap(cleanups) }),
    ).rejects.toThrow(
      /SHELL_SANDBOX=bwrap, but the shell sandbox cannot run here: bwrap: setting up uid map: Permission denied/,
    );
  });

  it('by default commands run in the sandbox; SHELL_SANDBOX=off runs them unconfined, with a warning at every start', async () => {
    const sandboxed = await boot();
    expect(
      sandboxed.logger.lines.some(
        (line) =>
          line.level === 'info' && line.message.startsWith('shell commands run in a bubblewrap sandbox, no network'),
      ),
    ).toBe(true);
    const off = await boot({ SHELL_SANDBOX: 'off' });
    expect(off.core.warnings).toContain(UNCONFINED_WARNING);
    off.fake.replyText('ok');
    await off.core.manager.deliver(key, { text: 'hi', userId: 'U1', eventId: 'e1' });
    await off.core.manager.idle();
    expect(offered(off.fake)).toContain('run_shell');
  });

  it("a workspace that holds the bot's own files refuses to start", async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    // The store lives under dir/data: a workspace at dir would show it to every command.
    await expect(boot({ WORKSPACE_DIR: dir.path, STORE_URL: `sqlite://${dir.path}/data/bot.sqlite` })).rejects.toThrow(
      /WORKSPACE_DIR \(.+\) holds the store's folder/,
    );
    await expect(boot({ SHELL_ENV: 'OPENAI_API_KEY' })).rejects.toThrow(
      /SHELL_ENV: OPENAI_API_KEY is one of the bot's own secrets/,
    );
  });
});
