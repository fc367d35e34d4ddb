// The document store of cluster mode: a Keyv 5 store adapter over ioredis, with writes fenced
// by the session lease. The one idea to hold: inside `fenceScope` (the coordinator runs a
// session's work there) every write is ONE Lua script that first checks that the lease still
// holds this instance's token and otherwise writes nothing, so an instance that lost its
// session (paused past its lease, partitioned, merely slower than the one that took over)
// cannot overwrite the new owner's state. The check and the write are one step in Redis; a
// check followed by a separate write would leave the very window fencing exists to close.
// Outside a scope (event claims, a connector's own records) writes are plain.
//
// A store of record fails loudly: every Redis error rejects the Keyv call (the factory makes
// Keyv with `throwOnErrors: true`; by default Keyv 5 emits the error and resolves `set` with
// false, and `get` with undefined, which would read as "no such session").
//
// Keys: Keyv 5 hands the adapter keys already prefixed with its namespace (`bot:session:x`;
// `Keyv._getKeyPrefix`), so the adapter adds only the cluster's document prefix, never the
// namespace again: `keys.doc('bot:session:x')` = `chat-agent:doc:bot:session:x`.
// `documentKey('session:x')` gives a script the Redis key of a SessionStore key.
//
// A TTL becomes Redis's own expiry (PX), so expired documents leave Redis by themselves.
// (Keyv also stores an absolute `expires` and deletes a document it reads past it; with PX
// that happens only in the few ms Redis has not yet expired it, and inside a fence scope
// that delete is fenced like any write.) Documents carry no hash tag: the fenced script
// touches the lease and documents of other slots, fine on one primary, not on Redis Cluster.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Redis, type RedisOptions } from 'ioredis';
import { WritesFencedError } from '../engine/fenced.js';
import { clusterKeys, type ClusterKeys } from './cluster-keys.js';
import { fenceScope, type FenceScope } from './fence-scope.js';

/** How long one command may go unanswered (a paused or partitioned Redis) before it rejects. */
const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/**
 * The ioredis settings of a store of record, shared with the coordinator so both fail alike.
 *
 * - `enableOfflineQueue: false`: a command issued while the connection is down rejects at
 *   once instead of waiting in the client for a reconnection. A queued write would land at
 *   some unknown later moment, after its caller had been told it failed (a timeout does not
 *   take a command out of ioredis's queue); an immediate "not connected" is the honest answer,
 *   and the caller (Slack's retry, recovery) decides what to do again.
 * - `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false`: a command in flight
 *   when the connection drops rejects then, and is never re-sent on the next connection (its
 *   outcome is unknown; replaying it later could overwrite newer state). With ioredis's
 *   defaults (20 retries, resend on) a write could hang for a minute and then apply twice.
 * - `commandTimeout`: a connection that stays open while Redis answers nothing (SIGSTOP, a
 *   long `DEBUG SLEEP`, a partition without RST) still fails within a bounded time. What was
 *   already sent may run when Redis wakes up: a fenced write then still meets the lease check.
 * - `lazyConnect`, then an awaited `connect()` at open: a Redis that is not there at start-up
 *   stops the start-up with a clear message instead of failing the first turn.
 * - The default `retryStrategy` (reconnect after min(50 ms × attempt, 2 s), forever) brings
 *   the client back within about 2 s once Redis is back.
 *
 * A blocking command (`XREAD BLOCK`, `SUBSCRIBE`) needs its own connection (`duplicate()`):
 * `commandTimeout` would cut it, and a subscribed connection takes no other command.
 */
function storeClientOptions(commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: commandTimeoutMs,
    lazyConnect: true,
  };
}

/** Connect to the Redis of a STORE_URL (redis:// or rediss://, TLS), or throw a message that names the host, never the password. */
async function connectStoreClient(url: string, commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS): Promise<Redis> {
  const client = new Redis(url, storeClientOptions(commandTimeoutMs));
  // Without a listener ioredis prints every failed reconnection attempt. Each command
  // rejects with its own error, which is what reaches the caller; the connection's own
  // error (ECONNREFUSED, a TLS or AUTH failure) only says why the first connect failed.
  let connectionError: Error | undefined;
  client.on('error', (error: Error) => (connectionError = error));
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    const reason = connectionError?.message ?? (error as Error).message;
    throw new Error(
      `STORE_URL: could not connect to Redis at ${where(url)} (${reason}); is it running and reachable?`,
      { cause: connectionError ?? error },
    );
  }
  return client;
}

/**
 * A second connection with the store's settings, connected: for Pub/Sub, which takes a
 * connection to itself. Connect before use: with the offline queue off, a command (even
 * SUBSCRIBE) on a `duplicate()` that has not connected yet fails with "Stream isn't writeable".
 * After a reconnection ioredis subscribes again on its own (`autoResubscribe`).
 */
