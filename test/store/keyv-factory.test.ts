// The SQLite store at rest: its folder is 0700 and its files 0600, so another account on
// the machine reads no transcript; a store left open by an earlier version is tightened.
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { tempDir } from '../support/test-connector.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(url: string): Promise<OpenedStore> {
  const opened = await openKeyvStore(url);
  cleanups.push(() => opened.close());
  return opened;
}

describe.skipIf(process.platform === 'win32')('the SQLite store is private to the bot', () => {
  it('a new store gets a 0700 folder and a 0600 database, and the WAL files written later are 0600 too', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const folder = join(dir.path, 'data');
    const opened = await open(`sqlite://${folder}/bot.sqlite`);
    await opened.keyv.set('a', 'transcript text');
    expect(await modeOf(folder)).toBe(0o700);
    expect(await modeOf(join(folder, 'bot.sqlite'))).toBe(0o600);
    expect(await modeOf(join(folder, 'bot.sqlite-wal'))).toBe(0o600);
    expect(await modeOf(join(folder, 'bot.sqlite-shm'))).toBe(0o600);
    expect(opened.notes).toEqual([]);
  });

  it('a store an earlier version left open to others is tightened, and a note says so', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const folder = join(dir.path, 'data');
    await mkdir(folder, { mode: 0o755 });
    await chmod(folder, 0o755);
    const first = await openKeyvStore(`sqlite://${folder}/bot.sqlite`);
    await first.keyv.set('a', 'kept');
    await first.close();
    await chmod(join(folder, 'bot.sqlite'), 0o644);
    await chmod(folder, 0o755);

    const opened = await open(`sqlite://${folder}/bot.sqlite`);
    expect(await opened.keyv.get('a')).toBe('kept');
    expect(await modeOf(folder)).toBe(0o700);
    expect(await modeOf(join(folder, 'bot.sqlite'))).toBe(0o600);
    expect(opened.notes).toEqual([
      `the store's folder ${folder} was open to other accounts (mode 755); it is now 0700`,
      `the store's file ${join(folder, 'bot.sqlite')} was open to other accounts (mode 644); it is now 0600`,
    ]);
  });

  it('a store placed in a shared folder (the working directory) leaves the folder alone, makes the file private and says why', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    await chmod(dir.path, 0o755);
    const cwd = process.cwd();
    process.chdir(dir.path);
    cleanups.push(async () => process.chdir(cwd));
    await writeFile(join(dir.path, 'README'), 'a project folder');
    const opened = await open('sqlite://bot.sqlite');
    expect(await modeOf(dir.path)).toBe(0o755);
    expect(await modeOf(join(dir.path, 'bot.sqlite'))).toBe(0o600);
    expect(opened.notes).toHaveLength(1);
    expect(opened.notes[0]).toMatch(/open to other accounts \(mode 755\) and shared, so it was left as it is/);
  });
});

describe('a store of record', () => {
  it('throws when SQLite fails to write, instead of answering false and losing the data quietly', async () => {
    const dir = await tempDir();
    const opened = await openKeyvStore(`sqlite://${join(dir.path, 'bot.sqlite')}`);
    await opened.keyv.set('kept', 1);
    await opened.close();
    await expect(opened.keyv.set('lost', 2)).rejects.toThrow();
    await dir.remove();
  });
});
