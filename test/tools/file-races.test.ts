// A hostile person with a shell in the workspace against the file tools: hard links to a
// secret outside, a folder swapped for a link while the tools run, a FIFO that would block.
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { link, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/engine/index.js';
import { asText, createSandbox, type Sandbox } from './tool-kit.js';

const SECRET = 'API_KEY=sk-secret-marker';
/**
 * The races below are bounded by work (a count of calls), not by time: on a busy machine, with
 * the swapper taking a core of its own, they take longer and must not fail for it.
 */
const RACE_TIMEOUT = { timeout: 300_000 };

let sandbox: Sandbox;
let swapper: ChildProcess | undefined;
beforeEach(async () => {
  sandbox = await createSandbox();
  await writeFile(path.join(sandbox.outside, '.env'), `${SECRET}\n`);
});
afterEach(async () => {
  if (swapper && swapper.exitCode === null && swapper.signalCode === null) {
    const exited = once(swapper, 'exit');
    swapper.kill('SIGKILL');
    await exited;
  }
  swapper = undefined;
  await sandbox.cleanup();
});

describe('a hard link in the workspace to a secret outside it', () => {
  beforeEach(async () => {
    await link(path.join(sandbox.outside, '.env'), path.join(sandbox.workspace, 'notes.txt'));
  });

  it('read_file refuses it by name and never returns the secret', async () => {
    await expect(sandbox.run('read_file', { path: 'notes.txt' })).rejects.toThrow(
      'refused: notes.txt has 2 hard links (other names for the same file), and another one may lie outside the workspace, so the file tools do not open it',
    );
  });

  it('edit_file and write_file refuse it and leave the secret untouched', async () => {
    await expect(sandbox.run('edit_file', { path: 'notes.txt', old: 'API_KEY', new: 'STOLEN' })).rejects.toThrow(
      /refused: notes\.txt has 2 hard links/,
    );
    await expect(sandbox.run('write_file', { path: 'notes.txt', content: 'overwritten' })).rejects.toThrow(
      /refused: notes\.txt has 2 hard links/,
    );
    expect(await readFile(path.join(sandbox.outside, '.env'), 'utf8')).toBe(`${SECRET}\n`);
  });

  it('search skips it, says so, and refuses it when asked for by name', async () => {
    await writeFile(path.join(sandbox.workspace, 'plain.txt'), 'API_KEY is documented here\n');
    expect(await sandbox.run('search', { pattern: 'API_KEY' })).toBe(
      'plain.txt:1: API_KEY is documented here\n[1 file(s) not opened (hard links, special files, or changed while searching)]',
    );
    await expect(sandbox.run('search', { pattern: 'API_KEY', path: 'notes.txt' })).rejects.toThrow(
      /refused: notes\.txt has 2 hard links/,
    );
  });
});

describe('a FIFO in the workspace', () => {
  // Opening a FIFO for reading waits for a writer that never comes: a tool that did would
  // never answer, and the test would end at its timeout, not on a clock.
  it('read_file and write_file refuse it at once instead of waiting for the other end', async () => {
    execFileSync('mkfifo', [path.join(sandbox.workspace, 'pipe')]);
    await expect(sandbox.run('read_file', { path: 'pipe' })).rejects.toThrow(
      'pipe is not a regular file (a named pipe); only regular files can be opened',
    );
    await expect(sandbox.run('write_file', { path: 'pipe', content: 'x' })).rejects.toThrow(
      /pipe is not a regular file \(a named pipe\)/,
    );
    await expect(sandbox.run('edit_file', { path: 'pipe', old: 'x', new: 'y' })).rejects.toThrow(
      /pipe is not a regular file/,
    );
  });
});

// Only where Node can ask where a descriptor is (/proc) is the race closed, not narrowed
// (see descriptorPath in safe-open.ts).
// Linux only, like the bot's sandbox: without /proc/self/fd the tools fall back to a weaker check (safe-open.ts).
describe('a folder swapped for a link to outside while the tools run', () => {
  // ws/dir flips between a real folder (its file.txt says "inside") and a link to the
  // outside folder (its file.txt holds the secret), as fast as rename(2) allows.
  beforeEach(async () => {
    const dir = path.join(sandbox.workspace, 'dir');
    await mkdir(dir);
    await writeFile(path.join(dir, 'file.txt'), 'inside\n');
    await writeFile(path.join(sandbox.outside, 'file.txt'), `${SECRET}\n`);
    await writeFile(path.join(sandbox.outside, 'only-outside.txt'), `${SECRET}\n`);
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'link'));
    swapper = await startSwapping(sandbox.workspace);
  });

  it('read_file never returns the outside file, over 3,000 reads', RACE_TIMEOUT, async () => {
    const outcome = { read: 0, refused: 0, leaked: 0 };
    for (let i = 0; i < 3_000; i++) {
      const answer = await sandbox.run('read_file', { path: 'dir/file.txt' }).then(asText, (error: unknown) => {
        outcome.refused++;
        return String(error);
      });
      if (answer.includes('sk-secret-marker')) outcome.leaked++;
      else if (answer === 'inside') outcome.read++;
    }
    report('read_file', outcome);
    expectStillSwapping();
    expect(outcome.leaked).toBe(0);
    expect(outcome.read).toBeGreaterThan(0);
  });

  it(
    'write_file never writes outside, nor leaves a file or folder there, over 1,000 writes',
    RACE_TIMEOUT,
    async () => {
      const outsideFile = path.join(sandbox.outside, 'file.txt');
      const outcome = { written: 0, refused: 0, overwroteOutside: 0 };
      for (let i = 0; i < 1_000; i++) {
        // An existing file, a new file, and a new file in a new folder.
        const target = ['dir/file.txt', `dir/new-${i}.txt`, `dir/sub-${i}/new.txt`][i % 3]!;
        await sandbox.run('write_file', { path: target, content: `written ${i}\n` }).then(
          () => outcome.written++,
          () => outcome.refused++,
        );
        if ((await readFile(outsideFile, 'utf8')) !== `${SECRET}\n`) {
          outcome.overwroteOutside++;
          await writeFile(outsideFile, `${SECRET}\n`);
        }
      }
      const leftOutside = (await readdir(sandbox.outside)).filter(
        (name) => !['.env', 'file.txt', 'only-outside.txt'].includes(name),
      );
      report('write_file', { ...outcome, leftOutside: leftOutside.length });
      expectStillSwapping();
      expect(outcome.overwroteOutside).toBe(0);
      expect(leftOutside).toEqual([]);
      expect(outcome.written).toBeGreaterThan(0);
    },
  );

  it('list_dir and search never show what is in the outside folder, over 1,000 calls each', RACE_TIMEOUT, async () => {
    const outcome = { listed: 0, searched: 0, refused: 0, leaked: 0 };
    const answer = (result: Promise<ToolResult>, succeeded: 'listed' | 'searched') =>
      result.then(
        (value) => {
          outcome[succeeded]++;
          return asText(value);
        },
        (error: unknown) => {
          outcome.refused++;
          return String(error);
        },
      );
    for (let i = 0; i < 1_000; i++) {
      const listing = await answer(sandbox.run('list_dir', { path: 'dir' }), 'listed');
      // Literal text is matched on this thread; a regular expression in a worker started per
      // search, which costs more than the race itself. Files are opened here either way
      // (search.ts), so one call in fifty takes the worker's path and the rest stay cheap.
      const found = await answer(
        sandbox.run('search', { pattern: 'secret-marker', literal: i % 50 !== 0, path: 'dir' }),
        'searched',
      );
      if (listing.includes('only-outside') || found.includes('sk-secret-marker')) outcome.leaked++;
    }
    report('list_dir+search', outcome);
    expectStillSwapping();
    expect(outcome.leaked).toBe(0);
    expect(outcome.listed).toBeGreaterThan(0);
    expect(outcome.searched).toBeGreaterThan(0);
  });
});

