// The canonical message model: what the engine keeps, persists and reloads.
//
// History is OpenAI chat shape plus one role of our own (`notice`, display-only markers)
// and sidecar fields that ride on messages but never reach a provider (see outbound.ts,
// the one place that removes them). Provider-private extras are assistant keys that start
// with `_` (e.g. `_anthropic`): they persist, the owning provider replays them, every
// other provider strips them.
import { z } from 'zod';

const NOTICE_KINDS = ['error', 'interrupted', 'model_switch', 'compacted', 'max_iterations', 'budget'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/** Where a user message came from: the connector fills this; the model never sees it. */
export const MessageSourceSchema = z.looseObject({
  platform: z.string(),
  workspace: z.string().optional(),
  channel: z.string().optional(),
  thread: z.string().optional(),
  userId: z.string().optional(),
  userName: z.string().optional(),
  messageId: z.string().optional(),
  permalink: z.string().optional(),
});
export type MessageSource = z.infer<typeof MessageSourceSchema>;

/** Token counts of one model call, tagged with the model that produced them. */
const UsageSchema = z.object({
  model: z.string(),
  input: z.number(),
  output: z.number(),
  cacheRead: z.number().optional(),
  cacheWrite: z.number().optional(),
  reasoning: z.number().optional(),
  /** The server reported no usage: the counts are the bot's estimate. */
  estimated: z.boolean().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() });
const ImagePartSchema = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string(), detail: z.string().optional() }),
});
const FilePartSchema = z.object({
  type: z.literal('file'),
  file: z.object({ filename: z.string().optional(), file_data: z.string().optional() }),
});
/**
 * A file a person shared, as the transcript keeps it: a reference into the conversation's
 * folder, never its bytes. The outbound view turns it into what the model can take (an image
 * or a document part, extracted text, or a line saying where it is) at each call.
 */
const StoredFileSchema = z.object({
  /** Relative to the conversation's folder, e.g. `uploads/screenshot.png`. */
  path: z.string(),
  /** The name as shared (untrusted: shown, never used as a path). */
  name: z.string(),
  mimeType: z.string(),
  size: z.number(),
  /** What the bot can do with it: an image or PDF a model may read, text for the file tools, anything else kept. */
  kind: z.enum(['image', 'pdf', 'text', 'other']),
  /** An image re-encoded to fit the providers' limits (relative path), when the original does not. */
  modelCopy: z.object({ path: z.string(), mimeType: z.string() }).optional(),
  /** A PDF's extracted text beside it (relative path), for a model that cannot read PDFs. */
  textPath: z.string().optional(),
  /** Why the model gets no image of it (too large even re-encoded, unreadable), when so. */
  unreadable: z.string().optional(),
});
export type StoredFile = z.infer<typeof StoredFileSchema>;
const AttachmentPartSchema = z.object({ type: z.literal('attachment'), attachment: StoredFileSchema });
export type AttachmentPart = z.infer<typeof AttachmentPartSchema>;

const ContentPartSchema = z.discriminatedUnion('type', [
  TextPartSchema,
  ImagePartSchema,
  FilePartSchema,
  AttachmentPartSchema,
]);
type TextPart = z.infer<typeof TextPartSchema>;
export type FilePart = z.infer<typeof FilePartSchema>;
export type ContentPart = z.infer<typeof ContentPartSchema>;

/**
 * A file a message carries that is not fetched yet: what a connector knows from the platform's
 * event. Recorded with the pending input (so a restart still fetches it); the files room
 * (src/files/) downloads it when a turn takes the message.
 */
export const IncomingFileSchema = z.object({
  /** The platform whose file source fetches it: 'slack', 'discord', 'web'. */
  platform: z.string(),
  /** The platform's id of the file (Slack F…, a Discord attachment id, a playground upload id). */
  id: z.string(),
  /** The name as shared (untrusted). */
  name: z.string(),
  /** Where the platform's file source fetches it from (Slack `url_private_download`, a Discord CDN URL). */
  url: z.string(),
  mimeType: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
});
export type IncomingFile = z.infer<typeof IncomingFileSchema>;

/** A shared file's one-line description where its content cannot be sent. */
export function unresolvedAttachmentText(part: AttachmentPart): string {
  const file = part.attachment;
  return `[file shared: ${file.path} (${file.mimeType}, ${file.size} bytes)]`;
}

const UserContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);
export type UserContent = z.infer<typeof UserContentSchema>;

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

const sidecars = {
  ts: z.number().optional(),
};

const SystemMessageSchema = z.object({ role: z.literal('system'), content: z.string(), ...sidecars });
const UserMessageSchema = z.object({
  role: z.literal('user'),
  content: UserContentSchema,
  ...sidecars,
  source: MessageSourceSchema.optional(),
  _display: z.unknown().optional(),
});
// Loose: provider-private `_extras` ride along and must survive a reload untouched.
const AssistantMessageSchema = z.looseObject({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  tool_calls: z.array(ToolCallSchema).optional(),
  ...sidecars,
  reasoning: z.string().optional(),
  usage: UsageSchema.optional(),
});
const ToolMessageSchema = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string(),
  content: z.string(),
  ...sidecars,
  _display: z.unknown().optional(),
});
const NoticeMessageSchema = z.object({
  role: z.literal('notice'),
  kind: z.enum(NOTICE_KINDS),
  text: z.string().optional(),
  ...sidecars,
});

type SystemMessage = z.infer<typeof SystemMessageSchema>;
type UserMessage = z.infer<typeof UserMessageSchema>;
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
export type ToolMessage = z.infer<typeof ToolMessageSchema>;
type NoticeMessage = z.infer<typeof NoticeMessageSchema>;

export const MessageSchema = z.discriminatedUnion('role', [
  SystemMessageSchema,
  UserMessageSchema,
  AssistantMessageSchema,
  ToolMessageSchema,
  NoticeMessageSchema,
]);
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage | NoticeMessage;

/**
 * Parse a stored or foreign record into a canonical message; throws a zod error naming the bad field.
 * @internal
 */
export function parseMessage(raw: unknown): Message {
  return MessageSchema.parse(raw);
}

/** Display-only fields: persisted with the transcript, never sent to a provider. */
export const SIDECAR_KEYS = ['ts', 'source', '_display', 'reasoning', 'usage'] as const;

export function textOf(content: UserContent | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

export function hasImages(messages: readonly Message[]): boolean {
  return messages.some(
    (m) =>
      m.role === 'user' &&
      Array.isArray(m.content) &&
      m.content.some((p) => p.type === 'image_url' || (p.type === 'attachment' && p.attachment.kind === 'image')),
  );
}

/** Tool-error content as the model reads it: a JSON object naming what happened and why. */
export function toolErrorContent(reason: string, detail?: Record<string, unknown>): string {
  return JSON.stringify({ error: 'tool call not executed', reason, ...detail });
}

/** The reason a call that a stop cut short (or never started) is answered with. */
export const INTERRUPTED_BY_USER = 'interrupted by user';
/** The reason a call that was running when the bot restarted is answered with (it is not run again). */
export const INTERRUPTED_BY_RESTART = 'interrupted by a restart: it may have run partly; it was not run again';

/**
 * A message as a provider receives it: the canonical history with notices dropped and
 * sidecars stripped (outbound.ts builds it). It lives with the canonical model, not with its
 * builder, because the provider interface names it and the builder reads the provider's
 * capabilities.
 */
export type OutboundMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: UserContent }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; [extra: `_${string}`]: unknown }
  | { role: 'tool'; tool_call_id: string; content: string };
