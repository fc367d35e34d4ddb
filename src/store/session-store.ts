// Everything the bot keeps about its conversations, in one Keyv namespace:
//
//   session:<id>              the session record (model, grants, compaction state, people)
//   sessions:<shard>          the index of session ids, in 64 shards (retention walks it);
//                             a new thread rewrites one shard, not a list of every thread
//   open-sessions             sessions with work in flight: a turn, recorded inputs, a
//                             prompt or a tool call without its result. Start-up recovery
//                             reads only these.
//   tools-started:<id>        the tool ledger: calls of the trailing round that started
//   transcript:<id>:<n>       the canonical messages, append-only (see append-log.ts)
//   inbox:<itemId>            prompts waiting for a human; inbox-call:<id>:<callId> → itemId
//   pending-index:<id>, pending-input:<id>:<n>
//                             inbound messages not yet taken by a turn (steering included),
//                             one key each (pending-inputs.ts)
//   ref:<platform message>    which session / tool call a platform message belongs to
//   grants:channel:<channel>  "always" grants scoped to a whole channel
//   event:<id>                processed platform event ids, with a TTL (de-duplication)
//   open-answer:<id>          the answer the thread is streaming now (OpenAnswerSchema)
//
// Keyv is for data, not for coordination: it has no compare-and-set, so claims, locks and
// queue pops live behind the coordination seam (src/sessions/coordination.ts). Everything
// read back is parsed with zod: a stored record is outside input like any other.
import type Keyv from 'keyv';
import { PendingInputs, type PendingInput, type QueueLoad } from './pending-inputs.js';
import { z } from 'zod';
import { MessageSchema, type GrantsSnapshot, type InboxItem, type LedgerRound, type Message } from '../engine/index.js';
import { AppendLog } from './append-log.js';
import { KeyedMutex } from './keyed-mutex.js';
import { KeyvIdSet } from './keyv-id-set.js';
import {
  GrantsSchema,
  InboxItemSchema,
  LedgerRoundSchema,
  MessageRefSchema,
  OpenAnswerSchema,
  SessionRecordSchema,
  type MessageRef,
  type OpenAnswer,
  type SessionKey,
  type SessionRecord,
} from './session-records.js';
import type { SharedIdSet } from './shared-id-set.js';

const INDEX_SHARDS = 64;
/** Before the index was sharded it was one list under this key; it is still read. */
const LEGACY_INDEX = 'sessions';
const OPEN_INDEX = 'open-sessions';
const IdListSchema = z.array(z.string());

// The stored shapes and the ports the store is built on, for those who hold a store.
export {
  SessionKeySchema,
  sessionIdOf,
  sessionKeyOf,
  type MessageRef,
  type OpenAnswer,
  type SessionKey,
  type SessionRecord,
} from './session-records.js';
export { type PendingInput, type QueueLoad } from './pending-inputs.js';
export type { SharedIdSet } from './shared-id-set.js';

export class SessionStore {
  private readonly transcripts = new Map<string, AppendLog<Message>>();
  private readonly itemLogs = new Map<string, AppendLog<string>>();
  private readonly refLogs = new Map<string, AppendLog<string>>();
  /** Session ids known to be in the `sessions` index already. */
  private readonly indexed = new Set<string>();
  /** The open-sessions index: a Redis set in cluster mode, else a Keyv document (keyv-id-set.ts). */
  private readonly openSessions: SharedIdSet;
  /** Read-modify-write of shared index keys, one at a time in this process. */
  private readonly indexLock = new KeyedMutex();

  private readonly pending: PendingInputs;

  /**
   * `openIndex` and `sessionIndex` (cluster mode): the open-sessions index and the index of
   * every session as atomic shared sets (Redis), in place of Keyv documents this process
   * caches and rewrites, which several instances would overwrite in each other's stead.
   */
  constructor(
    readonly keyv: Keyv,
    openIndex?: SharedIdSet,
    /** Cluster mode: the index of every session, likewise a shared set (retention walks it). */
    private readonly sessionIndex?: SharedIdSet,
  ) {
    this.pending = new PendingInputs(keyv);
    // A store from before the open index had none: then every stored session counts as open, once.
    this.openSessions = openIndex ?? new KeyvIdSet(keyv, OPEN_INDEX, () => this.listSessionIds());
  }

