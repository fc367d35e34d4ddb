// Chat Completions wire shapes <-> engine shapes, both ways: outbound messages and tool
// schemas become request fields; streamed chunk deltas become text, reasoning and one
// AssistantTurn.
//
// The one idea: our canonical history already is Chat Completions shape, so going out is
// a copy that drops what the API has no field for (every `_` extra but our own, which only
// a server that demands its reasoning back gets); coming back, a `ChatTurnAssembler` is the
// single place where deltas are glued together, tolerant of what OpenAI-compatible servers
// (Ollama, vLLM, LM Studio, DeepSeek, OpenRouter, Kimi) do differently from OpenAI itself,
// and the one judge of whether the stream finished.
import { unresolvedAttachmentText } from '../engine/index.js';
import { choiceUsage, toTokenUsage } from './openai-usage.js';
import { z } from 'zod';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import {
  ProviderError,
  type AssistantTurn,
  type ContentPart,
  type FinishReason,
  type OutboundMessage,
  type ToolSchema,
  type UserContent,
} from '../engine/index.js';

/** The assistant-message key this provider owns (see messages.ts: provider-private extras). */
const OPENAI_EXTRAS_KEY = '_openai';

/** What an answer keeps for the next call: its reasoning, for a server that demands it back. */
interface OpenAIExtras {
  reasoning_content: string;
}

// `_openai` comes back from persisted transcripts, so it is parsed, not trusted.
const ExtrasSchema = z.object({ reasoning_content: z.string() });

function storedReasoningOf(extras: unknown): string | undefined {
  const parsed = ExtrasSchema.safeParse(extras);
  return parsed.success ? parsed.data.reasoning_content : undefined;
}

// ---- outbound ------------------------------------------------------------------------

/** An assistant message with DeepSeek's field, which the SDK types do not know. */
type ReplayingAssistantMessage = ChatCompletionAssistantMessageParam & { reasoning_content?: string };

export interface ChatMessageOptions {
  /** Send each answer's reasoning back as `reasoning_content` (capabilities.ts: replaysReasoning). */
  replayReasoning?: boolean;
}

export function toChatMessages(
  messages: readonly OutboundMessage[],
  options: ChatMessageOptions = {},
): ChatCompletionMessageParam[] {
  return messages.map((message) => toChatMessage(message, options));
}

function toChatMessage(message: OutboundMessage, options: ChatMessageOptions): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: toChatContent(message.content) };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
    case 'assistant': {
      // Built field by field rather than copied, so every `_` extra (ours or another
      // vendor's, e.g. `_anthropic` thinking signatures) stays behind: Chat Completions has
      // no extras of its own and rejects unknown message keys.
      const calls = message.tool_calls ?? [];
      // `content: null` is only valid next to tool calls; a reasoning-only partial (kept
      // after a stop) has neither, and OpenAI answers 400 "expected a string, got null".
      const out: ReplayingAssistantMessage = {
        role: 'assistant',
        content: message.content ?? (calls.length > 0 ? null : ''),
      };
      // DeepSeek checks that the field is there on every answer of a tool loop, not what it
      // holds: an answer from another model (or a partial kept after a failure) sends ''.
      if (options.replayReasoning) out.reasoning_content = storedReasoningOf(message[OPENAI_EXTRAS_KEY]) ?? '';
      if (calls.length > 0)
        out.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { ...call.function } }));
      return out;
    }
  }
}

function toChatContent(content: UserContent): string | ChatCompletionContentPart[] {
  if (typeof content === 'string') return content;
  return content.map(toChatPart);
}

function toChatPart(part: ContentPart): ChatCompletionContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image_url': {
      // Our schema keeps `detail` as free text (stored records may carry any value); the
      // API accepts auto | low | high, so pass those and let the server default the rest.
      const { url, detail } = part.image_url;
      return detail === 'auto' || detail === 'low' || detail === 'high'
        ? { type: 'image_url', image_url: { url, detail } }
        : { type: 'image_url', image_url: { url } };
    }
    case 'file':
      return { type: 'file', file: { ...part.file } };
    case 'attachment':
      // The outbound view resolves references (engine/outbound.ts); one that slipped through is named, never read here.
      return { type: 'text', text: unresolvedAttachmentText(part) };
  }
}

