// The two writers of files in folders the workspace's commands can change: the bot's own
// (in process) and a root bot's, whose helper writes as the commands' run-as user. Both keep
// one contract: nothing is written through a link, nothing existing is replaced by a new
// file, and a file that is not a plain file is refused in words. The run-as writer also
// leaves the kernel to hold it to that user's rights (run only where the tests run as root).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RUN_AS } from '../../src/sandbox/run-as.js';
import { RunAsWriter } from '../../src/sandbox/run-as-writer.js';
import { InProcessWriter, NotAFileError, type FolderWriter } from '../../src/tools/folder-writer.js';
import { NotAFolderError } from '../../src/tools/pinned-folder.js';
import { tempDir } from '../support/test-connector.js';

const ROOT = process.getuid?.() === 0;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Kind {
  name: string;
  make(): FolderWriter;
  /** Who the folders handed to the writer belong to (the run-as user's, as a workspace is). */
  owner?: { uid: number; gid: number };
}

const kinds: Kind[] = [{ name: 'the in-process writer', make: () => new InProcessWriter() }];
if (ROOT)
  kinds.push({
    name: "a root bot's run-as writer",
    make: () => new RunAsWriter(DEFAULT_RUN_AS),
    owner: DEFAULT_RUN_AS,
  });

async function folderFor(kind: Kind): Promise<{ root: string; outside: string; writer: FolderWriter }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const root = join(dir.path, 'conversation');
  const outside = join(dir.path, 'outside');
  await mkdir(root);
  await mkdir(outside);
  if (kind.owner) await chown(root, kind.owner.uid, kind.owner.gid);
  const writer = kind.make();
  cleanups.push(() => writer.close());
  return { root, outside, writer };
}

async function writeAll(
  writer: FolderWriter,
  at: { root: string; steps: string[] },
  name: string,
  text: string,
): Promise<string> {
  const file = await writer.createUnique(at, name);
  await file.write(Buffer.from(text));
  await file.close();
  return file.name;
}

describe.each(kinds)('$name', (kind) => {
  it('makes the folders on the way and a new file; a taken name, or a link planted at it, gets the next number', async () => {
    const { root, outside, writer } = await folderFor(kind);
    const at = { root, steps: ['uploads', 'thread-b'] };
    expect(await writeAll(writer, at, 'report.csv', 'one')).toBe('report.csv');
    expect(await writeAll(writer, at, 'report.csv', 'two')).toBe('report-2.csv');
    await writeFile(join(outside, 'victim.csv'), 'keep me');
    await symlink(join(outside, 'victim.csv'), join(root, 'uploads', 'thread-b', 'report-3.csv'));
    expect(await writeAll(writer, at, 'report.csv', 'three')).toBe('report-4.csv');
    expect(await readFile(join(outside, 'victim.csv'), 'utf8')).toBe('keep me');
    expect(await readFile(join(root, 'uploads', 'thread-b', 'report-4.csv'), 'utf8')).toBe('three');
  });

  it('a link where a folder of the path goes is refused by name, and nothing lands where it leads', async () => {
    const { root, outside, writer } = await folderFor(kind);
    await mkdir(join(root, 'uploads'));
    if (kind.owner) await chown(join(root, 'uploads'), kind.owner.uid, kind.owner.gid);
    await symlink(outside, join(root, 'uploads', 'thread-b'));
    const refused = await writer
      .createUnique({ root, steps: ['uploads', 'thread-b'] }, 'a.csv')
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NotAFolderError);
    expect((refused as NotAFolderError).shown).toBe('uploads/thread-b');
    await expect(writer.makeFolder({ root, steps: ['uploads', 'thread-b', 'deeper'] })).rejects.toThrow(
      'uploads/thread-b is not a folder (a link or a file has its name)',
    );
    expect(await readdir(outside)).toEqual([]);
  });

  it('opens an existing file for writing without emptying it, and refuses a link, a folder and a named pipe in words', async () => {
    const { root, outside, writer } = await folderFor(kind);
    const at = { root, steps: ['notes'] };
    await writeAll(writer, at, 'todo.txt', 'first draft');
    const existing = await writer.openForWriting(at, 'todo.txt');
    expect({ created: existing.created, size: existing.size, nlink: existing.nlink }).toEqual({
      created: false,
      size: 11,
      nlink: 1,
    });
    await existing.truncate();
    await existing.write(Buffer.from('second'));
    expect(await existing.close()).toBe(6);
    expect(await readFile(join(root, 'notes', 'todo.txt'), 'utf8')).toBe('second');

    await writeFile(join(outside, 'secret'), 'keep me');
    await symlink(join(outside, 'secret'), join(root, 'notes', 'link.txt'));
    await mkdir(join(root, 'notes', 'folder.txt'));
    execFileSync('mkfifo', [join(root, 'notes', 'pipe.txt')]);
    for (const [name, what] of [
      ['link.txt', 'link'],
      ['folder.txt', 'directory'],
      ['pipe.txt', 'special'],
    ] as const) {
      const refused = await writer.openForWriting(at, name).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(NotAFileError);
      expect((refused as NotAFileError).kind).toBe(what);
    }
    expect(await readFile(join(outside, 'secret'), 'utf8')).toBe('keep me');
  });

  it('a rename never replaces another file, and a discard removes only the file it made', async () => {
    const { root, writer } = await folderFor(kind);
    const at = { root, steps: [] };
    await writeFile(join(root, 'Q3 report.csv'), 'already here');
    if (kind.owner) await chown(join(root, 'Q3 report.csv'), kind.owner.uid, kind.owner.gid);
    const file = await writer.createUnique(at, 'F0123');
    await file.write(Buffer.from('a,b\n'));
    expect(await file.rename('Q3 report.csv')).toBe('Q3 report-2.csv');
    await file.close();
    expect(await readFile(join(root, 'Q3 report.csv'), 'utf8')).toBe('already here');
    expect(await readFile(join(root, 'Q3 report-2.csv'), 'utf8')).toBe('a,b\n');
    expect(existsSync(join(root, 'F0123'))).toBe(false);

    const made = await writer.createUnique(at, 'partial.bin');
    await made.write(Buffer.alloc(100));
    await made.discard();
    const opened = await writer.openForWriting(at, 'Q3 report.csv');
    await opened.discard();
    expect((await readdir(root)).sort()).toEqual(['Q3 report-2.csv', 'Q3 report.csv']);
  });
});

