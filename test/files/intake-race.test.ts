// Uploads taken in while a hostile command in a shared folder swaps a thread's uploads folder
// for a link to a folder only the bot may touch, as fast as it can: a thousand uploads in
// channel and in shared scope, and not one byte, file or owner changes where the link leads.
// When the tests run as root (as CI does), the bot is a root bot whose commands run as
// uid 65534, and so does the swap loop; otherwise both run as the tests' own user.
import { chmod, chown, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingFile } from '../../src/engine/index.js';
import { FileIntake, FileTransfers, uploadPlace, type FileSource } from '../../src/files/index.js';
import { DEFAULT_RUN_AS } from '../../src/sandbox/run-as.js';
import { RunAsWriter } from '../../src/sandbox/run-as-writer.js';
import {
  conversationFolderName,
  openConversationFolder,
  type WorkspaceScope,
} from '../../src/tools/conversation-folder.js';
import { startSwapper } from '../support/folder-swapper.js';
import { tempDir } from '../support/test-connector.js';

const ROOT = process.getuid?.() === 0;
const OWNER = ROOT ? DEFAULT_RUN_AS : undefined;
const UPLOADS = 1000;
const FILES_PER_MESSAGE = 10;
const GUARDED = 'only the bot may read this';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Serves each file's bytes from memory, as a platform's source streams them. */
const memorySource: FileSource = {
  open: async (file) => {
    const bytes = Buffer.from(`shared by B: ${file.name}\n`);
    return { body: Readable.from([bytes]), contentType: 'text/csv', size: bytes.length };
  },
};

const threadA = { platform: 'test', workspace: 'T1', channel: 'C1', thread: '1000.1' };
const threadB = { platform: 'test', workspace: 'T1', channel: 'C1', thread: '2000.2' };

async function raceIn(scope: Exclude<WorkspaceScope, 'thread'>): Promise<void> {
  const base = await tempDir();
  cleanups.push(base.remove);
  const workspaceDir = join(base.path, 'workspace');
  await mkdir(workspaceDir);
  if (OWNER) await chown(workspaceDir, OWNER.uid, OWNER.gid);
  // The folder only the bot may touch, holding files named as the uploads will be.
  const guarded = join(base.path, 'guarded');
  await mkdir(guarded, { mode: 0o700 });
  await chmod(guarded, 0o700);
  const names = Array.from({ length: UPLOADS }, (_, i) => `r${i}.csv`);
  for (const name of names) await writeFile(join(guarded, name), GUARDED, { mode: 0o600 });

  const folder = openConversationFolder(workspaceDir, scope, threadA, OWNER);
  const place = uploadPlace(folder, scope, threadB);
  const transfers = new FileTransfers();
  transfers.registerSource('test', memorySource);
  const intake = new FileIntake({
    transfers,
    maxFileBytes: 1 << 20,
    maxFilesPerMessage: FILES_PER_MESSAGE,
    maxConversationBytes: 1 << 30,
    ...(OWNER ? { writer: new RunAsWriter(OWNER) } : {}),
  });
  cleanups.push(() => intake.close());
  // The uploads folder exists before the loop starts, as after the thread's first file.
  const first = await intake.receive(place, [], new AbortController().signal);
  expect(first.problems).toEqual([]);

  const uploadsOf = join(folder, 'uploads');
  const swapper = await startSwapper(
    place.uploads,
    join(uploadsOf, `.held-${conversationFolderName('thread', threadA)}`),
    guarded,
    OWNER,
  );
  let stored = 0;
  const problems: string[] = [];
  let swaps = 0;
  try {
    for (let at = 0; at < UPLOADS; at += FILES_PER_MESSAGE) {
      const files: IncomingFile[] = names
        .slice(at, at + FILES_PER_MESSAGE)
        .map((name) => ({ platform: 'test', id: name, name, url: `memory://${name}`, mimeType: 'text/csv' }));
      const result = await intake.receive(place, files, new AbortController().signal);
      stored += result.stored.length;
      problems.push(...result.problems);
    }
  } finally {
    swaps = await swapper.stop();
  }

  // The race was run: the link stood in the folder's place many times. Each upload was saved,
  // or refused for the link in words (how many of each depends on the machine's timing).
  expect(swaps).toBeGreaterThan(100);
  expect(stored + problems.length).toBe(UPLOADS);
  const uploadsShown = `uploads/${conversationFolderName('thread', threadB)}`;
  const refusals = new Set(problems.map((line) => line.replace(/^r\d+\.csv: /, '')));
  const inWords = [
    new RegExp(
      `^not fetched: (uploads|${uploadsShown}) in the workspace is not a folder \\(a link or a file has its name\\)$`,
    ),
    // Removed between its making and its opening, three times over.
    /^not fetched: the uploads folder could not be made \(no such file or folder\)$/,
  ];
  expect([...refusals].filter((line) => !inWords.some((words) => words.test(line)))).toEqual([]);
  // Nothing was created where the link led, and nothing there changed owner or content.
  expect((await readdir(guarded)).sort()).toEqual([...names].sort());
  const changed: string[] = [];
  for (const name of names) {
    const info = await stat(join(guarded, name));
    const content = await readFile(join(guarded, name), 'utf8');
    if (info.uid !== process.getuid?.() || (info.mode & 0o777) !== 0o600 || content !== GUARDED)
      changed.push(`${name}: uid ${info.uid}, mode ${(info.mode & 0o777).toString(8)}`);
  }
  expect(changed).toEqual([]);
  const guardedInfo = await stat(guarded);
  expect(guardedInfo.uid).toBe(process.getuid?.());
  expect(guardedInfo.mode & 0o777).toBe(0o700);
}

describe('uploads taken in while a command swaps the uploads folder for a link', () => {
  it('in channel scope, a thousand uploads change nothing where the link leads', { timeout: 180_000 }, async () => {
    await raceIn('channel');
  });

  it('in shared scope, a thousand uploads change nothing where the link leads', { timeout: 180_000 }, async () => {
    await raceIn('shared');
  });
});
