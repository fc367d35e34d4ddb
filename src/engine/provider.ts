// The provider seam: how the engine talks to a model, whatever the vendor.
//
// A provider converts the outbound (already stripped) messages to its wire format per
// call, streams chunks, and ends with one `final` chunk carrying the whole assistant turn.
// It honours the AbortSignal it is given (closing the HTTP connection); the engine still
// races every chunk against the stop signal, so a provider that ignores it cannot hold a turn.
import type { OutboundMessage } from './messages.js';

export interface ToolSchema {
  name: string;
  description: string;
  /** JSON Schema of the arguments object (from the tool's zod schema). */
  parameters: Record<string, unknown>;
}

export interface ProviderRequest {
  model: string;
  /** The engine's view of the history (outbound.ts): read it during the call; it is not a copy, and changes after. */
  messages: OutboundMessage[];
  tools: ToolSchema[];
  settings?: Record<string, unknown>;
  /**
   * What the call is for, for the bot's own accounting (spend, metrics, traces: src/ops/);
   * providers ignore it and never send it. `requester`: the person whose message the turn
   * answers, when known.
   */
  meta?: CallMeta;
}

export interface CallMeta {
  purpose: 'turn' | 'compaction';
  requester?: string;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface TokenUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Output tokens spent on reasoning (already counted in `output`), when the provider says. */
  reasoning?: number;
  /** The server reported no usage: these are the bot's own estimate (src/ops/metered-provider.ts). */
  estimated?: boolean;
}

/** A tool call as the provider produced it. `arguments` is raw text: the engine judges it. */
export interface ProviderToolCall {
  /** Some providers send none, or number calls per turn; the engine makes ids unique. */
  id?: string | null;
  name: string;
  arguments: string;
}

export interface AssistantTurn {
  text: string | null;
  toolCalls: ProviderToolCall[];
  finishReason: FinishReason;
  reasoning?: string | null;
  usage?: TokenUsage;
  /** The model id the provider says answered (a dated snapshot of the requested alias), for traces; never persisted. */
  responseModel?: string;
  /** Provider-private extras (keys start with `_`), persisted on the assistant message. */
  extras?: Record<string, unknown>;
}

export type ProviderChunk =
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'final'; turn: AssistantTurn };

export interface ModelCapabilities {
  tools: boolean;
  vision: boolean;
  pdf: boolean;
  /** Context window in tokens. */
  contextWindow: number;
}

export interface Provider {
  readonly name: string;
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderChunk>;
  capabilities(model: string): ModelCapabilities;
}

/** Picks the provider for a model name; lets `switchModel` cross vendors. */
export type ProviderResolver = (model: string) => Provider;

export type ProviderErrorKind =
  | 'context_overflow'
  | 'auth'
  | 'quota'
  | 'model_not_found'
  | 'rate_limited'
  | 'server'
  | 'stalled'
  | 'connection'
  | 'bad_request'
  /** A spend limit (src/ops/) refused the call before it was sent: the turn pauses, an admin may continue it. */
  | 'budget'
  | 'other';

/**
 * A provider failure the engine understands. Providers translate their SDK's errors into
 * this so the engine can route a context overflow into compaction and show everyone else
 * one friendly line instead of a raw stack.
 */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly status?: number;
  override readonly cause?: unknown;

  constructor(kind: ProviderErrorKind, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message);
    this.name = 'ProviderError';
    this.kind = kind;
    this.status = options.status;
    this.cause = options.cause;
  }
}

export function isContextOverflow(error: unknown): boolean {
  return error instanceof ProviderError && error.kind === 'context_overflow';
}

/** The one line a user sees for a failed model call. */
export function describeProviderError(error: unknown): { message: string; kind: string } {
  if (error instanceof ProviderError) return { message: error.message, kind: error.kind };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `The model call failed: ${message}`, kind: 'other' };
}

/**
 * Safe capabilities for a model nobody told us about: tools yes, media no, a modest window.
 * @internal
 */
export const UNKNOWN_MODEL_CAPABILITIES: ModelCapabilities = {
  tools: true,
  vision: false,
  pdf: false,
  contextWindow: 128_000,
};