describe.runIf(ROOT)("a root bot's run-as writer, held to the run-as user's rights", () => {
  it('what it makes belongs to the run-as user from the start, and its helper runs as that user with no environment', async () => {
    const kind = kinds[1]!;
    const { root, writer } = await folderFor(kind);
    const file = await writer.createUnique({ root, steps: ['uploads'] }, 'a.csv');
    const helper = (writer as RunAsWriter).pid!;
    const status = await readFile(`/proc/${helper}/status`, 'utf8');
    expect(status).toMatch(
      new RegExp(
        `^Uid:\\s+${DEFAULT_RUN_AS.uid}\\s+${DEFAULT_RUN_AS.uid}\\s+${DEFAULT_RUN_AS.uid}\\s+${DEFAULT_RUN_AS.uid}$`,
        'm',
      ),
    );
    expect(status).toMatch(/^Groups:\s*$/m);
    expect(await readFile(`/proc/${helper}/environ`, 'utf8')).toBe('');
    await file.write(Buffer.from('x'));
    await file.close();
    for (const made of [join(root, 'uploads'), join(root, 'uploads', 'a.csv')]) {
      const info = await lstat(made);
      expect({ uid: info.uid, gid: info.gid }).toEqual({ uid: DEFAULT_RUN_AS.uid, gid: DEFAULT_RUN_AS.gid });
    }
  });

  it('where only root may write, it may not either: the kernel refuses, and nothing is made', async () => {
    const kind = kinds[1]!;
    const { root, writer } = await folderFor(kind);
    const rootsOnly = join(root, 'root-only');
    await mkdir(rootsOnly);
    await chmod(rootsOnly, 0o755);
    await writeFile(join(rootsOnly, 'config.ini'), 'root wrote this', { mode: 0o644 });
    await expect(writer.openForWriting({ root: rootsOnly, steps: [] }, 'config.ini')).rejects.toMatchObject({
      code: 'EACCES',
    });
    await expect(writer.openForWriting({ root: rootsOnly, steps: [] }, 'new.txt')).rejects.toMatchObject({
      code: 'EACCES',
    });
    await expect(writer.makeFolder({ root: rootsOnly, steps: ['sub'] })).rejects.toMatchObject({ code: 'EACCES' });
    expect(await readdir(rootsOnly)).toEqual(['config.ini']);
    expect(await readFile(join(rootsOnly, 'config.ini'), 'utf8')).toBe('root wrote this');
  });

  it('a closed writer ends its helper, and the next request starts another', async () => {
    const kind = kinds[1]!;
    const { root, writer } = await folderFor(kind);
    await writer.makeFolder({ root, steps: ['a'] });
    const first = (writer as RunAsWriter).pid!;
    await writer.close();
    expect(existsSync(`/proc/${first}`)).toBe(false);
    await writer.makeFolder({ root, steps: ['b'] });
    expect((writer as RunAsWriter).pid).not.toBe(first);
    expect((await stat(join(root, 'b'))).isDirectory()).toBe(true);
  });
});
