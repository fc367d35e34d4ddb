// The backends the store's conformance tests run on: `local` is what a single bot uses
// (memory:// for a throwaway store, SQLite for one kept across a reopen), `redis` is cluster
// mode's store (src/cluster/redis-keyv-store.ts) on a real redis-server. The same test body
// runs on each, unchanged: the Redis adapter must behave as a Keyv store like the others.
//
// One redis-server per test file, started on first use; each store gets its own key prefix,
// so tests never see each other's documents and none needs FLUSHDB.
import { clusterKeys } from '../../src/cluster/cluster-keys.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { RedisServer } from '../support/redis-server.js';
import { tempDir } from '../support/test-connector.js';

export interface StoreBackend {
  name: string;
  /** What `OpenedStore.backend` says for a store that keeps data. */
  persistent: string;
  /** A throwaway store. */
  fresh(): Promise<OpenedStore>;
  /** A place that keeps data: each call of the returned function opens it again. */
  place(): Promise<() => Promise<OpenedStore>>;
  /** After each test: remove what `place` created (the caller closes the stores). */
  cleanup(): Promise<void>;
  /** After all tests of a file. */
  dispose(): Promise<void>;
}

function localBackend(): StoreBackend {
  const dirs: (() => Promise<void>)[] = [];
  return {
    name: 'local (memory and SQLite)',
    persistent: 'sqlite',
    fresh: () => openKeyvStore('memory://'),
    async place() {
      const dir = await tempDir();
      dirs.push(dir.remove);
      // A folder that does not exist yet: opening creates it.
      const url = `sqlite://${dir.path}/nested/folder/bot.sqlite`;
      return () => openKeyvStore(url);
    },
    async cleanup() {
      for (const remove of dirs.splice(0)) await remove();
    },
    dispose: async () => undefined,
  };
}

function redisBackend(): StoreBackend {
  let server: Promise<RedisServer> | undefined;
  let stores = 0;
  const open = async (prefix: string) =>
    openKeyvStore((await (server ??= RedisServer.start())).url, 'bot', { keys: clusterKeys(prefix) });
  return {
    name: 'redis',
    persistent: 'redis',
    fresh: () => open(`test${++stores}:`),
    async place() {
      const prefix = `test${++stores}:`;
      return () => open(prefix);
    },
    cleanup: async () => undefined,
    async dispose() {
      if (server) await (await server).dispose();
    },
  };
}

export const storeBackends = (): StoreBackend[] => [localBackend(), redisBackend()];
