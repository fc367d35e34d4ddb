// Opening the data store from STORE_URL. Keyv is the seam: the code above depends on its
// interface only, so any Keyv backend works by URL. SQLite is the default (a file under
// data/), tuned for many small writes: WAL with synchronous=NORMAL takes a write from one
// fsync (about 1,200 writes/s on these machines) to a log append (about 6,900/s), and a
// crash can then lose at most the last moment's writes, never corrupt the file.
//
// Redis (redis://, rediss://) is cluster mode's store: src/cluster/redis-keyv-store.ts, an
// adapter of our own whose writes are fenced by the session lease; it needs no @keyv/redis.
// It is imported only for a Redis URL: ioredis would cost every SQLite bot about 10 MB.
//
// At rest the transcripts are private to the bot's account: the SQLite folder is 0700 and
// its files 0600, so another account on the machine can read neither the conversations nor
// the tool output in them.
import { chmod, mkdir, open, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { realpathSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import type { Redis } from 'ioredis';
import Keyv, { type KeyvStoreAdapter } from 'keyv';
import type { ClusterKeys } from '../cluster/cluster-keys.js';

export interface OpenedStore {
  keyv: Keyv;
  /** What kind of backend this is, for logs (never the URL: it may hold a password). */
  backend: string;
  /** Worth a warning at start-up: permissions that were tightened, or could not be. */
  notes: string[];
  /** Folders whose permissions opening the store changed (another start-up step may need to look again). */
  changedFolders?: string[];
  close(): Promise<void>;
  /**
   * Redis backends only: the store's connection, for the cluster coordinator to share (one
   * connection, one set of failure settings). `close()` closes it; the coordinator does not.
   * Pub/Sub and blocking commands need a connection of their own: `connectedDuplicate(redis)`
   * (src/cluster/redis-keyv-store.ts). A bare `duplicate()` inherits the disabled offline
   * queue and fails its first command ("Stream isn't writeable") until it has connected.
   */
  redis?: Redis;
  /** Redis backends only: the Redis key under which a store key (`session:x`) lives, for scripts. */
  documentKey?(storeKey: string): string;
}

const DEFAULT_STORE_URL = 'sqlite://data/bot.sqlite';

/**
 * The Keyv backends opened by URL from a package the operator installs (not a dependency:
 * most deployments never need them). SQLite and Redis are built in.
 * @internal
 */
export const STORE_PACKAGES: Readonly<Record<string, string>> = {
  postgres: '@keyv/postgres',
  postgresql: '@keyv/postgres',
  mysql: '@keyv/mysql',
  mongodb: '@keyv/mongo',
};

export interface StoreOptions {
  /** SQLite only: write-ahead logging (default true). Off: SQLite's default, an fsync per write. */
  wal?: boolean;
  /** Redis only: the cluster's key names (default `clusterKeys()`, prefix `chat-agent:`). */
  keys?: ClusterKeys;
  /** Redis only: how long a command may go unanswered before it fails (default 5,000 ms). */
  commandTimeoutMs?: number;
  /**
   * SQLite only: folders another user must still be able to walk to (WORKSPACE_DIR, for a
   * root bot's commands, which run as another uid): the store's folder is never closed when
   * it lies on the way to one of them.
   */
  keepReachable?: readonly string[];
}

export async function openKeyvStore(
  url: string = DEFAULT_STORE_URL,
  namespace = 'bot',
  options: StoreOptions = {},
): Promise<OpenedStore> {
  const scheme = url.slice(0, url.indexOf(':')).toLowerCase();
  if (url === 'memory://' || scheme === 'memory') {
    const keyv = new Keyv({ namespace });
    return { keyv, backend: 'memory', notes: [], close: () => keyv.disconnect() };
  }
  if (scheme === 'sqlite') {
    const path = url.slice('sqlite://'.length);
    if (!path) throw new Error('STORE_URL sqlite:// needs a file path, e.g. sqlite://data/bot.sqlite');
    const folder = await privateFolder(dirname(resolve(path)), options.keepReachable ?? []);
    const notes = folder.notes;
    notes.push(...(await privateFile(resolve(path))));
    const { default: KeyvSqlite } = await import('@keyv/sqlite');
    const store = new KeyvSqlite({ uri: `sqlite://${path}`, busyTimeout: 5000 });
    if (options.wal !== false) {
      await store.query('PRAGMA journal_mode=WAL');
      await store.query('PRAGMA synchronous=NORMAL');
    }
    // Left over from an earlier run with looser permissions (SQLite created them then).
    for (const companion of ['-wal', '-shm', '-journal'])
      notes.push(...(await privateFile(resolve(path) + companion, { onlyIfExists: true })));
    return { ...withAdapter(store, namespace, 'sqlite'), notes, changedFolders: folder.changed };
  }
  if (scheme === 'redis' || scheme === 'rediss') {
    const { openRedisKeyvStore } = await import('../cluster/redis-keyv-store.js');
    const store = await openRedisKeyvStore(url, { keys: options.keys, commandTimeoutMs: options.commandTimeoutMs });
    // throwOnErrors: Keyv 5 otherwise turns a failed get into "not found" and a failed set into `false`.
    const keyv = new Keyv({ store, namespace, throwOnErrors: true });
    return {
      keyv,
      backend: scheme,
      notes: [],
      close: () => keyv.disconnect(),
      redis: store.client,
      documentKey: (key) => store.documentKey(key),
    };
  }
  const adapter = STORE_PACKAGES[scheme];
  if (!adapter)
    throw new Error(
      `STORE_URL: unsupported scheme "${scheme}:" (use sqlite://, memory://, redis://, postgresql://, mysql:// or mongodb://)`,
    );
  let module: { default: new (url: string) => KeyvStoreAdapter };
  try {
    module = (await import(adapter)) as { default: new (url: string) => KeyvStoreAdapter };
  } catch {
    throw new Error(`STORE_URL uses ${scheme}://, which needs the ${adapter} package: npm install ${adapter}`);
  }
  return withAdapter(new module.default(url), namespace, scheme);
}

function withAdapter(store: KeyvStoreAdapter, namespace: string, backend: string): OpenedStore {
  // throwOnErrors: without it Keyv 5 turns a failed write into `false` and a failed read into
  // "not found", and the store of record would lose data without a word.
  const keyv = new Keyv({ store, namespace, throwOnErrors: true });
  return { keyv, backend, notes: [], close: () => keyv.disconnect() };
}

/**
 * The store's folder, created 0700. The folder is what also covers the files SQLite creates
 * later (the -wal and -shm files appear on the first write, and again after a checkpoint
 * removes them): whatever mode they get, another account cannot reach them through a
 * folder it may not enter. (SQLite also gives them the database file's own mode, 0600.)
 *
 * An existing folder with looser permissions is tightened, unless it is a shared place
 * (the working directory, the home folder, the temp folder, `/`, a sticky folder such as
 * /tmp, or one the bot does not own): there only the files are made private, and a note
 * says to give the store a folder of its own. Nor is a folder on the way to one that must
 * stay reachable (`keepReachable`: a root bot's WORKSPACE_DIR, which its commands reach as
 * another uid): closing it would leave every command unable to start. Only the files are
 * private there too, with the same note.
 */
const STICKY = 0o1000;

async function privateFolder(
  folder: string,
  keepReachable: readonly string[],
): Promise<{ notes: string[]; changed: string[] }> {
  const unchanged = (notes: string[] = []) => ({ notes, changed: [] });
  if (process.platform === 'win32') {
    await mkdir(folder, { recursive: true });
    return unchanged();
  }
  const onTheWayTo = keepReachable
    .map((place) => realOrResolved(place))
    .find((place) => holds(realOrResolved(folder), place));
  // Made with the usual mode when it leads somewhere others must reach: a 0700 ancestor would close the way.
  await mkdir(folder, { recursive: true, ...(onTheWayTo === undefined ? { mode: 0o700 } : {}) });
  const info = await stat(folder);
  const mode = info.mode & 0o777;
  if ((mode & 0o077) === 0) return unchanged();
  if (onTheWayTo !== undefined) {
    return unchanged([
      `the store's folder ${folder} holds ${onTheWayTo}, which the user commands run as must reach, so it was left open (mode ${octal(mode)}); the store's files are private, but give the store a folder of its own beside the workspace, e.g. STORE_URL=sqlite://${resolve(folder, 'data', 'bot.sqlite')}`,
    ]);
  }
  const shared = [process.cwd(), homedir(), tmpdir(), '/'].map((place) => resolve(place)).includes(folder);
  const mine = process.getuid === undefined || info.uid === process.getuid();
  if (shared || (info.mode & STICKY) !== 0 || !mine) {
    return unchanged([
      `the store's folder ${folder} is open to other accounts (mode ${octal(mode)}) and shared, so it was left as it is; the store's files are private, but give the store a folder of its own, e.g. STORE_URL=sqlite://data/bot.sqlite`,
    ]);
  }
  await chmod(folder, 0o700);
  return {
    notes: [`the store's folder ${folder} was open to other accounts (mode ${octal(mode)}); it is now 0700`],
    changed: [folder],
  };
}

/** Whether `place` is `folder` or lies below it. */
function holds(folder: string, place: string): boolean {
  return place === folder || place.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** The real path when it exists (links resolved, as the kernel walks it), else the path resolved. */
function realOrResolved(place: string): string {
  try {
    return realpathSync(resolve(place));
  } catch {
    return resolve(place);
  }
}

/**
 * Make a file 0600, creating the database file first with that mode so it is never, even
 * for a moment, readable by others (SQLite would create it with 0644 under a usual umask).
 */
async function privateFile(path: string, options: { onlyIfExists?: boolean } = {}): Promise<string[]> {
  if (process.platform === 'win32') return [];
  let mode: number;
  try {
    if (!options.onlyIfExists) await (await open(path, 'a', 0o600)).close();
    mode = (await stat(path)).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && options.onlyIfExists) return [];
    throw error;
  }
  if ((mode & 0o077) === 0) return [];
  try {
    await chmod(path, 0o600);
  } catch (error) {
    return [
      `the store's file ${path} is open to other accounts (mode ${octal(mode)}) and could not be made private: ${(error as Error).message}`,
    ];
  }
  return [`the store's file ${path} was open to other accounts (mode ${octal(mode)}); it is now 0600`];
}

function octal(mode: number): string {
  return mode.toString(8).padStart(3, '0');
}
