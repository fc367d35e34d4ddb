// A set of ids shared by every instance, each change one atomic Redis command (SADD, SREM):
// the open-sessions index of cluster mode (session-store.ts SharedIdSet), which a Keyv
// document rewritten by several instances would lose entries of.
import type { Redis } from 'ioredis';
import type { SharedIdSet } from '../store/shared-id-set.js';

export function redisIdSet(redis: Redis, key: string): SharedIdSet {
  return {
    add: async (id) => {
      await redis.sadd(key, id);
    },
    remove: async (id) => {
      await redis.srem(key, id);
    },
    all: () => redis.smembers(key),
  };
}
