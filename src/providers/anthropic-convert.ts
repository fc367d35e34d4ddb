// Outbound messages → the Anthropic Messages API request shape, as pure functions.
//
// The one idea: Anthropic's shape is stricter than the canonical (OpenAI-style) history,
// so conversion is a fold, not a map. System text leaves the thread, tool results become
// user content, same-role neighbours merge into one message, and whatever the API would
// reject (an empty text block, an assistant first message) is repaired here, on a copy,
// per call. Nothing here mutates its input: the engine reuses its outbound messages.
import { unresolvedAttachmentText } from '../engine/index.js';
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { ContentPart, OutboundMessage, ToolCall, ToolSchema, UserContent } from '../engine/index.js';

/** The assistant-message key this provider owns (see messages.ts: provider-private extras). */
export const ANTHROPIC_EXTRAS_KEY = '_anthropic';

/** Blocks of a turn that must be sent back verbatim on the next call. */
export type ReplayBlock = Anthropic.ThinkingBlockParam | Anthropic.RedactedThinkingBlockParam;

export interface AnthropicExtras {
  blocks: ReplayBlock[];
}

/** One converted message. Content is always an array, so a cache breakpoint can be placed on it. */
interface AnthropicTurn {
  role: 'user' | 'assistant';
  content: Anthropic.ContentBlockParam[];
}

export interface AnthropicPrompt {
  system: Anthropic.TextBlockParam[];
  messages: AnthropicTurn[];
}

/**
 * Sent when a history starts with the assistant (e.g. after compaction): "first message must use the user role".
 * @internal
 */
export const CONTINUATION_TEXT = '(conversation continues)';

// `_anthropic` comes back from persisted transcripts, so it is parsed, not trusted. A thinking
// block without its signature is dropped: the API rejects it ("signature: Field required").
const ExtrasSchema = z.object({
  blocks: z.array(
    z.discriminatedUnion('type', [
      z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().min(1) }),
      z.object({ type: z.literal('redacted_thinking'), data: z.string().min(1) }),
    ]),
  ),
});

/** The replayable blocks stored on an assistant message; an unreadable record replays nothing. */
function replayBlocksOf(extras: unknown): ReplayBlock[] {
  const parsed = ExtrasSchema.safeParse(extras);
  return parsed.success ? parsed.data.blocks : [];
}

export function toAnthropicPrompt(messages: readonly OutboundMessage[]): AnthropicPrompt {
  const system: Anthropic.TextBlockParam[] = [];
  let index = 0;
  for (; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== 'system') break;
    system.push(...textBlock(message.content));
  }

  const turns: AnthropicTurn[] = [];
  for (const message of messages.slice(index)) {
    const converted = convertMessage(message);
    if (converted.content.length === 0) continue;
    const previous = turns.at(-1);
    // The API wants strict user/assistant alternation: parallel tool results, and a
    // steering message that arrived during the tool pass, become ONE user message.
    if (previous?.role === converted.role) previous.content.push(...converted.content);
    else turns.push(converted);
  }
  for (const turn of turns) if (turn.role === 'user') turn.content = toolResultsFirst(turn.content);

  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ type: 'text', text: CONTINUATION_TEXT }] });
  return { system, messages: turns };
}

export function toAnthropicTools(tools: readonly ToolSchema[]): Anthropic.Tool[] {
  // `input_schema.type` must be "object" (the API answers "input_schema.type: Field required");
  // zod's object schemas already say so, this only makes the type checker agree.
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.parameters, type: 'object' },
  }));
}

/**
 * Prompt-cache breakpoints on the last system block (which caches tools + system, the API's
 * prefix order) and on the last cacheable block of the last message (the whole thread so
 * far, read back on the next call of a tool loop). Returns a copy; the input is untouched.
 */
export function withCacheBreakpoints(prompt: AnthropicPrompt): AnthropicPrompt {
  const ephemeral: Anthropic.CacheControlEphemeral = { type: 'ephemeral' };
  const system = prompt.system.map((block, i) =>
    i === prompt.system.length - 1 ? { ...block, cache_control: ephemeral } : block,
  );
  const messages = [...prompt.messages];
  const last = messages.at(-1);
  if (last) {
    const content = [...last.content];
    // Thinking blocks cannot carry cache_control; take the last block that can.
    for (let i = content.length - 1; i >= 0; i--) {
      const block = content[i]!;
      if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
      content[i] = { ...block, cache_control: ephemeral };
      break;
    }
    messages[messages.length - 1] = { role: last.role, content };
  }
  return { system, messages };
}