export async function connectedDuplicate(client: Redis): Promise<Redis> {
  const duplicate = client.duplicate();
  duplicate.on('error', () => undefined);
  try {
    await duplicate.connect();
  } catch (error) {
    duplicate.disconnect();
    throw error;
  }
  return duplicate;
}

/** host:port of a Redis URL, without credentials (for messages and logs). */
function where(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || '127.0.0.1'}:${parsed.port || '6379'}`;
  } catch {
    return 'the configured address';
  }
}

// KEYS[1] the lease, KEYS[2..] the documents. ARGV[1] the token the lease must hold,
// ARGV[2] 'set' or 'del'; for 'set', one (value, ttl ms or '') pair per document from ARGV[3].
// Answers {'ok', n} (documents written, or deleted that existed) or {'fenced', holder}
// (holder '' when no one holds the lease), having written nothing.
const FENCED_WRITE = `
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  return {'fenced', holder or ''}
end
if ARGV[2] == 'del' then
  local removed = 0
  for i = 2, #KEYS do removed = removed + redis.call('DEL', KEYS[i]) end
  return {'ok', removed}
end
for i = 2, #KEYS do
  local ttl = ARGV[2 * i]
  if ttl == '' then
    redis.call('SET', KEYS[i], ARGV[2 * i - 1])
  else
    redis.call('SET', KEYS[i], ARGV[2 * i - 1], 'PX', ttl)
  end
