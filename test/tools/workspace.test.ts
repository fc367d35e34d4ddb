import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/tools/index.js';
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
    await expect(sandbox.run('read_file', { path: '../outside/secret.txt' })).rejects.toThrow(/^path escapes the workspace: \.\.\/outside\/secret\.txt/);
    await expect(sandbox.run('write_file', { path: '../x', content: 'no' })).rejects.toThrow(/path escapes the workspace/);
    await expect(sandbox.run('list_dir', { path: '..' })).rejects.toThrow(/path escapes the workspace/);
  });

  it('refuses an absolute path outside', async () => {
    await expect(sandbox.run('read_file', { path: '/etc/passwd' })).rejects.toThrow(/path escapes the workspace: \/etc\/passwd/);
    await expect(sandbox.run('search', { pattern: 'root', path: '/etc' })).rejects.toThrow(/path escapes the workspace/);
  });

  it('accepts an absolute path inside, and a ../ that comes back in', async () => {
    await writeFile(path.join(sandbox.workspace, 'a.txt'), 'hello\n');
    expect(await sandbox.run('read_file', { path: path.join(sandbox.workspace, 'a.txt') })).toBe('hello');
    expect(await sandbox.run('read_file', { path: 'sub/../a.txt' })).toBe('hello');
  });

  it('refuses a symlink inside the workspace that points outside', async () => {
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workspace, 'innocent.txt'));
    await expect(sandbox.run('read_file', { path: 'innocent.txt' })).rejects.toThrow(/path escapes the workspace: innocent\.txt/);
    await expect(sandbox.run('edit_file', { path: 'innocent.txt', old: 'outside', new: 'pwned' })).rejects.toThrow(/path escapes/);
    expect(await readFile(path.join(sandbox.outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('refuses a file that does not exist yet under a symlinked directory pointing outside', async () => {
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'linked'));
    await expect(sandbox.run('write_file', { path: 'linked/new.txt', content: 'x' })).rejects.toThrow(
      /path escapes the workspace: linked\/new\.txt/,
    );
    await expect(sandbox.run('write_file', { path: 'linked/deeper/new.txt', content: 'x' })).rejects.toThrow(/path escapes/);
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
    await expect(sandbox.run('read_file', { path: path.join(sandbox.outside, 'secret.txt') })).rejects.toThrow(/path escapes the workspace/);
    const real = sandbox.builtin.workspace.grant(sandbox.outside);
    expect(sandbox.builtin.workspace.roots).toEqual([sandbox.workspace, real]);
    expect(await sandbox.run('read_file', { path: path.join(sandbox.outside, 'secret.txt') })).toBe('outside secret');
    // Granting one directory does not open its parent.
    await expect(sandbox.run('read_file', { path: path.join(sandbox.outside, '..', 'elsewhere.txt') })).rejects.toThrow(/path escapes the workspace/);
    expect(() => sandbox.builtin.workspace.grant(path.join(sandbox.outside, 'secret.txt'))).toThrow(/not a directory/);
  });
});
