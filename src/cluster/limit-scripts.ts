// The Lua scripts of cluster mode's shared limits (redis-person-counters.ts, redis-model-slots.ts).
// Each check and its count is one atomic step on the Redis primary, so two instances admitting
// at the same moment are ordered by Redis and together never pass a limit. Times come from
// Redis (`TIME`), so a lease deadline means the same to every instance.
//
// A working thread and a model call hold their place by a lease: a deadline in a sorted set,
// pushed on by the holder's renewals. An instance that dies stops renewing, and the next check
// drops what it held once the deadline passes: a crashed instance holds nothing for long.
import type { Redis } from 'ioredis';

const NOW_MS = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const SCRIPTS = {
  /**
   * KEYS: starts, threads (one person's). ARGV: startId, sessionId, turnsPerMinute, threads,
   * windowMs, leaseMs. → {1}; {0, 1, working}: too many threads; {0, 2, recent, retryInMs}:
   * too many starts in the window. The thread being started does not count against itself.
   */
  personStart: `
    ${NOW_MS}
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
    local working = redis.call('ZCARD', KEYS[2])
    if redis.call('ZSCORE', KEYS[2], ARGV[2]) then working = working - 1 end
    if working >= tonumber(ARGV[4]) then return {0, 1, working} end
    local window = tonumber(ARGV[5])
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
    local recent = redis.call('ZCARD', KEYS[1])
    if recent >= tonumber(ARGV[3]) then
      local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
      return {0, 2, recent, tonumber(oldest[2]) + window - now}
    end
    redis.call('ZADD', KEYS[1], now, ARGV[1])
    redis.call('PEXPIRE', KEYS[1], window)
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), ARGV[2])
    redis.call('PEXPIRE', KEYS[2], ARGV[6])
    return {1}`,
  /**
   * KEYS: threads keys. ARGV: leaseMs, then one session id per key. Every thread this instance
   * holds works on: its deadline moves (it is put back if a pause let it lapse: it still works).
   */
  renewThreads: `
    ${NOW_MS}
    local lease = tonumber(ARGV[1])
    for i = 1, #KEYS do
      redis.call('ZADD', KEYS[i], now + lease, ARGV[i + 1])
      redis.call('PEXPIRE', KEYS[i], lease)
    end
    return #KEYS`,
  /** KEYS: slots. ARGV: slotId, max, leaseMs. → 1 taken, 0 every slot is held. */
  takeSlot: `
    ${NOW_MS}
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1`,
  /**
   * KEYS: slots. ARGV: max, leaseMs, then slot ids. Each held slot's deadline moves; one that
   * lapsed (a pause longer than the lease) is taken again only if there is room. → how many
   * could not be.
   */
  renewSlots: `
    ${NOW_MS}
    local lease = tonumber(ARGV[2])
    local lost = 0
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    for i = 3, #ARGV do
      if redis.call('ZSCORE', KEYS[1], ARGV[i]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
        redis.call('ZADD', KEYS[1], now + lease, ARGV[i])
      else
        lost = lost + 1
      end
    end
    redis.call('PEXPIRE', KEYS[1], lease)
    return lost`,
} as const;

export type LimitScript = keyof typeof SCRIPTS;

/** The scripts, loaded once per client (EVALSHA, re-sent when Redis lost its script cache); the key count is given per call. */
export class LimitScripts {
  constructor(private readonly redis: Redis) {
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua });
    }
  }

  run(name: LimitScript, keys: string[], args: (string | number)[]): Promise<unknown> {
    const command = (this.redis as unknown as Record<LimitScript, (...parts: (string | number)[]) => Promise<unknown>>)[
      name
    ];
    return command.call(this.redis, keys.length, ...keys, ...args);
  }
}