  /**
   * Forget what this process holds in memory about a session (cluster mode: another instance
   * may have written it since; an append at a remembered length would overwrite its entries).
   */
  forgetCached(id: string): void {
    this.transcripts.delete(id);
    this.itemLogs.delete(id);
    this.refLogs.delete(id);
  }

  // ---- sessions ----------------------------------------------------------------------

  async getSession(id: string): Promise<SessionRecord | undefined> {
    const raw = await this.keyv.get<unknown>(`session:${id}`);
    return raw === undefined ? undefined : SessionRecordSchema.parse(raw);
  }

  async saveSession(record: SessionRecord): Promise<void> {
    // Saved on every message and turn end: the index is checked once per session, not per save.
    const isNew = !this.indexed.has(record.id) && (await this.keyv.get(`session:${record.id}`)) === undefined;
    await this.keyv.set(`session:${record.id}`, { ...record, updatedAt: Date.now() });
    if (isNew && this.sessionIndex) await this.sessionIndex.add(record.id);
    else if (isNew) {
      const shard = indexShard(record.id);
      await this.indexLock.run(shard, async () => {
        const ids = await this.readIds(shard);
        if (!ids.includes(record.id)) await this.keyv.set(shard, [...ids, record.id]);
      });
    }
    this.indexed.add(record.id);
  }

  /** Every stored session's id (retention walks them; recovery does not). */
  async listSessionIds(): Promise<string[]> {
    if (this.sessionIndex) return this.sessionIndex.all();
    const keys = [LEGACY_INDEX, ...Array.from({ length: INDEX_SHARDS }, (_, i) => `sessions:${i}`)];
    const lists = await this.keyv.getMany<unknown>(keys);
    return [...new Set(lists.flatMap((list) => (list === undefined ? [] : IdListSchema.parse(list))))];
  }

  private async readIds(key: string): Promise<string[]> {
    return IdListSchema.parse((await this.keyv.get<unknown>(key)) ?? []);
  }

  private async removeFromIndex(id: string): Promise<void> {
    if (this.sessionIndex) return this.sessionIndex.remove(id);
    for (const key of [indexShard(id), LEGACY_INDEX]) {
      await this.indexLock.run(key, async () => {
        const ids = await this.readIds(key);
        if (ids.includes(id))
          await this.keyv.set(
            key,
            ids.filter((other) => other !== id),
          );
      });
    }
  }

  // ---- sessions with work in flight ----------------------------------------------------

  /**
   * Note that a session has work in flight, before that work is recorded: a crash must
   * never leave a session that needs repair outside the index. One write the first time,
   * none while it stays open.
   */
  markOpen(id: string): Promise<void> {
    return this.openSessions.add(id);
  }

  /** The session has nothing in flight any more (call only when that is known). */
  markSettled(id: string): Promise<void> {
    return this.openSessions.remove(id);
  }

  /**
   * The sessions start-up recovery must look at. A store written before the index existed
   * has none: then every stored session counts as open, once, and the index is built.
   */
  openSessionIds(): Promise<string[]> {
    return this.openSessions.all();
  }

  // ---- the tool ledger ---------------------------------------------------------------

  async getToolRound(id: string): Promise<LedgerRound | undefined> {
    const raw = await this.keyv.get<unknown>(`tools-started:${id}`);
    return raw === undefined ? undefined : LedgerRoundSchema.parse(raw);
  }

  /** One write: the whole round's started calls (the ledger keeps one round per session). */
  async setToolRound(id: string, round: LedgerRound): Promise<void> {
    await this.keyv.set(`tools-started:${id}`, round);
  }

  // ---- transcripts -------------------------------------------------------------------

  private transcript(id: string): AppendLog<Message> {
    let log = this.transcripts.get(id);
    if (!log) {
      log = new AppendLog<Message>(this.keyv, `transcript:${id}`);
      this.transcripts.set(id, log);
    }
    return log;
  }

