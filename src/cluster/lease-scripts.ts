// The Lua scripts of cluster mode. Each is one atomic step on the Redis primary, which is
// the whole point: a claim and its enqueue, an acquire and its epoch, "release only if no
// command waits", "consume a command only while still the owner". Times come from Redis
// (`TIME`), not from the instances' clocks, so a lease deadline means the same to everyone.
//
// Lease value: `{node}:{epoch}`. The epoch is INCR'd at every acquire and never reused, so a
// token names one ownership exactly once: a former owner's token can never match again.
import type { Redis } from 'ioredis';

const NOW_MS = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const SCRIPTS = {
  /**
   * KEYS: event, commands, running. ARGV: claim ('1' | '0'), claimTtlMs, command, sessionId,
   * leaseMs. → 1 queued, 0 already claimed. The session also enters `running` (unless it is
   * there): should its sender die before taking the lease, the sweep finds the command.
   */
  claimAndEnqueue: {
    keys: 3,
    lua: `
      if ARGV[1] == '1' then
        if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[2]) then return 0 end
      end
      redis.call('RPUSH', KEYS[2], ARGV[3])
      ${NOW_MS}
      redis.call('ZADD', KEYS[3], 'NX', now + tonumber(ARGV[5]), ARGV[4])
      return 1`,
  },
  /**
   * KEYS: lease, running, handedOver. ARGV: token, sessionId, markMs. Give a lease up for
   * another instance to take at once, and leave a mark that this was a hand-over, not a death.
   */
  handOver: {
    keys: 3,
    lua: `
      if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
      ${NOW_MS}
      redis.call('DEL', KEYS[1])
      redis.call('ZADD', KEYS[2], now, ARGV[2])
      redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
      return 1`,
  },
  /** KEYS: lease, epoch, running. ARGV: node, ttlMs, sessionId. → {1, token} or {0, holder}. */
  acquire: {
    keys: 3,
    lua: `
      local holder = redis.call('GET', KEYS[1])
      if holder then return {0, holder} end
      ${NOW_MS}
      local token = ARGV[1] .. ':' .. redis.call('INCR', KEYS[2])
      redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
      redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[3])
      return {1, token}`,
  },
  /** KEYS: lease, running. ARGV: token, ttlMs, sessionId. → 1 renewed, 0 not ours any more. */
  renew: {
    keys: 2,
    lua: `
      if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
      ${NOW_MS}
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
      redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
      return 1`,
  },
  /**
   * KEYS: lease, commands, running. ARGV: token, sessionId. → 1 released, 0 a command waits
   * (keep draining), -1 not ours. One step: a command enqueued before it is seen here and
   * refuses the release; one enqueued after finds the lease free and its sender takes it.
   */
  releaseIfIdle: {
    keys: 3,
    lua: `
      if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
      if redis.call('LLEN', KEYS[2]) > 0 then return 0 end
      redis.call('DEL', KEYS[1])
      redis.call('ZREM', KEYS[3], ARGV[2])
      return 1`,
  },
  /** KEYS: lease, commands. ARGV: token, command. → 1 removed, 0 not there, -1 not ours. */
  consume: {
    keys: 2,
    lua: `
      if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
      return redis.call('LREM', KEYS[2], 1, ARGV[2]) > 0 and 1 or 0`,
  },
  /** KEYS: running. ARGV: limit. → sessions whose lease deadline passed (their owner may be dead). */
  overdue: {
    keys: 1,
    lua: `
      ${NOW_MS}
      return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))`,
  },
  /** KEYS: singleton. ARGV: node, ttlMs. → 1 held (taken or renewed), 0 another holds it. */
  holdSingleton: {
    keys: 1,
    lua: `
      local holder = redis.call('GET', KEYS[1])
      if holder and holder ~= ARGV[1] then return 0 end
      redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
      return 1`,
  },
  /** KEYS: key. ARGV: value. Delete a key only while it still holds our value (a singleton lease, a resolve-once claim). */
  dropIfMine: {
    keys: 1,
    lua: `
      if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
      return 0`,
  },
} as const;

type ScriptName = keyof typeof SCRIPTS;

/** The scripts, loaded once per client (EVALSHA, re-sent when Redis lost its script cache). */
export class LeaseScripts {
  constructor(private readonly redis: Redis) {
    for (const [name, script] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: script.keys, lua: script.lua });
    }
  }

  run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const command = (this.redis as unknown as Record<ScriptName, (...parts: (string | number)[]) => Promise<unknown>>)[
      name
    ];
    return command.call(this.redis, ...keys, ...args);
  }
}
