// The intake on its own: a download that stalls is given up after its time and tried once
// more, and a stop during a download ends it at once; either way no partial file is left.
// The media preparers are told who shared each file, for their turns between people.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { FileIntake, FileTransfers, inputPreparer } from '../../src/files/index.js';
import { safeFileName } from '../../src/files/safe-name.js';
import { mediaPreparers } from '../../src/files/media-preparers.js';
import { writePng, writeTextPdf } from '../support/file-fixtures.js';
import { FileHost } from '../support/file-host.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(downloadTimeoutMs = 60_000) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const host = await new FileHost().start();
  cleanups.push(() => host.stop());
  const transfers = new FileTransfers();
  transfers.registerSource('test', host.source());
  const intake = new FileIntake({
    transfers,
    maxFileBytes: 1 << 20,
    maxFilesPerMessage: 5,
    maxConversationBytes: 1 << 22,
    downloadTimeoutMs,
  });
  const place = { folder: dir.path, uploads: join(dir.path, 'uploads') };
  return { host, intake, place };
}

describe('the file intake', () => {
  it('a download that stalls times out, is tried once more, and is named; no partial file stays', async () => {
    const { host, intake, place } = await setup(300);
    const slow = host.add('slow.csv', Buffer.alloc(64 * 1024, 97), 'text/csv', { stall: true });
    const result = await intake.receive(place, [slow], new AbortController().signal);
    expect(host.downloads(slow)).toBe(2);
    expect(result.stored).toEqual([]);
    expect(result.problems).toEqual(['slow.csv: the download failed (it took too long)']);
    expect(await readdir(place.uploads)).toEqual([]);
  });

  it('a stop during a download ends it without a retry', async () => {
    const { host, intake, place } = await setup();
    const slow = host.add('slow.csv', Buffer.alloc(64 * 1024, 97), 'text/csv', { stall: true });
    const stop = new AbortController();
    const pending = intake.receive(place, [slow], stop.signal);
    while (host.downloads(slow) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort(new Error('stopped by the user'));
    const result = await pending;
    expect(host.downloads(slow)).toBe(1);
    expect(result.problems).toEqual(['slow.csv: the turn was stopped']);
    expect(existsSync(join(place.uploads, 'slow.csv'))).toBe(false);
  });

  it('a file the download names (its event had only an id) is saved under that name, made safe', async () => {
    const { host, place } = await setup();
    const file = { ...host.add('F0123', Buffer.from('a,b\n'), 'text/csv'), name: 'F0123' };
    const transfers = new FileTransfers();
    const plain = host.source();
    transfers.registerSource('test', {
      open: async (f, signal) => ({ ...(await plain.open(f, signal)), name: '../Q3 report.csv' }),
    });
    const named = new FileIntake({
      transfers,
      maxFileBytes: 1 << 20,
      maxFilesPerMessage: 5,
      maxConversationBytes: 1 << 22,
    });
    const result = await named.receive(place, [file], new AbortController().signal);
    expect(result.stored).toMatchObject([{ path: 'uploads/Q3 report.csv', name: '../Q3 report.csv', kind: 'text' }]);
    expect(await readdir(place.uploads)).toEqual(['Q3 report.csv']);
  });

  it('a link where uploads/ goes is never written through: each file is named with why, nothing lands where it leads', async () => {
    const { host, intake, place } = await setup();
    const elsewhere = await tempDir();
    cleanups.push(elsewhere.remove);
    await symlink(elsewhere.path, place.uploads);
    const result = await intake.receive(
      place,
      [host.add('a.csv', Buffer.from('a'), 'text/csv')],
      new AbortController().signal,
    );
    expect(result.stored).toEqual([]);
    expect(result.problems).toEqual([
      'a.csv: not fetched: uploads in the workspace is not a folder (a link or a file has its name)',
    ]);
    expect(await readdir(elsewhere.path)).toEqual([]);
  });

  it("a link planted where an image's model copy goes is not written through: the copy gets a new name", async () => {
    const { host, place } = await setup();
    const transfers = new FileTransfers();
    transfers.registerSource('test', host.source());
    const intake = new FileIntake({
      transfers,
      maxFileBytes: 1 << 24,
      maxFilesPerMessage: 5,
      maxConversationBytes: 1 << 26,
      media: mediaPreparers(),
    });
    const outside = await tempDir();
    cleanups.push(outside.remove);
    const victim = join(outside.path, 'victim.txt');
    await writeFile(victim, 'keep me');
    await mkdir(join(place.uploads, '.for-model'), { recursive: true });
    await symlink(victim, join(place.uploads, '.for-model', 'big.png.jpg'));
    const png = await readFile(await writePng(join(outside.path, 'big.png'), 3000, 2000));
    const result = await intake.receive(place, [host.add('big.png', png, 'image/png')], new AbortController().signal);
    expect(await readFile(victim, 'utf8')).toBe('keep me');
    expect(result.stored[0]?.modelCopy?.path).toBe('uploads/.for-model/big.png-2.jpg');
  });

  it("the media preparers hear who shared a file and the turn's signal (their heavy work takes turns between people)", async () => {
    const { host, place } = await setup();
    const transfers = new FileTransfers();
    transfers.registerSource('test', host.source());
    const heard: { kind: string; requester?: string; signal?: AbortSignal; heldBytes?: number }[] = [];
    const intake = new FileIntake({
      transfers,
      maxFileBytes: 1 << 24,
      maxFilesPerMessage: 5,
      maxConversationBytes: 1 << 26,
      media: {
        prepareImage: async (_path, _out, request) => {
          heard.push({ kind: 'image', ...request });
          return { kind: 'as-is' };
        },
        extractPdfText: async (_path, request) => {
          const { held, ...rest } = request ?? {};
          // The PDF comes held open: the very file saved, read by descriptor, never by its path.
          heard.push({ kind: 'pdf', ...rest, heldBytes: held ? (await held.stat()).size : undefined });
          return { text: 'the text' };
        },
      },
    });
    const png = await readFile(await writePng(join(place.folder, 'shot.png'), 40, 30));
    const pdf = await readFile(await writeTextPdf(join(place.folder, 'q3.pdf'), [['Q3']]));
    const turn = new AbortController();
    const prepare = inputPreparer(intake, place);
    await prepare(
      {
        text: 'look',
        attachments: [host.add('shot.png', png, 'image/png'), host.add('q3.pdf', pdf, 'application/pdf')],
        source: { platform: 'slack', workspace: 'T1', userId: 'U1' },
      },
      turn.signal,
    );
    expect(heard).toEqual([
      { kind: 'image', requester: 'slack:T1:U1', signal: turn.signal },
      { kind: 'pdf', requester: 'slack:T1:U1', signal: turn.signal, heldBytes: pdf.length },
    ]);
  });

  it('makes hostile names safe', () => {
    expect(safeFileName('../../.env')).toBe('env');
    expect(safeFileName('..\\\\..\\\\boot.ini')).toBe('boot.ini');
    expect(safeFileName('...')).toBe('file');
    expect(safeFileName('a\u0000b\u202Egnp.exe')).toBe('abgnp.exe');
    expect(safeFileName('re:port?.csv')).toBe('re_port_.csv');
    expect(safeFileName(`${'x'.repeat(300)}.csv`)).toHaveLength(120);
    expect(safeFileName(`${'x'.repeat(300)}.csv`).endsWith('.csv')).toBe(true);
  });
});

describe('the download time limit', () => {
  it('holds when the heap is collected while a download stalls (a timeout signal inside AbortSignal.any is held only weakly on Node 20)', async () => {
    // The collector on demand, as --expose-gc gives it, without the flag on the whole run.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { host, intake, place } = await setup(300);
    const slow = host.add('slow.csv', Buffer.alloc(64 * 1024, 97), 'text/csv', { stall: true });
    const pending = intake.receive(place, [slow], new AbortController().signal);
    for (const attempt of [1, 2]) {
      while (host.downloads(slow) < attempt) await new Promise((resolve) => setTimeout(resolve, 10));
      gc();
    }
    const result = await pending;
    expect(host.downloads(slow)).toBe(2);
    expect(result.problems).toEqual(['slow.csv: the download failed (it took too long)']);
    expect(await readdir(place.uploads)).toEqual([]);
  });
});