export function toChatTools(tools: readonly ToolSchema[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

// ---- inbound -------------------------------------------------------------------------

/**
 * Delta fields the SDK types do not know: DeepSeek and older vLLM stream thinking as
 * `reasoning_content`, Ollama, OpenRouter and newer vLLM as `reasoning`.
 */
interface CompatibleDelta extends ChatCompletionChunk.Choice.Delta {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

/** Compatible servers stretch the SDK's types: a missing `index`, an empty `id`, any finish string. */
interface CompatibleToolCallDelta extends Omit<ChatCompletionChunk.Choice.Delta.ToolCall, 'index'> {
  index?: number;
}

export type DeltaChunk = { type: 'text_delta'; text: string } | { type: 'reasoning_delta'; text: string };

interface ToolCallSlot {
  id: string | undefined;
  name: string;
  arguments: string;
}

/** Accumulates one streamed answer; `accept` returns the deltas to show at once. */
export class ChatTurnAssembler {
  private text = '';
  private reasoning = '';
  private readonly calls: ToolCallSlot[] = [];
  /** A call by its `index`, or by its place in `tool_calls` when the server sends no index. */
  private readonly slotByPlace = new Map<number, ToolCallSlot>();
  private readonly slotById = new Map<string, ToolCallSlot>();
  private rawFinish: string | null = null;
  /** The last usage the server sent, as sent: parsed once, when the answer is whole (openai-usage.ts). */
  private rawUsage: unknown;
  /** The model id the server says answered (every chunk names it; the last non-empty one wins). */
  private model: string | undefined;

  accept(chunk: ChatCompletionChunk): DeltaChunk[] {
    if (typeof chunk.model === 'string' && chunk.model) this.model = chunk.model;
    // Usage may ride alone (`choices: []`, OpenAI with include_usage, after the finish
    // chunk), on a content chunk (some compatible servers, every chunk) or inside the finish
    // chunk's choice (Kimi): the last one seen is the total.
    if (chunk.usage) this.rawUsage = chunk.usage;
    const out: DeltaChunk[] = [];
    for (const choice of chunk.choices ?? []) {
      // `n > 1` would interleave several answers; the engine asked for one.
      if (choice.index !== 0 && choice.index !== undefined) continue;
      const inChoice = choiceUsage(choice);
      if (inChoice) this.rawUsage = inChoice;
      const delta = choice.delta as CompatibleDelta | undefined;
      if (delta) {
        const thought = delta.reasoning_content || delta.reasoning;
        if (thought) {
          this.reasoning += thought;
          out.push({ type: 'reasoning_delta', text: thought });
        }
        // A refusal (structured outputs) is the model's answer to the user: show it as text.
        const text = delta.content || delta.refusal;
        if (text) {
          this.text += text;
          out.push({ type: 'text_delta', text });
        }
        ((delta.tool_calls ?? []) as CompatibleToolCallDelta[]).forEach((call, place) =>
          this.acceptToolCall(call, place),
        );
      }
      // Some servers send "" on every chunk before the real reason (Ollama, SGLang).
      if (choice.finish_reason) this.rawFinish = choice.finish_reason;
    }
    return out;
  }

  /**
   * The whole answer. Arguments stay raw text: judging them is the engine's job.
   *
   * Only a finish_reason makes an answer whole, and without one this throws: half a text is
   * not an answer, and a half-streamed call must never run. `[DONE]` cannot stand in for it
   * (the SDK swallows it, and some servers close without it after the finish chunk), and a
   * proxy or load balancer closing a chunked body early ends it just as cleanly as the
   * server would. Usage-only chunks come after the finish chunk and change nothing.
   */
  turn(vendor: string): AssistantTurn {
    if (this.rawFinish === null) {
      throw new ProviderError(
        'connection',
        `The stream from ${vendor} ended before the answer was complete. Try again.`,
      );
    }
    const turn: AssistantTurn = {
      text: this.text || null,
      toolCalls: this.calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
      finishReason: mapFinishReason(this.rawFinish),
    };
    if (this.reasoning) turn.reasoning = this.reasoning;
    const usage = this.rawUsage === undefined ? undefined : toTokenUsage(this.rawUsage);
    if (usage) turn.usage = usage;
    if (this.model) turn.responseModel = this.model;
    return turn;
  }

  /** The extras to keep on this answer when the server demands its reasoning back. */
  replayExtras(): Record<string, unknown> | undefined {
    if (!this.reasoning) return undefined;
    return { [OPENAI_EXTRAS_KEY]: { reasoning_content: this.reasoning } satisfies OpenAIExtras };
  }

  /**
   * A call's first piece brings its id and name (some servers repeat them, or send an empty
   * id first, so the first non-empty one wins); later pieces bring only arguments, to
   * concatenate. A piece finds its call by id when it has one, else by `index`, else by its
   * place in this chunk's `tool_calls` (Kimi-compatible servers send no index: a chunk
   * carrying pieces of two calls lists them in the same order each time). An id unlike the
   * one already at that place is a new call (a server that numbers each chunk's calls from
   * 0, or streams whole calls one per chunk, as older Ollama does).
   */
  private acceptToolCall(delta: CompatibleToolCallDelta, place: number): void {
    const id = delta.id || undefined;
    const key = delta.index ?? place;
    let slot = id ? this.slotById.get(id) : undefined;
    if (!slot) {
      const atPlace = this.slotByPlace.get(key);
      if (atPlace && !(id && atPlace.id && atPlace.id !== id)) slot = atPlace;
    }
    if (!slot) {
      slot = { id: undefined, name: '', arguments: '' };
      this.calls.push(slot);
    }
    this.slotByPlace.set(key, slot);
    if (!slot.id && id) {
      slot.id = id;
      this.slotById.set(id, slot);
    }
    if (!slot.name && delta.function?.name) slot.name = delta.function.name;
    if (delta.function?.arguments) slot.arguments += delta.function.arguments;
  }
}

function mapFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    // `function_call` is the pre-tools name of the same thing; some servers still send it.
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}
