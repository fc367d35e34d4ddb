// Cluster mode's coordinator, built on the store's own Redis connection (documents and leases
// must live in one Redis: a fenced write checks the lease in the same script), plus a second
// connection for Pub/Sub, which a subscribed connection needs to itself.
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { EngineLogger } from '../engine/index.js';
import { RedisCoordinator } from './redis-coordinator.js';
import { connectedDuplicate } from './redis-keyv-store.js';

export async function clusterCoordinator(
  redis: Redis,
  config: Pick<Config, 'CLUSTER_LEASE_MS' | 'CLUSTER_SWEEP_MS'>,
  logger: EngineLogger,
): Promise<RedisCoordinator> {
  const subscriber = await connectedDuplicate(redis);
  const coordinator = new RedisCoordinator({
    redis,
    subscriber,
    timings: { leaseMs: config.CLUSTER_LEASE_MS, sweepMs: config.CLUSTER_SWEEP_MS },
    logger,
    onClose: () => subscriber.quit().then(() => undefined),
  });
  logger.info(
    { node: coordinator.nodeId, leaseMs: config.CLUSTER_LEASE_MS, sweepMs: config.CLUSTER_SWEEP_MS },
    'cluster mode: sessions are shared through Redis',
  );
  return coordinator;
}