  appendMessage(id: string, message: Message): Promise<number> {
    return this.transcript(id).append(message);
  }

  async loadTranscript(id: string): Promise<Message[]> {
    const raw = await this.transcript(id).readAll();
    return raw.map((entry) => MessageSchema.parse(entry));
  }

  // ---- pending inbound messages ------------------------------------------------------

  /** Inbound messages not yet taken by a turn, in arrival order. */
  getPendingInputs(id: string): Promise<PendingInput[]> {
    return this.pending.list(id);
  }

  /** How much waits in a thread: what the queue caps are checked against. */
  pendingLoad(id: string): Promise<QueueLoad> {
    return this.pending.load(id);
  }

  /** Record one more inbound message; the others are not rewritten. */
  addPendingInput(id: string, input: PendingInput): Promise<void> {
    return this.pending.add(id, input);
  }

  /** Drop messages a turn has taken. */
  removePendingInputs(id: string, inputIds: readonly string[]): Promise<void> {
    return this.pending.remove(id, inputIds);
  }

  /** Replace the whole queue (tests, and hand-written sessions). */
  setPendingInputs(id: string, inputs: PendingInput[]): Promise<void> {
    return this.pending.replace(id, inputs);
  }

  // ---- inbox items -------------------------------------------------------------------

  private itemLog(sessionId: string): AppendLog<string> {
    let log = this.itemLogs.get(sessionId);
    if (!log) {
      log = new AppendLog<string>(this.keyv, `inbox-session:${sessionId}`);
      this.itemLogs.set(sessionId, log);
    }
    return log;
  }

  async getItem(itemId: string): Promise<InboxItem | undefined> {
    const raw = await this.keyv.get<unknown>(`inbox:${itemId}`);
    return raw === undefined ? undefined : (InboxItemSchema.parse(raw) as InboxItem);
  }

  async itemIdForCall(sessionId: string, toolCallId: string): Promise<string | undefined> {
    return (await this.keyv.get<string>(`inbox-call:${sessionId}:${toolCallId}`)) ?? undefined;
  }

  /** Store a new item (index entries first: a crash never leaves an item nobody can find). */
  async addItem(item: InboxItem): Promise<void> {
    await this.keyv.set(`inbox:${item.id}`, item);
    await this.keyv.set(`inbox-call:${item.sessionId}:${item.toolCallId}`, item.id);
    await this.itemLog(item.sessionId).append(item.id);
  }

  async updateItem(item: InboxItem): Promise<void> {
    await this.keyv.set(`inbox:${item.id}`, item);
  }

  async sessionItems(sessionId: string): Promise<InboxItem[]> {
    const ids = await this.itemLog(sessionId).readAll();
    const items = await Promise.all(ids.map((id) => this.getItem(id)));
    return items.filter((item): item is InboxItem => item !== undefined);
  }

  // ---- platform message references ---------------------------------------------------

  private refLog(sessionId: string): AppendLog<string> {
    let log = this.refLogs.get(sessionId);
    if (!log) {
      log = new AppendLog<string>(this.keyv, `refs:${sessionId}`);
      this.refLogs.set(sessionId, log);
    }
    return log;
  }

  async putMessageRef(platformMessageId: string, ref: MessageRef): Promise<void> {
    await this.keyv.set(`ref:${platformMessageId}`, ref);
    await this.refLog(ref.sessionId).append(platformMessageId);
  }

  /** Rewrite a reference written before with `putMessageRef` (already listed for deletion). */
  async updateMessageRef(platformMessageId: string, ref: MessageRef): Promise<void> {
    await this.keyv.set(`ref:${platformMessageId}`, ref);
  }

  async getMessageRef(platformMessageId: string): Promise<MessageRef | undefined> {
    const raw = await this.keyv.get<unknown>(`ref:${platformMessageId}`);
    return raw === undefined ? undefined : MessageRefSchema.parse(raw);
  }

  // ---- channel-scoped grants ---------------------------------------------------------

  async getChannelGrants(key: Pick<SessionKey, 'platform' | 'workspace' | 'channel'>): Promise<GrantsSnapshot> {
    const raw = await this.keyv.get<unknown>(channelGrantsKey(key));
    return raw === undefined ? { tools: [], commands: [] } : GrantsSchema.parse(raw);
  }

