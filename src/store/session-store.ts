// Everything the bot keeps about its conversations, in one Keyv namespace:
//
//   session:<id>              the session record (model, grants, compaction state, people)
//   sessions                  the index of session ids (recovery and retention walk it)
//   transcript:<id>:<n>       the canonical messages, append-only (see append-log.ts)
//   inbox:<itemId>            prompts waiting for a human; inbox-call:<id>:<callId> → itemId
//   pending:<id>              inbound messages not yet taken by a turn (steering included)
//   ref:<platform message>    which session / tool call a platform message belongs to
//   grants:channel:<channel>  "always" grants scoped to a whole channel
//   event:<id>                processed platform event ids, with a TTL (de-duplication)
//
// Keyv is for data, not for coordination: it has no compare-and-set, so claims, locks and
// queue pops live behind the coordination seam (src/sessions/coordination.ts). Everything
// read back is parsed with zod: a stored record is outside input like any other.
import type Keyv from 'keyv';
import { z } from 'zod';
import { MessageSchema, type GrantsSnapshot, type InboxItem, type Message, type MessageSource } from '../engine/index.js';
import { AppendLog } from './append-log.js';

export const SessionKeySchema = z.object({
  platform: z.string().min(1),
  workspace: z.string(),
  channel: z.string().min(1),
  thread: z.string().min(1),
});
export type SessionKey = z.infer<typeof SessionKeySchema>;

/** One session per thread: platform, workspace, channel and thread root. */
export function sessionIdOf(key: SessionKey): string {
  return [key.platform, key.workspace, key.channel, key.thread].map(encodeURIComponent).join(':');
}

const GrantsSchema = z.object({
  tools: z.array(z.string()),
  commands: z.array(z.object({ tool: z.string(), command: z.string() })),
});

export const SessionRecordSchema = z.object({
  id: z.string(),
  key: SessionKeySchema,
  model: z.string(),
  grants: GrantsSchema,
  compaction: z.object({ boundary: z.number().int().nonnegative(), summary: z.string() }).nullable(),
  /** The user who started the thread: who may approve when no admins are configured. */
  startedBy: z.string().optional(),
  /** Everyone who steered the thread: they may stop it too. */
  steerers: z.array(z.string()),
  /** Directories a person granted the tools in this thread (request_directory). */
  directories: z.array(z.string()).default([]),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

const InboxItemSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  toolCallId: z.string(),
  kind: z.enum(['approval', 'question', 'plan', 'directory']),
  choices: z.array(z.string()),
  state: z.enum(['pending', 'resolved']),
  resolution: z.looseObject({ kind: z.string() }).optional(),
  resolvedBy: z.string().optional(),
  createdAt: z.number(),
  resolvedAt: z.number().optional(),
});

/** An inbound message waiting for a turn to take it (persisted before it is acknowledged). */
export const PendingInputSchema = z.object({
  id: z.string(),
  text: z.string(),
  source: z.looseObject({ platform: z.string() }).optional(),
  receivedAt: z.number(),
});
export type PendingInput = z.infer<typeof PendingInputSchema> & { source?: MessageSource };

/** What a button click or a reaction on a platform message leads to. */
export const MessageRefSchema = z.object({
  sessionId: z.string(),
  toolCallId: z.string().optional(),
  /** The card or message kind: answer, tool, approval, question, … (the connector's words). */
  kind: z.string(),
  /** For an index entry that points back at a platform message (a tool card's ts). */
  platformMessageId: z.string().optional(),
});
export type MessageRef = z.infer<typeof MessageRefSchema>;

export class SessionStore {
  private readonly transcripts = new Map<string, AppendLog<Message>>();
  private readonly itemLogs = new Map<string, AppendLog<string>>();
  private readonly refLogs = new Map<string, AppendLog<string>>();
  /** Session ids known to be in the `sessions` index already. */
  private readonly indexed = new Set<string>();

  constructor(readonly keyv: Keyv) {}

  // ---- sessions ----------------------------------------------------------------------

  async getSession(id: string): Promise<SessionRecord | undefined> {
    const raw = await this.keyv.get<unknown>(`session:${id}`);
    return raw === undefined ? undefined : SessionRecordSchema.parse(raw);
  }

  async saveSession(record: SessionRecord): Promise<void> {
    // Saved on every message and turn end: the index is checked once per session, not per save.
    const isNew = !this.indexed.has(record.id) && (await this.keyv.get(`session:${record.id}`)) === undefined;
    await this.keyv.set(`session:${record.id}`, { ...record, updatedAt: Date.now() });
    if (isNew) {
      const ids = await this.listSessionIds();
      if (!ids.includes(record.id)) await this.keyv.set('sessions', [...ids, record.id]);
    }
    this.indexed.add(record.id);
  }

  async listSessionIds(): Promise<string[]> {
    return z.array(z.string()).parse((await this.keyv.get<unknown>('sessions')) ?? []);
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

  async getPendingInputs(id: string): Promise<PendingInput[]> {
    return z.array(PendingInputSchema).parse((await this.keyv.get<unknown>(`pending:${id}`)) ?? []);
  }

  async setPendingInputs(id: string, inputs: PendingInput[]): Promise<void> {
    if (inputs.length === 0) await this.keyv.delete(`pending:${id}`);
    else await this.keyv.set(`pending:${id}`, inputs);
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

  async getMessageRef(platformMessageId: string): Promise<MessageRef | undefined> {
    const raw = await this.keyv.get<unknown>(`ref:${platformMessageId}`);
    return raw === undefined ? undefined : MessageRefSchema.parse(raw);
  }

  // ---- channel-scoped grants ---------------------------------------------------------

  async getChannelGrants(key: Pick<SessionKey, 'platform' | 'workspace' | 'channel'>): Promise<GrantsSnapshot> {
    const raw = await this.keyv.get<unknown>(channelGrantsKey(key));
    return raw === undefined ? { tools: [], commands: [] } : GrantsSchema.parse(raw);
  }

  async setChannelGrants(key: Pick<SessionKey, 'platform' | 'workspace' | 'channel'>, grants: GrantsSnapshot): Promise<void> {
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
    await this.keyv.delete(`pending:${id}`);
    await this.keyv.delete(`session:${id}`);
    const ids = await this.listSessionIds();
    await this.keyv.set('sessions', ids.filter((other) => other !== id));
    this.transcripts.delete(id);
    this.itemLogs.delete(id);
    this.refLogs.delete(id);
    this.indexed.delete(id);
  }

  /** Delete every session untouched for longer than `retentionMs`; returns their ids. */
  async sweepExpired(retentionMs: number, now = Date.now()): Promise<string[]> {
    const expired: string[] = [];
    for (const id of await this.listSessionIds()) {
      const record = await this.getSession(id);
      if (!record || now - record.updatedAt > retentionMs) expired.push(id);
    }
    for (const id of expired) await this.deleteSession(id);
    return expired;
  }
}

function channelGrantsKey(key: Pick<SessionKey, 'platform' | 'workspace' | 'channel'>): string {
  return `grants:channel:${[key.platform, key.workspace, key.channel].map(encodeURIComponent).join(':')}`;
}
