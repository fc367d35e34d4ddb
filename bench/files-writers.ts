// What a saved upload costs the bot, by who writes it (src/tools/folder-writer.ts): the bot's
// own process (a bot that is not root) or, for a root bot, the helper running as its
// commands' user (src/sandbox/run-as-writer.ts), which adds a few pipe round trips per file
// and, once, the helper's start. Small files from memory, so the figure is the write path's
// own cost: the folder walk, the create, the write, the count of what the folder holds.
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FileIntake, FileTransfers, type FileSource } from '../src/files/index.js';
import { DEFAULT_RUN_AS } from '../src/sandbox/run-as.js';
import { RunAsWriter } from '../src/sandbox/run-as-writer.js';
import type { FolderWriter } from '../src/tools/folder-writer.js';
import { median } from './stats.js';
import type { BenchRow } from './suite.js';

const MESSAGES = 30;
const FILES_PER_MESSAGE = 10;
const ROUNDS = 3;
const FILE_BYTES = 4096;

const memorySource: FileSource = {
  open: async () => ({
    body: Readable.from([Buffer.alloc(FILE_BYTES, 97)]),
    contentType: 'text/csv',
    size: FILE_BYTES,
  }),
};

/** Milliseconds per upload over MESSAGES × FILES_PER_MESSAGE uploads into a fresh folder. */
async function perUpload(
  writer: FolderWriter | undefined,
  owner: { uid: number; gid: number } | undefined,
): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-uploads-'));
  await chmod(dir, 0o755);
  if (owner) await chown(dir, owner.uid, owner.gid);
  const transfers = new FileTransfers();
  transfers.registerSource('bench', memorySource);
  const intake = new FileIntake({
    transfers,
    maxFileBytes: 1 << 20,
    maxFilesPerMessage: FILES_PER_MESSAGE,
    maxConversationBytes: 1 << 30,
    ...(writer ? { writer } : {}),
  });
  const place = { folder: dir, uploads: join(dir, 'uploads', 'thread') };
  try {
    await intake.receive(place, [], new AbortController().signal);
    const started = performance.now();
    for (let message = 0; message < MESSAGES; message++) {
      const files = Array.from({ length: FILES_PER_MESSAGE }, (_, i) => ({
        platform: 'bench',
        id: `${message}-${i}`,
        name: `table-${message}-${i}.csv`,
        url: 'memory:',
        mimeType: 'text/csv',
      }));
      const result = await intake.receive(place, files, new AbortController().signal);
      if (result.stored.length !== FILES_PER_MESSAGE)
        throw new Error(`uploads were not saved: ${result.problems.join('; ')}`);
    }
    return (performance.now() - started) / (MESSAGES * FILES_PER_MESSAGE);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function uploadWriterRows(): Promise<BenchRow[]> {
  const inProcess: number[] = [];
  for (let round = 0; round < ROUNDS; round++) inProcess.push(await perUpload(undefined, undefined));
  const rows: BenchRow[] = [
    {
      key: 'files.upload_ms_in_process',
      value: median(inProcess),
      unit: 'ms',
      note: `one ${FILE_BYTES / 1024} KiB upload saved by the bot's own process (a bot that is not root), median of ${ROUNDS} runs of ${MESSAGES * FILES_PER_MESSAGE}`,
    },
  ];
  if (process.getuid?.() !== 0) return rows;
  const writer = new RunAsWriter(DEFAULT_RUN_AS);
  try {
    const startedAt = performance.now();
    const dir = await mkdtemp(join(tmpdir(), 'bench-helper-'));
    await chmod(dir, 0o755);
    await writer.makeFolder({ root: dir, steps: [] });
    const startMs = performance.now() - startedAt;
    await rm(dir, { recursive: true, force: true });
    const runAs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) runAs.push(await perUpload(writer, DEFAULT_RUN_AS));
    rows.push(
      {
        key: 'files.upload_ms_run_as',
        value: median(runAs),
        unit: 'ms',
        note: `the same upload saved by a root bot, through its helper running as uid ${DEFAULT_RUN_AS.uid} (already started)`,
      },
      {
        key: 'files.run_as_helper_start_ms',
        value: startMs,
        unit: 'ms',
        note: "the helper's start, paid by the first file after a minute without any",
      },
    );
  } finally {
    await writer.close();
  }
  return rows;
}
