// The Redis keys of cluster mode, in one place. Every key of one session carries the session
// id in a hash tag (`{…}`), so a session's keys stay on one node should the deployment ever
// move to Redis Cluster; the scripts that touch a lease and a session's data together need
// that. `prefix` namespaces one bot's keys (several bots may share a Redis).
export interface ClusterKeys {
  /** `{node}:{epoch}` of the instance that owns the session, with a TTL (the lease). */
  lease(sessionId: string): string;
  /** INCR'd at every acquire: the fencing token's monotonic part. */
  epoch(sessionId: string): string;
  /** The session's durable command list (deliver, stop, resolve), drained by the owner. */
  commands(sessionId: string): string;
  /** A platform event's de-duplication claim (SET NX with a TTL). */
  event(eventId: string): string;
  /** A prompt's resolve-once claim (SET NX): one click wins, across instances. */
  resolved(itemId: string): string;
  /** Set for a while when an instance handed the session over on a graceful stop (a deploy, not a death). */
  handedOver(sessionId: string): string;
  /** Sorted set: session id → its lease deadline (ms); what the takeover sweep reads. */
  readonly running: string;
  /** Pub/Sub channel of one instance: wake-up hints ("drain session S"), never the delivery itself. */
  poke(nodeId: string): string;
  /** A lease held by one instance for the whole bot (the Discord gateway). */
  singleton(name: string): string;
  /** The set of sessions with work in flight (SessionStore's open index, in cluster mode). */
  readonly openSessions: string;
  /** The set of every stored session (SessionStore's session index, in cluster mode). */
  readonly allSessions: string;
  /** The set of every feedback vote's id (src/feedback/feedback-book.ts). */
  readonly feedbackVotes: string;
  /** The set of every schedule's id (src/schedules/schedule-store.ts). */
  readonly schedules: string;
  /** The audit trail's own keys (src/ops/audit/audit-store.ts): its record claims, day counters and day index. */
  audit(name: string): string;
  /** A Keyv document (the store's key, as SessionStore writes it). */
  doc(key: string): string;
  /** Sorted set: a person's turn starts (start id → when, ms) of the last minute (TURNS_PER_USER_PER_MINUTE). */
  personStarts(userId: string): string;
  /** Sorted set: a person's working threads (session id → its lease deadline, ms) (THREADS_PER_USER). */
  personThreads(userId: string): string;
  /** Sorted set: the model calls in flight (slot id → its lease deadline, ms) (MAX_CONCURRENT_MODEL_CALLS). */
  readonly modelSlots: string;
  /** Pub/Sub channel: a model call slot came free (a hint to the instances whose calls wait). */
  readonly modelSlotFreed: string;
}

export function clusterKeys(prefix = 'chat-agent:'): ClusterKeys {
  return {
    lease: (sessionId) => `${prefix}lease:{${sessionId}}`,
    epoch: (sessionId) => `${prefix}epoch:{${sessionId}}`,
    commands: (sessionId) => `${prefix}cmd:{${sessionId}}`,
    event: (eventId) => `${prefix}evt:${eventId}`,
    resolved: (itemId) => `${prefix}resolved:${itemId}`,
    handedOver: (sessionId) => `${prefix}handover:{${sessionId}}`,
    running: `${prefix}running`,
    openSessions: `${prefix}open-sessions`,
    allSessions: `${prefix}all-sessions`,
    feedbackVotes: `${prefix}feedback-votes`,
    schedules: `${prefix}schedules`,
    poke: (nodeId) => `${prefix}poke:${nodeId}`,
    singleton: (name) => `${prefix}singleton:${name}`,
    audit: (name) => `${prefix}audit:${name}`,
    doc: (key) => `${prefix}doc:${key}`,
    // One hash tag for every limit's keys: a renewal touches many people's keys in one script.
    personStarts: (userId) => `${prefix}limits:{limits}:starts:${userId}`,
    personThreads: (userId) => `${prefix}limits:{limits}:threads:${userId}`,
    modelSlots: `${prefix}limits:{limits}:model-slots`,
    modelSlotFreed: `${prefix}limits:model-slot-freed`,
  };
}
