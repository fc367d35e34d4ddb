// The ledger's counters on the cluster's Redis, shared by every instance: a limit holds for
// the whole bot, not per instance.
//
// The ideas to hold:
// - `reserve` is one Lua script: for each limit it reads what is spent (a hash per counter),
//   adds the live reservations (a hash per counter: call id → "nusd:tokens:expiry"), and
//   refuses, or reserves the call's estimate on all of them. Two instances admitting at the
//   same moment are ordered by Redis, so together they can pass a limit by at most the
//   difference between a call's estimate and what it really used.
// - A reservation carries its own expiry, judged by Redis's clock (`TIME`) and swept by the
//   next check: a process that dies mid-call stops holding budget after `holdMs`.
// - `settle` is one MULTI: the reservation goes and the used amounts come in together.
// - Every key carries the `{spend}` hash tag: the script touches several counters at once,
//   which Redis Cluster allows only on one slot.
import type { Redis } from 'ioredis';
import {
  emptyTotals,
  type CounterAdd,
  type CounterTarget,
  type CounterTotals,
  type LimitCheck,
  type ReserveResult,
  type SpendCounters,
} from './spend-counters.js';

const RESERVE = `
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local n = #KEYS / 2
  for i = 1, n do
    local counter, holds = KEYS[2 * i - 1], KEYS[2 * i]
    local at = 2 + (i - 1) * 4
    local capU, capT = ARGV[at + 1], ARGV[at + 2]
    local addU, addT = tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])
    local spentU = tonumber(redis.call('HGET', counter, 'nusd') or '0')
    local spentT = tonumber(redis.call('HGET', counter, 'tok') or '0')
    local heldU, heldT = 0, 0
    local held = redis.call('HGETALL', holds)
    for j = 1, #held, 2 do
      local u, tk, exp = string.match(held[j + 1], '^(%-?%d+):(%-?%d+):(%d+)$')
      if exp == nil or tonumber(exp) <= now then
        redis.call('HDEL', holds, held[j])
      else
        heldU = heldU + tonumber(u)
        heldT = heldT + tonumber(tk)
      end
    end
    if capU ~= '' and spentU + heldU + addU > tonumber(capU) then return {0, i, 1, tostring(spentU), tostring(spentT)} end
    if capT ~= '' and spentT + heldT + addT > tonumber(capT) then return {0, i, 2, tostring(spentU), tostring(spentT)} end
  end
  for i = 1, n do
    local at = 2 + (i - 1) * 4
    redis.call('HSET', KEYS[2 * i], ARGV[1], ARGV[at + 3] .. ':' .. ARGV[at + 4] .. ':' .. (now + tonumber(ARGV[2])))
    redis.call('PEXPIRE', KEYS[2 * i], ARGV[2])
  end
  return {1}`;

const FIELDS = ['nusd', 'input', 'cachedInput', 'cacheWrite', 'output', 'reasoning', 'calls', 'estimated'] as const;

type ReserveCommand = (...parts: (string | number)[]) => Promise<unknown>;

export class RedisSpendCounters implements SpendCounters {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'chat-agent:spend:{spend}:',
  ) {
    if (!('spendReserve' in redis)) redis.defineCommand('spendReserve', { lua: RESERVE });
  }

  async reserve(id: string, checks: LimitCheck[], holdMs: number): Promise<ReserveResult> {
    if (checks.length === 0) return { ok: true };
    const keys = checks.flatMap((check) => [this.counterKey(check.counter), this.holdsKey(check.counter)]);
    const args = checks.flatMap((check) => [
      check.capNusd === undefined ? '' : Math.round(check.capNusd),
      check.capTokens === undefined ? '' : Math.round(check.capTokens),
      Math.round(check.addNusd),
      Math.round(check.addTokens),
    ]);
    const command = (this.redis as unknown as Record<'spendReserve', ReserveCommand>).spendReserve;
    const reply = (await command.call(
      this.redis,
      keys.length,
      ...keys,
      id,
      Math.max(1, Math.round(holdMs)),
      ...args,
    )) as (number | string)[];
    if (Number(reply[0]) === 1) return { ok: true };
    return {
      ok: false,
      index: Number(reply[1]) - 1,
      unit: Number(reply[2]) === 1 ? 'usd' : 'tokens',
      spentNusd: Number(reply[3]),
      spentTokens: Number(reply[4]),
    };
  }

  async settle(
    id: string,
    reserved: string[],
    targets: CounterTarget[],
    add: CounterAdd,
  ): Promise<{ nusd: number; tokens: number }[]> {
    const tokens = add.input + add.cachedInput + add.cacheWrite + add.output;
    const multi = this.redis.multi();
    for (const counter of reserved) multi.hdel(this.holdsKey(counter), id);
    const at: number[] = [];
    let index = reserved.length;
    for (const target of targets) {
      const key = this.counterKey(target.counter);
      at.push(index);
      multi.hincrby(key, 'nusd', Math.round(add.nusd));
      multi.hincrby(key, 'tok', tokens);
      index += 2;
      for (const field of FIELDS.slice(1)) {
        multi.hincrby(key, field, add[field]);
        index++;
      }
      multi.pexpire(key, target.ttlMs);
      index++;
      if (add.unpriced) {
        multi.sadd(this.unpricedKey(target.counter), add.unpriced);
        multi.pexpire(this.unpricedKey(target.counter), target.ttlMs);
        index += 2;
      }
    }
    const replies = (await multi.exec()) ?? [];
    const failed = replies.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
    return at.map((i) => ({ nusd: Number(replies[i]?.[1] ?? 0), tokens: Number(replies[i + 1]?.[1] ?? 0) }));
  }

  async read(counter: string): Promise<CounterTotals> {
    const [fields, unpriced] = await Promise.all([
      this.redis.hgetall(this.counterKey(counter)),
      this.redis.smembers(this.unpricedKey(counter)),
    ]);
    const totals = emptyTotals();
    for (const field of FIELDS) totals[field] = Number(fields[field] ?? 0);
    totals.unpriced = unpriced.sort();
    return totals;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    return (
      (await this.redis.set(`${this.prefix}claim:${key}`, '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) === 'OK'
    );
  }

  async getValue(key: string): Promise<string | undefined> {
    return (await this.redis.get(`${this.prefix}v:${key}`)) ?? undefined;
  }

  async setValue(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}v:${key}`, value, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async deleteValue(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}v:${key}`);
  }

  private counterKey(counter: string): string {
    return `${this.prefix}c:${counter}`;
  }

  private holdsKey(counter: string): string {
    return `${this.prefix}h:${counter}`;
  }

  private unpricedKey(counter: string): string {
    return `${this.prefix}u:${counter}`;
  }
}
