// Inbound messages waiting for a turn to take them, one key each:
//
//   pending-input:<session>:<id>   the message (text, source, when it came)
//   pending-index:<session>        the ids in arrival order, with each one's size
//
// Adding a message writes it and the small index, never the other messages: a flood of long
// replies costs one write per reply, not a rewrite of everything queued (the old layout, one
// `pending:<session>` list, grew to megabytes and was rewritten whole at every reply; it is
// still read, and folded into this one at the next change).
import type Keyv from 'keyv';
import { z } from 'zod';
import { IncomingFileSchema, type MessageSource } from '../engine/index.js';

const PendingInputSchema = z.object({
  id: z.string(),
  text: z.string(),
  source: z.looseObject({ platform: z.string() }).optional(),
  receivedAt: z.number(),
  /** Files the message carries, fetched when a turn takes it (src/files/intake.ts). */
  attachments: z.array(IncomingFileSchema).optional(),
});
export type PendingInput = z.infer<typeof PendingInputSchema> & { source?: MessageSource };

const IndexSchema = z.array(z.object({ id: z.string(), bytes: z.number() }));
type PendingIndex = z.infer<typeof IndexSchema>;

/** What is queued in a thread: how many messages, and their text's total size in bytes. */
export interface QueueLoad {
  count: number;
  bytes: number;
}

export class PendingInputs {
  constructor(private readonly keyv: Keyv) {}

  async list(sessionId: string): Promise<PendingInput[]> {
    const index = await this.index(sessionId);
    const legacy = await this.legacy(sessionId);
    if (index.length === 0) return legacy;
    const stored = await this.keyv.getMany<unknown>(index.map((entry) => inputKey(sessionId, entry.id)));
    const inputs = stored.flatMap((raw) => (raw === undefined ? [] : [PendingInputSchema.parse(raw)]));
    return [...legacy, ...inputs];
  }

  async load(sessionId: string): Promise<QueueLoad> {
    const index = await this.index(sessionId);
    const legacy = await this.legacy(sessionId);
    return {
      count: index.length + legacy.length,
      bytes:
        index.reduce((sum, entry) => sum + entry.bytes, 0) +
        legacy.reduce((sum, input) => sum + byteLength(input.text), 0),
    };
  }

  async add(sessionId: string, input: PendingInput): Promise<void> {
    await this.foldLegacy(sessionId);
    await this.keyv.set(inputKey(sessionId, input.id), input);
    const index = await this.index(sessionId);
    await this.keyv.set(indexKey(sessionId), [...index, { id: input.id, bytes: byteLength(input.text) }]);
  }

  async remove(sessionId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.foldLegacy(sessionId);
    const gone = new Set(ids);
    const index = await this.index(sessionId);
    const kept = index.filter((entry) => !gone.has(entry.id));
    if (kept.length === index.length) return;
    if (kept.length === 0) await this.keyv.delete(indexKey(sessionId));
    else await this.keyv.set(indexKey(sessionId), kept);
    await this.keyv.deleteMany(
      index.filter((entry) => gone.has(entry.id)).map((entry) => inputKey(sessionId, entry.id)),
    );
  }

  /** Replace the whole queue (tests and tools that rebuild a session by hand). */
  async replace(sessionId: string, inputs: readonly PendingInput[]): Promise<void> {
    await this.clear(sessionId);
    for (const input of inputs) await this.add(sessionId, input);
  }

  async clear(sessionId: string): Promise<void> {
    const index = await this.index(sessionId);
    await this.keyv.deleteMany(index.map((entry) => inputKey(sessionId, entry.id)));
    await this.keyv.delete(indexKey(sessionId));
    await this.keyv.delete(legacyKey(sessionId));
  }

  private async index(sessionId: string): Promise<PendingIndex> {
    return IndexSchema.parse((await this.keyv.get<unknown>(indexKey(sessionId))) ?? []);
  }

  private async legacy(sessionId: string): Promise<PendingInput[]> {
    return z.array(PendingInputSchema).parse((await this.keyv.get<unknown>(legacyKey(sessionId))) ?? []);
  }

  /** Move a queue stored in the old single-list layout into this one, in order. */
  private async foldLegacy(sessionId: string): Promise<void> {
    const legacy = await this.legacy(sessionId);
    if (legacy.length === 0) return;
    const index = await this.index(sessionId);
    for (const input of legacy) await this.keyv.set(inputKey(sessionId, input.id), input);
    const folded = [...legacy.map((input) => ({ id: input.id, bytes: byteLength(input.text) })), ...index];
    await this.keyv.set(indexKey(sessionId), folded);
    await this.keyv.delete(legacyKey(sessionId));
  }
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const inputKey = (sessionId: string, id: string): string => `pending-input:${sessionId}:${id}`;
const indexKey = (sessionId: string): string => `pending-index:${sessionId}`;
const legacyKey = (sessionId: string): string => `pending:${sessionId}`;