  async setChannelGrants(
    key: Pick<SessionKey, 'platform' | 'workspace' | 'channel'>,
    grants: GrantsSnapshot,
  ): Promise<void> {
    await this.keyv.set(channelGrantsKey(key), grants);
  }

  // ---- de-duplication ----------------------------------------------------------------

  async hasProcessedEvent(eventId: string): Promise<boolean> {
    return (await this.keyv.get(`event:${eventId}`)) !== undefined;
  }

  async markEventProcessed(eventId: string, ttlMs: number): Promise<void> {
    await this.keyv.set(`event:${eventId}`, 1, ttlMs);
  }

  // ---- forgetting --------------------------------------------------------------------

  /**
   * The answer a thread is streaming now, kept while the stream is open: an instance that
   * takes the thread over after its owner died closes that stream instead of leaving it
   * visibly "being written". Written ahead (see OpenAnswerSchema). Undefined clears it.
   */
  async setOpenAnswer(id: string, answer: OpenAnswer | undefined): Promise<void> {
    if (answer === undefined) await this.keyv.delete(`open-answer:${id}`);
    else await this.keyv.set(`open-answer:${id}`, answer);
  }

  async getOpenAnswer(id: string): Promise<OpenAnswer | undefined> {
    const raw = await this.keyv.get<unknown>(`open-answer:${id}`);
    // Before the write-ahead mark, the record was the stream's message id alone.
    if (typeof raw === 'string') return { messageId: raw };
    const parsed = OpenAnswerSchema.safeParse(raw);
    return parsed.success ? parsed.data : undefined;
  }

  /** Delete everything stored for a session (platform terms forbid long-term copies). */
  async deleteSession(id: string): Promise<void> {
    const items = await this.itemLog(id).readAll();
    for (const itemId of items) {
      const item = await this.getItem(itemId);
      if (item) await this.keyv.delete(`inbox-call:${id}:${item.toolCallId}`);
      await this.keyv.delete(`inbox:${itemId}`);
    }
    await this.itemLog(id).clear();
    for (const ref of await this.refLog(id).readAll()) await this.keyv.delete(`ref:${ref}`);
    await this.refLog(id).clear();
    await this.transcript(id).clear();
    await this.pending.clear(id);
    await this.keyv.delete(`tools-started:${id}`);
    await this.keyv.delete(`open-answer:${id}`);
    await this.keyv.delete(`session:${id}`);
    await this.removeFromIndex(id);
    await this.markSettled(id);
    this.transcripts.delete(id);
    this.itemLogs.delete(id);
    this.refLogs.delete(id);
    this.indexed.delete(id);
  }

  /** Delete every session untouched for longer than `retentionMs`; returns their ids. */
  async sweepExpired(retentionMs: number, now = Date.now()): Promise<string[]> {
    const expired: string[] = [];
    const ids = await this.listSessionIds();
    for (let start = 0; start < ids.length; start += SWEEP_BATCH) {
      const batch = ids.slice(start, start + SWEEP_BATCH);
      const records = await this.keyv.getMany<unknown>(batch.map((id) => `session:${id}`));
      batch.forEach((id, i) => {
        // A record that no longer parses is kept (and stays visible as an error where it is
        // read): deleting what we cannot read would lose data silently.
        const parsed = SessionRecordSchema.safeParse(records[i]);
        if (records[i] === undefined || (parsed.success && now - parsed.data.updatedAt > retentionMs)) expired.push(id);
      });
    }
    for (const id of expired) await this.deleteSession(id);
    return expired;
  }
}

const SWEEP_BATCH = 500;

/** Which shard of the session index holds this id (FNV-1a: stable across processes and versions). */
function indexShard(id: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return `sessions:${(hash >>> 0) % INDEX_SHARDS}`;
}

function channelGrantsKey(key: Pick<SessionKey, 'platform' | 'workspace' | 'channel'>): string {
  return `grants:channel:${[key.platform, key.workspace, key.channel].map(encodeURIComponent).join(':')}`;
}