/**
 * A separate process that keeps renaming ws/dir away, the link into its place, and back.
 * A folder a tool made at ws/dir in the instant it was missing is thrown away. Resolves
 * once the first swap is done, so every test call races a running swapper.
 */
async function startSwapping(workspace: string): Promise<ChildProcess> {
  const script = `
    const { renameSync, rmSync } = require('node:fs');
    const at = (name) => process.env.SWAP_WORKSPACE + '/' + name;
    const [dir, parked, link] = [at('dir'), at('parked'), at('link')];
    const move = (from, to) => {
      for (;;) {
        try {
          return renameSync(from, to);
        } catch (error) {
          if (!['EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(error.code)) throw error;
          try { rmSync(to, { recursive: true, force: true }); } catch {}
        }
      }
    };
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let first = true; ; first = false) {
      move(dir, parked); move(link, dir);
      move(dir, link); move(parked, dir);
      if (first) process.stdout.write('swapping\\n');
      // Every other round, rest a moment as the real folder, so that many calls see it from
      // end to end (without rests nine in ten calls are refused, with longer ones few race).
      if (Math.random() < 0.5) Atomics.wait(pause, 0, 0, 0.1);
    }`;
  const child = spawn(process.execPath, ['-e', script], {
    env: { SWAP_WORKSPACE: workspace },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(child.stdout, 'data');
  return child;
}

/** The race really ran: the swapper is still swapping once the test is done. */
function expectStillSwapping(): void {
  expect(swapper?.exitCode).toBeNull();
  expect(swapper?.signalCode).toBeNull();
}

/** The measured outcome of a race, for whoever reads the test log. */
function report(tool: string, outcome: Record<string, number>): void {
  if (process.env.RACE_REPORT) console.info(`${tool} under a swapping folder: ${JSON.stringify(outcome)}`);
}
