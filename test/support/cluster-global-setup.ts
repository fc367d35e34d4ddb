// For the `sessions-on-redis` test project (vitest.config.ts): one redis-server for the run,
// whose URL the test bots read through `inject('clusterRedisUrl')` (test-connector.ts), so
// the same session suites run on the Redis coordinator. Other projects get no URL.
import type { TestProject } from 'vitest/node';
import { RedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    clusterRedisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await RedisServer.start();
  project.provide('clusterRedisUrl', redis.url);
  return () => redis.dispose();
}