end
return {'ok', #KEYS - 1}
`;
const FENCED_WRITE_SHA = createHash('sha1').update(FENCED_WRITE).digest('hex');

export interface RedisKeyvStoreOptions {
  /** The connection (shared with the coordinator); `disconnect()` closes it when `ownsClient`. */
  client: Redis;
  keys?: ClusterKeys;
  /** Close the client on `disconnect()` (default true: the store opened it). */
  ownsClient?: boolean;
  /** For error messages: host:port. */
  address?: string;
}

interface Entry {
  key: string;
  value: unknown;
  ttl?: number;
}

export class RedisKeyvStore extends EventEmitter {
  /** Keyv reads `opts` (it is part of its adapter type); nothing here depends on it. */
  readonly opts: { dialect: 'redis'; url: string };
  /** Set by Keyv to its namespace; `clear()` removes only keys under it. */
  namespace?: string;
  readonly client: Redis;
  readonly keys: ClusterKeys;
  private readonly ownsClient: boolean;
  private readonly address: string;

  constructor(options: RedisKeyvStoreOptions) {
    super();
    this.client = options.client;
    this.keys = options.keys ?? clusterKeys();
    this.ownsClient = options.ownsClient ?? true;
    this.address = options.address ?? 'redis';
    this.opts = { dialect: 'redis', url: this.address };
  }

  /** The Redis key of a key as SessionStore writes it (`session:x`), for scripts that touch documents. */
  documentKey(storeKey: string): string {
    return this.keys.doc(this.namespace ? `${this.namespace}:${storeKey}` : storeKey);
  }

  async get(key: string): Promise<string | undefined> {
    const value = await this.command('get', () => this.client.get(this.keys.doc(key)));
    return value ?? undefined;
  }

  async getMany(keys: string[]): Promise<(string | undefined)[]> {
    if (keys.length === 0) return [];
    const values = await this.command('getMany', () => this.client.mget(keys.map((key) => this.keys.doc(key))));
    return values.map((value) => value ?? undefined);
  }

  async has(key: string): Promise<boolean> {
    return (await this.command('has', () => this.client.exists(this.keys.doc(key)))) === 1;
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    await this.write('set', [{ key, value, ttl }]);
    return true;
  }

  async setMany(entries: Entry[]): Promise<void> {
    if (entries.length > 0) await this.write('set', entries);
  }

  async delete(key: string): Promise<boolean> {
    return (await this.write('del', [{ key, value: undefined }])) > 0;
  }

  /** True when at least one of the keys existed (as @keyv/sqlite answers). */
  async deleteMany(keys: string[]): Promise<boolean> {
    if (keys.length === 0) return false;
    return (
      (await this.write(
        'del',
        keys.map((key) => ({ key, value: undefined })),
      )) > 0
    );
  }

  /**
   * Remove this namespace's documents, found with SCAN (never KEYS, which blocks Redis, and
   * never FLUSHDB: leases, queues and other bots' keys share the database). Tests only.
   */
  async clear(): Promise<void> {
    const pattern = `${globEscape(this.keys.doc(this.namespace ? `${this.namespace}:` : ''))}*`;
    let cursor = '0';
    do {
      const [next, found] = await this.command('clear', () =>
        this.client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000),
      );
      if (found.length > 0) await this.command('clear', () => this.client.unlink(...found));
      cursor = next;
    } while (cursor !== '0');
  }

  async disconnect(): Promise<void> {
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // Redis went away while quitting: close the socket below.
      }
    }
    this.client.disconnect();
  }

  /** A write: fenced by the lease when the caller runs in a fence scope, plain otherwise. Answers the count DEL or SET reported. */
  private async write(kind: 'set' | 'del', entries: Entry[]): Promise<number> {
    const documents = entries.map((entry) => this.keys.doc(entry.key));
    const scope = fenceScope.getStore();
    if (scope) return this.fencedWrite(scope, kind, documents, entries);
    if (kind === 'del') return this.command('delete', () => this.client.del(...documents));
    if (entries.length === 1) {
      const [entry] = entries as [Entry];
      const ttl = pxOf(entry.ttl);
      await this.command('set', () =>
        ttl === undefined
          ? this.client.set(documents[0]!, text(entry.value))
          : this.client.set(documents[0]!, text(entry.value), 'PX', ttl),
      );
      return 1;
    }
    // Several documents: one MULTI/EXEC, so a reader never sees half of a setMany.
    const transaction = this.client.multi();
    entries.forEach((entry, index) => {
      const ttl = pxOf(entry.ttl);
      if (ttl === undefined) transaction.set(documents[index]!, text(entry.value));
      else transaction.set(documents[index]!, text(entry.value), 'PX', ttl);
    });
    const results = await this.command('setMany', () => transaction.exec());
    const failed = results?.find(([error]) => error !== null)?.[0];
    if (results === null || failed) throw this.storeError('setMany', failed ?? new Error('transaction aborted'));
    return entries.length;
  }

  private async fencedWrite(
    scope: FenceScope,
    kind: 'set' | 'del',
    documents: string[],
    entries: Entry[],
  ): Promise<number> {
    const argv = [scope.token, kind];
    if (kind === 'set') for (const entry of entries) argv.push(text(entry.value), String(pxOf(entry.ttl) ?? ''));
    const keys = [scope.leaseKey, ...documents];
    const reply = await this.command(kind === 'set' ? 'fenced set' : 'fenced delete', () =>
      this.evalFenced(keys, argv),
    );
    const [status, detail] = parseReply(reply);
    if (status === 'fenced') {
      throw new WritesFencedError(
        `session ${scope.sessionId} is owned by ${detail === '' ? 'no one (its lease expired)' : detail} now, not ${scope.token}`,
      );
    }
    return Number(detail);
  }

  /** EVALSHA, and EVAL when Redis does not have the script yet (first use, or after a restart or SCRIPT FLUSH). */
  private async evalFenced(keys: string[], argv: string[]): Promise<unknown> {
    try {
      return await this.client.evalsha(FENCED_WRITE_SHA, keys.length, ...keys, ...argv);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.client.eval(FENCED_WRITE, keys.length, ...keys, ...argv);
    }
  }

  /** Run one Redis call; its failure is rethrown with the operation and the address in the message. */
  private async command<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.storeError(operation, error);
    }
  }

  /** ioredis's own words name its options, not the situation; say what happened to the command. */
  private storeError(operation: string, error: unknown): Error {
    const message = error instanceof Error ? error.message : String(error);
    let what: string;
    if (message.includes('enableOfflineQueue'))
      what = `not connected to Redis at ${this.address} (${this.client.status}); nothing was sent`;
    else if (error instanceof Error && error.name === 'MaxRetriesPerRequestError')
      what = `the connection to Redis at ${this.address} dropped while the command was in flight; it may or may not have been applied`;
    else if (message === 'Command timed out')
      what = `Redis at ${this.address} did not answer within ${this.client.options.commandTimeout ?? '?'} ms; the command may still run once Redis answers again`;
    else what = `${message} (Redis at ${this.address}, ${this.client.status})`;
    return new Error(`Redis store ${operation} failed: ${what}`, { cause: error });
  }
}

/** Open the store of a redis:// or rediss:// STORE_URL. */
export async function openRedisKeyvStore(
  url: string,
  options: { keys?: ClusterKeys; commandTimeoutMs?: number } = {},
): Promise<RedisKeyvStore> {
  const client = await connectStoreClient(url, options.commandTimeoutMs);
  return new RedisKeyvStore({ client, keys: options.keys, address: where(url) });
}

function parseReply(reply: unknown): ['ok' | 'fenced', string] {
  if (Array.isArray(reply)) {
    const [status, detail] = reply as unknown[];
    if (status === 'ok' || status === 'fenced')
      return [status, typeof detail === 'number' || typeof detail === 'string' ? String(detail) : ''];
  }
  throw new Error(`Redis store: unexpected reply from the fenced write script: ${JSON.stringify(reply)}`);
}

/** Keyv serializes to a string already; anything else is stored as JSON rather than "[object Object]". */
function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Keyv's ttl (ms) as a PX argument: whole, and at least 1 (PX refuses 0 and negatives). */
function pxOf(ttl: number | undefined): number | undefined {
  if (ttl === undefined || !Number.isFinite(ttl)) return undefined;
  return Math.max(1, Math.ceil(ttl));
}

/** SCAN MATCH treats * ? [ ] \ as a pattern; a namespace or prefix containing them must match literally. */
function globEscape(literal: string): string {
  return literal.replace(/[*?[\]\\]/g, '\\$&');
}