function convertMessage(message: OutboundMessage): AnthropicTurn {
  switch (message.role) {
    case 'system':
      // Only leading system messages can become the `system` parameter; a later one (a
      // mode change, a reminder) keeps its place in the thread as tagged user text.
      return {
        role: 'user',
        content: textBlock(message.content.trim() ? `<system>\n${message.content}\n</system>` : ''),
      };
    case 'user':
      return { role: 'user', content: userBlocks(message.content) };
    case 'tool':
      return {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: toolUseId(message.tool_call_id), content: message.content }],
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          // Replayed first: with extended thinking, the API requires the turn's thinking
          // blocks (signatures intact) ahead of its tool_use when the tool loop continues.
          ...replayBlocksOf(message[ANTHROPIC_EXTRAS_KEY]),
          ...textBlock(message.content ?? ''),
          ...(message.tool_calls ?? []).map(toolUseBlock),
        ],
      };
  }
}

function userBlocks(content: UserContent): Anthropic.ContentBlockParam[] {
  if (typeof content === 'string') return textBlock(content);
  return content.flatMap(partBlocks);
}

function partBlocks(part: ContentPart): Anthropic.ContentBlockParam[] {
  switch (part.type) {
    case 'text':
      return textBlock(part.text);
    case 'image_url':
      return [imageBlock(part.image_url.url)];
    case 'file':
      return [documentBlock(part.file.file_data, part.file.filename)];
    case 'attachment':
      // The outbound view resolves references (engine/outbound.ts); one that slipped through is named, never read here.
      return textBlock(unresolvedAttachmentText(part));
  }
}

const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

function imageBlock(url: string): Anthropic.ContentBlockParam {
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  const data = parseDataUrl(url);
  const mediaType = IMAGE_MEDIA_TYPES.find((type) => type === data?.mediaType);
  // The API accepts only these four formats and rejects the whole request otherwise:
  // one unreadable attachment must not cost the conversation.
  if (!data || !mediaType)
    return { type: 'text', text: `[image attachment${data ? ` (${data.mediaType})` : ''} — format not supported]` };
  return {
    type: 'image',
    source: { type: 'base64', media_type: mediaType satisfies ImageMediaType, data: data.base64 },
  };
}

function documentBlock(fileData: string | undefined, filename: string | undefined): Anthropic.ContentBlockParam {
  const data = fileData ? parseDataUrl(fileData) : undefined;
  if (data?.mediaType !== 'application/pdf') {
    return { type: 'text', text: `[file attachment${filename ? ` "${filename}"` : ''} — not a PDF, not sent]` };
  }
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data.base64 } };
}

function toolUseBlock(call: ToolCall): Anthropic.ToolUseBlockParam {
  return {
    type: 'tool_use',
    id: toolUseId(call.id),
    name: call.function.name,
    input: argumentsObject(call.function.arguments),
  };
}

/**
 * `input` must be a JSON object. The engine already stores unparseable arguments as
 * `{"_raw": …}`, which is sent as is; anything else that is not an object becomes `{}`.
 */
function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * Anthropic checks tool_use ids against `^[a-zA-Z0-9_-]+$`; a history written by another
 * vendor may hold ids outside that set. Mapped the same way on both sides, so pairs still match.
 */
function toolUseId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'call';
}

/** "text content blocks must contain non-whitespace text": such blocks are left out. */
function textBlock(text: string): Anthropic.TextBlockParam[] {
  return text.trim() ? [{ type: 'text', text }] : [];
}

/** "tool_result blocks must come first in the user message that follows tool_use". */
function toolResultsFirst(content: Anthropic.ContentBlockParam[]): Anthropic.ContentBlockParam[] {
  const results = content.filter((block) => block.type === 'tool_result');
  if (results.length === 0 || results.length === content.length) return content;
  return [...results, ...content.filter((block) => block.type !== 'tool_result')];
}

function parseDataUrl(url: string): { mediaType: string; base64: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/is.exec(url);
  if (!match) return undefined;
  return { mediaType: match[1]!.toLowerCase(), base64: match[2]! };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
