import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/tools/workspace.js';
import { createSandbox, type Sandbox } from './tool-kit.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
  await writeFile(path.join(sandbox.outside, 'secret.txt'), 'outside secret\n');
});
afterEach(async () => {
  await sandbox.cleanup();
});

describe('every path argument stays inside the workspace', () => {
  it('creates the workspace directory when it is missing', async () => {
    expect((await stat(sandbox.workspace)).isDirectory()).toBe(true);
  });

  it('refuses a ../ escape', async () => {
    await expect(sandbox.run('read_file', { path: '../outside/secret.txt' })).rejects.toThrow(
      /^path escapes the workspace: \.\.\/outside\/secret\.txt/,
    );
    await expect(sandbox.run('write_file', { path: '../x', content: 'no' })).rejects.toThrow(
      /path escapes the workspace/,
    );
    await expect(sandbox.run('list_dir', { path: '..' })).rejects.toThrow(/path escapes the workspace/);
  });

  it('refuses an absolute path outside', async () => {
    await expect(sandbox.run('read_file', { path: '/etc/passwd' })).rejects.toThrow(
      /path escapes the workspace: \/etc\/passwd/,
    );
    await expect(sandbox.run('search', { pattern: 'root', path: '/etc' })).rejects.toThrow(
      /path escapes the workspace/,
    );
  });

  it('accepts an absolute path inside, and a ../ that comes back in', async () => {
    await writeFile(path.join(sandbox.workspace, 'a.txt'), 'hello\n');
    expect(await sandbox.run('read_file', { path: path.join(sandbox.workspace, 'a.txt') })).toBe('hello');
    expect(await sandbox.run('read_file', { path: 'sub/../a.txt' })).toBe('hello');
  });

  it('refuses a symlink inside the workspace that points outside', async () => {
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workspace, 'innocent.txt'));
    await expect(sandbox.run('read_file', { path: 'innocent.txt' })).rejects.toThrow(
      /path escapes the workspace: innocent\.txt/,
    );
    await expect(sandbox.run('edit_file', { path: 'innocent.txt', old: 'outside', new: 'pwned' })).rejects.toThrow(
      /path escapes/,
    );
    expect(await readFile(path.join(sandbox.outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('refuses a file that does not exist yet under a symlinked directory pointing outside', async () => {
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'linked'));
    await expect(sandbox.run('write_file', { path: 'linked/new.txt', content: 'x' })).rejects.toThrow(
      /path escapes the workspace: linked\/new\.txt/,
    );
    await expect(sandbox.run('write_file', { path: 'linked/deeper/new.txt', content: 'x' })).rejects.toThrow(
      /path escapes/,
    );
    await expect(stat(path.join(sandbox.outside, 'new.txt'))).rejects.toThrow();
  });

  it('refuses a dangling symlink whose target would be created outside', async () => {
    await symlink(path.join(sandbox.outside, 'planted.txt'), path.join(sandbox.workspace, 'dangling'));
    await expect(sandbox.run('write_file', { path: 'dangling', content: 'x' })).rejects.toThrow(/path escapes/);
    await expect(stat(path.join(sandbox.outside, 'planted.txt'))).rejects.toThrow();
  });

  it('allows symlinks that stay inside, and operates on their target', async () => {
    await mkdir(path.join(sandbox.workspace, 'real'));
    await symlink(path.join(sandbox.workspace, 'real'), path.join(sandbox.workspace, 'alias'));
    await sandbox.run('write_file', { path: 'alias/file.txt', content: 'via alias' });
    expect(await readFile(path.join(sandbox.workspace, 'real', 'file.txt'), 'utf8')).toBe('via alias');
  });

  it('shows paths relative to the root, and refuses NUL bytes', async () => {
    const workspace = Workspace.open(sandbox.workspace);
    expect(workspace.relative(await workspace.resolve('.'))).toBe('.');
    expect(workspace.relative(await workspace.resolve('a/b/../c.txt'))).toBe('a/c.txt');
    await expect(workspace.resolve('a\0b')).rejects.toThrow(/NUL byte/);
  });

  it('a workspace that is itself reached through a symlink still works', async () => {
    const viaLink = path.join(sandbox.outside, 'ws-link');
    await symlink(sandbox.workspace, viaLink);
    const workspace = Workspace.open(viaLink);
    expect(workspace.root).toBe(sandbox.workspace);
    expect(workspace.relative(await workspace.resolve(path.join(viaLink, 'x.txt')))).toBe('x.txt');
  });
});

describe('a directory a person granted (request_directory)', () => {
  it('becomes reachable, by absolute path, with the same confinement rules inside it', async () => {
    await expect(sandbox.run('read_file', { path: path.join(sandbox.outside, 'secret.txt') })).rejects.toThrow(
      /path escapes the workspace/,
    );
    const real = sandbox.builtin.workspace.grant(sandbox.outside);
    expect(sandbox.builtin.workspace.roots).toEqual([sandbox.workspace, real]);
    expect(await sandbox.run('read_file', { path: path.join(sandbox.outside, 'secret.txt') })).toBe('outside secret');
    // Granting one directory does not open its parent.
    await expect(sandbox.run('read_file', { path: path.join(sandbox.outside, '..', 'elsewhere.txt') })).rejects.toThrow(
      /path escapes the workspace/,
    );
    expect(() => sandbox.builtin.workspace.grant(path.join(sandbox.outside, 'secret.txt'))).toThrow(/not a directory/);
  });
});

describe('request_directory never grants the bot itself', () => {
  // A small host: the bot's home, its project folder (with .env), its store, a workspace
  // two levels down, and a folder a person may legitimately share.
  let host: string;
  let workspace: Workspace;
  beforeEach(async () => {
    host = path.join(sandbox.outside, 'host');
    for (const folder of ['home/bot', 'srv/bot', 'srv/store/sessions', 'srv/config', 'srv/agent/ws', 'shared/docs']) {
      await mkdir(path.join(host, folder), { recursive: true });
    }
    await writeFile(path.join(host, 'srv/bot/.env'), 'API_KEY=secret\n');
    await symlink(path.join(host, 'srv/bot'), path.join(host, 'bot-link'));
    workspace = Workspace.open(path.join(host, 'srv/agent/ws'), {
      homeDir: path.join(host, 'home/bot'),
      // Given through a link: it is judged by where it really is.
      protectedPaths: [
        path.join(host, 'bot-link/.env'),
        path.join(host, 'srv/store'),
        path.join(host, 'srv/config/mcp.json'),
      ],
    });
  });
  const at = (relative: string) => path.join(host, relative);

  it('refuses the whole file system, the home folder and what holds it', () => {
    expect(() => workspace.grant('/')).toThrow('refused: / is the whole file system');
    expect(() => workspace.grant(at('home/bot'))).toThrow(`refused: ${at('home/bot')} is the bot's home folder`);
    expect(() => workspace.grant(at('home'))).toThrow(
      `refused: ${at('home')} holds the bot's home folder (${at('home/bot')})`,
    );
  });

  it('refuses a folder holding the workspace, and takes the workspace itself as already granted', () => {
    expect(() => workspace.grant(at('srv/agent'))).toThrow(
      `refused: ${at('srv/agent')} holds the workspace (${workspace.root}); grant a folder beside it`,
    );
    expect(workspace.grant(workspace.root)).toBe(workspace.root);
    expect(workspace.grant('.')).toBe(workspace.root);
    expect(workspace.roots).toEqual([workspace.root]);
  });

  it("refuses a folder holding the bot's own files, one of them, or one inside them", () => {
    expect(() => workspace.grant(at('srv/bot'))).toThrow(
      `refused: ${at('srv/bot')} holds the bot's own files (${at('srv/bot/.env')})`,
    );
    expect(() => workspace.grant(at('bot-link'))).toThrow(/holds the bot's own files/);
    expect(() => workspace.grant(at('srv/store'))).toThrow(
      `refused: ${at('srv/store')} is one of the bot's own folders`,
    );
    expect(() => workspace.grant(at('srv/store/sessions'))).toThrow(
      `refused: ${at('srv/store/sessions')} is inside the bot's own files (${at('srv/store')})`,
    );
    // A protected path that does not exist (yet) still guards the folder it would be in.
    expect(() => workspace.grant(at('srv/config'))).toThrow(
      `refused: ${at('srv/config')} holds the bot's own files (${at('srv/config/mcp.json')})`,
    );
    expect(workspace.roots).toEqual([workspace.root]);
  });

  it('still grants a folder beside them all', async () => {
    expect(workspace.grant(at('shared'))).toBe(at('shared'));
    expect(workspace.roots).toEqual([workspace.root, at('shared')]);
    expect(await workspace.resolve(at('shared/docs'))).toBe(at('shared/docs'));
  });

  const home = existsSync(os.homedir()) ? realpathSync(os.homedir()) : '/';
  it.skipIf(home === '/')('refuses the real home folder by default', () => {
    expect(() => Workspace.open(path.join(host, 'srv/agent/ws')).grant(home)).toThrow(
      `refused: ${home} is the bot's home folder`,
    );
  });
});

describe('what a grant card says about a folder (grantPreview)', () => {
  it('the real path, and writability for the file tools (the bot) and for shell commands (the sandbox’s own check)', async () => {
    await mkdir(path.join(sandbox.outside, 'project'));
    await symlink(path.join(sandbox.outside, 'project'), path.join(sandbox.outside, 'alias'));
    const asked: string[] = [];
    const workspace = Workspace.open(sandbox.workspace, {
      shellCanWrite: (real) => {
        asked.push(real);
        return false;
      },
    });
    expect(workspace.grantPreview(path.join(sandbox.outside, 'alias'))).toEqual({
      path: path.join(sandbox.outside, 'project'),
      access: { files: true, shell: false },
      accessText:
        'read and write for the file tools (they can change and delete files there); shell commands can only read it',
    });
    expect(asked).toEqual([path.join(sandbox.outside, 'project')]);
  });
});
