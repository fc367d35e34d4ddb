// Where the bot keeps what lasts: the store opened from STORE_URL, fenced so that a shutdown
// for a restart writes nothing more, and, in cluster mode (a Redis store), the coordinator
// that owns sessions by lease across instances (src/cluster/).
import type { Redis } from 'ioredis';
import { clustered, storeUrlOf, type Config } from '../config.js';
import { clusterKeys, type ClusterKeys } from '../cluster/cluster-keys.js';
import type { RedisCoordinator } from '../cluster/redis-coordinator.js';
import { redisIdSet } from '../cluster/redis-id-set.js';
import { SingletonLease } from '../cluster/singleton-lease.js';
import type { EngineLogger } from '../engine/index.js';
import { recheckShell, type ShellStartup } from '../sandbox/shell-startup.js';
import { openKeyvStore, type OpenedStore } from '../store/keyv-factory.js';
import { PersistentInbox } from '../store/persistent-inbox.js';
import { SessionStore } from '../store/session-store.js';
import { fenceWrites, type WriteFence } from '../store/write-fence.js';

export interface CoreStorage {
  opened: OpenedStore;
  /** Closed by `suspend`: from then on the store holds what a crash would have left. */
  fence: WriteFence;
  /** Cluster mode only: the store's Redis, shared by the cluster's sets and leases. */
  shared: Redis | undefined;
  keys: ClusterKeys;
  store: SessionStore;
  inbox: PersistentInbox;
  cluster: RedisCoordinator | undefined;
  /** The shell as probed again once the store's folder was made private. */
  shell: ShellStartup;
}

export async function openStorage(config: Config, shell: ShellStartup, logger: EngineLogger): Promise<CoreStorage> {
  // The store's folder is made private, but never one on the way to what commands must reach.
  const opened = await openKeyvStore(storeUrlOf(config), 'bot', { keepReachable: shell.reachable });
  try {
    // Probed again if that changed a folder: the probe must have seen what commands will find.
    shell = await recheckShell(config, shell, { changedFolders: opened.changedFolders ?? [] });
  } catch (error) {
    await opened.close();
    throw error;
  }
  if (!shell.warn) logger.info({}, shell.message); // a warning is logged with the others, at the end of the start
  const fence = fenceWrites(opened.keyv);
  const shared = clustered(config) && opened.redis ? opened.redis : undefined;
  const keys = clusterKeys();
  const store = shared
    ? new SessionStore(opened.keyv, redisIdSet(shared, keys.openSessions), redisIdSet(shared, keys.allSessions))
    : new SessionStore(opened.keyv);
  // Imported only in cluster mode: it brings ioredis, which a bot on SQLite does not need.
  const cluster = shared
    ? await (await import('../cluster/cluster-setup.js')).clusterCoordinator(shared, config, logger)
    : undefined;
  const inbox = new PersistentInbox(
    store,
    cluster
      ? { claim: (itemId) => cluster.resolveOnce(itemId), release: (itemId) => cluster.unresolve(itemId) }
      : undefined,
  );
  return { opened, fence, shared, keys, store, inbox, cluster, shell };
}

/**
 * Cluster mode only: leases one instance holds for the whole bot, on the cluster's Redis under
 * this instance's node id (same keys as the coordinator's).
 */
export function singletonsOf(
  storage: CoreStorage,
  config: Config,
  logger: EngineLogger,
): ((name: string) => SingletonLease) | undefined {
  const { cluster, opened } = storage;
  if (!cluster || !opened.redis) return undefined;
  const redis = opened.redis;
  const keys = clusterKeys();
  return (name) =>
    new SingletonLease({
      redis,
      key: keys.singleton(name),
      nodeId: cluster.nodeId,
      leaseMs: config.CLUSTER_LEASE_MS,
      logger,
    });
}
