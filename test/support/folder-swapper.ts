// A hostile command's swap loop, for race tests: a process of its own (run as the sandbox's
// uid when the tests run as root, as a sandboxed command would be) that keeps swapping a
// folder for a link to somewhere else and back, as fast as it can, until it is stopped. It
// counts the swaps it made, so a test can show the race was really run.
import { spawn, type ChildProcess } from 'node:child_process';

// A batch of swaps, then a turn of the event loop, so SIGTERM is heard between batches.
const SWAPPER_SOURCE = String.raw`
'use strict';
const fs = require('node:fs');
const [target, hold, linkTo] = JSON.parse(process.argv[1]);
let swaps = 0;
let round = 0;
let held = null;
let stopping = false;
process.on('SIGTERM', () => { stopping = true; });
function batch() {
  for (let i = 0; i < 200; i++) {
    // The folder back in its place; if the bot made a new one meanwhile and filled it, the old one stays aside.
    if (held !== null) {
      try { if (fs.lstatSync(target).isSymbolicLink()) fs.unlinkSync(target); } catch {}
      try { fs.renameSync(held, target); } catch {}
      held = null;
    }
    // Then the link in its place.
    const aside = hold + '.' + round++;
    try { fs.renameSync(target, aside); } catch { continue; }
    held = aside;
    try { fs.symlinkSync(linkTo, target); swaps++; } catch {}
  }
  if (stopping) {
    process.stdout.write(JSON.stringify({ swaps }) + '\n', () => process.exit(0));
    return;
  }
  setImmediate(batch);
}
process.stdout.write('ready\n');
batch();
`;

export interface Swapper {
  /** Stop the loop; resolves with how many times the link stood where the folder was. */
  stop(): Promise<number>;
}

/**
 * Swap `target` (a folder) for a link to `linkTo` and back, again and again; `hold` is where
 * the real folder waits meanwhile (beside it). Runs as `owner` when given (the tests as root).
 */
export async function startSwapper(
  target: string,
  hold: string,
  linkTo: string,
  owner?: { uid: number; gid: number },
): Promise<Swapper> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SWAPPER_SOURCE, JSON.stringify([target, hold, linkTo])], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: '/',
    env: {},
    ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (out.includes('ready\n')) resolve();
    };
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`the swap loop ended before it started (exit ${code})`)), reject);
  });
  return {
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) throw new Error(`the swap loop did not report (exit ${code}): ${out}`);
      return (JSON.parse(last) as { swaps: number }).swaps;
    },
  };
}
