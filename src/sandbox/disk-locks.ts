// Who may touch a workspace disk when: one operation on a folder at a time in this process,
// one process at a time on an image (a lock file beside it), and a folder of the mounted disk
// held open while a session uses it, which the kernel honours for every process: an unmount
// under a holder fails (EBUSY) instead of leaving it writing beneath the mount.
import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { processAlive } from './process-alive.js';

const LOCK_TRIES = 400;
const LOCK_PAUSE_MS = 25;
/** Told apart from another set of disks in this process (tests make several). */
const lockId = (): string => `${process.pid}:${Math.random().toString(36).slice(2)}`;

/** Runs work for one key after the work before it for that key, whatever became of that. */
export function serialByKey(): <T>(key: string, work: () => Promise<T>) => Promise<T> {
  const queues = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const previous = queues.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  };
}

/** One process at a time on an image: a lock file holding its owner's pid (a dead owner's lock is taken over). */
export async function lockedImage<T>(image: string, work: () => Promise<T>): Promise<T> {
  const lock = `${image}.lock`;
  const id = lockId();
  await mkdir(path.dirname(lock), { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(lock, id, { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number((await readFile(lock, 'utf8').catch(() => '')).split(':')[0]);
      if (Number.isInteger(owner) && owner > 0 && !processAlive(owner)) await rm(lock, { force: true });
      else if (attempt >= LOCK_TRIES) throw new Error(`the disk ${image} is locked by process ${owner}`);
      else await sleep(LOCK_PAUSE_MS);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

/** Open the mounted folder and check it is the disk, not the folder beneath (unmounted meanwhile). */
export function pinMounted(folder: string): number {
  const pin = openSync(folder, 'r');
  if (fstatSync(pin).dev === statSync(path.dirname(folder)).dev) {
    closeSync(pin);
    throw new Error(`the disk of ${folder} is not mounted there`);
  }
  return pin;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
