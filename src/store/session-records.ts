// The shapes the session store keeps, as zod schemas: every record read back is parsed with
// them, since a stored record is outside input like any other. A session is keyed by its
// thread (platform, workspace, channel, thread root); its record, the inbox items, the
// platform message references, the open answer and the tool ledger's round are stored as
// these shapes (session-store.ts says under which keys).
import { z } from 'zod';

export const LedgerRoundSchema = z.object({ round: z.string(), started: z.array(z.string()) });

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

/** The key a session id was made from (sessionIdOf's inverse), or undefined for an id it did not make. */
export function sessionKeyOf(id: string): SessionKey | undefined {
  const parts = id.split(':');
  if (parts.length !== 4) return undefined;
  try {
    const [platform, workspace, channel, thread] = parts.map(decodeURIComponent) as [string, string, string, string];
    const parsed = SessionKeySchema.safeParse({ platform, workspace, channel, thread });
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // a malformed escape: not an id sessionIdOf made
  }
}

const GrantOwnerShape = { by: z.string().optional(), everyone: z.boolean().optional() };
/** A grant stored before grants had owners is a bare tool name: it keeps no giver (and covers no one's turns). */
export const GrantsSchema = z.object({
  tools: z.array(
    z.union([z.string().transform((tool) => ({ tool })), z.object({ tool: z.string(), ...GrantOwnerShape })]),
  ),
  commands: z.array(z.object({ tool: z.string(), command: z.string(), ...GrantOwnerShape })),
});

export const SessionRecordSchema = z.object({
  id: z.string(),
  key: SessionKeySchema,
  model: z.string(),
  grants: GrantsSchema,
  compaction: z.object({ boundary: z.number().int().nonnegative(), summary: z.string() }).nullable(),
  /** The user who started the thread: who may approve when no admins are configured. */
  startedBy: z.string().optional(),
  /** The profile the thread started under (src/profiles/), kept until an admin switches it; unset: the environment's own. */
  profile: z.string().optional(),
  /** Everyone who steered the thread: they may stop it too. */
  steerers: z.array(z.string()),
  /** Directories a person granted the tools in this thread (request_directory). */
  directories: z.array(z.string()).default([]),
  /** How many restarts in a row resumed the current turn (reset when a turn ends): a loop guard. */
  restartResumes: z.number().int().nonnegative().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

export const InboxItemSchema = z.object({
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
  reason: z.string().optional(),
  command: z.string().optional(),
});

/** What a button click or a reaction on a platform message leads to. */
export const MessageRefSchema = z.object({
  sessionId: z.string(),
  toolCallId: z.string().optional(),
  /** The card or message kind: answer, tool, approval, question, … (the connector's words). */
  kind: z.string(),
  /** For an index entry that points back at a platform message (a tool card's ts). */
  platformMessageId: z.string().optional(),
  /** An index entry written before its message was posted: when the post began (epoch ms). */
  postingAt: z.number().optional(),
  /** A turn's final answer that offers 👍 / 👎 (src/feedback/): what the feedback is recorded against. */
  answer: z
    .object({ model: z.string().optional(), requestId: z.string().optional(), turnStartedAt: z.number() })
    .optional(),
});
export type MessageRef = z.infer<typeof MessageRefSchema>;

/**
 * A thread's open answer, written ahead as the card index is: `startingAt` (epoch ms) right
 * before the platform is asked to open the stream, its `messageId` once the platform answered.
 * An owner that dies between the two (the stream open in the thread, its id known nowhere)
 * leaves the mark, and the instance that takes over looks for the stream posted since.
 */
export const OpenAnswerSchema = z.union([z.object({ messageId: z.string() }), z.object({ startingAt: z.number() })]);
export type OpenAnswer = z.infer<typeof OpenAnswerSchema>;
