// The Anthropic Messages API behind the engine's Provider seam.
//
// The one idea: one raw SSE stream per call, folded block by block (by `index`) into one
// AssistantTurn, and every way that stream can end is decided here. A finished message
// yields `final`; the caller's stop ends it silently; our stall watchdog, an `error` event
// or a dropped socket become a ProviderError. Conversion lives in anthropic-convert.ts.
//
// The SDK is imported on the first call, not with this file: a bot that never calls Claude
// would otherwise hold it (with the OpenTelemetry API it brings, about 20 MB) for nothing.
import type Anthropic from '@anthropic-ai/sdk';
import type { APIError } from '@anthropic-ai/sdk';
import {
  linkedAbortController,
  ProviderError,
  type AssistantTurn,
  type FinishReason,
  type ModelCapabilities,
  type Provider,
  type ProviderChunk,
  type ProviderRequest,
  type TokenUsage,
} from '../engine/index.js';
import {
  ANTHROPIC_EXTRAS_KEY,
  toAnthropicPrompt,
  toAnthropicTools,
  withCacheBreakpoints,
  type AnthropicExtras,
  type ReplayBlock,
} from './anthropic-convert.js';
import { capabilitiesOf } from './capabilities.js';
import { friendlyProviderError } from './errors.js';
import { parseModelRef } from './model-ref.js';
import { DEFAULT_STALL_TIMEOUT_MS, startStallWatchdog } from './stall-watchdog.js';

const VENDOR = 'Anthropic';

type AnthropicSdk = typeof import('@anthropic-ai/sdk');
/** Set once the first call has imported it; an error that is not a ProviderError comes after that. */
let sdk: AnthropicSdk | undefined;

export interface AnthropicProviderOptions {
  /** Defaults to `ANTHROPIC_API_KEY`; with neither, each call fails with an `auth` error. */
  apiKey?: string;
  /** The origin, without `/v1` (the SDK appends `/v1/messages`). Defaults to `ANTHROPIC_BASE_URL`, then the API. */
  baseURL?: string;
  /** SDK retries of 408/409/429/5xx/connection errors (default 2, so a 429 costs 3 requests). */
  maxRetries?: number;
  /** Wait for response headers, per attempt (default 60 s). The SDK's timeout stops there. */
  headersTimeoutMs?: number;
  /** Longest silence tolerated once the stream is open (default DEFAULT_STALL_TIMEOUT_MS). */
  stallTimeoutMs?: number;
  maxTokens?: number;
  /** Extended thinking, off by default. */
  thinking?: { budgetTokens: number };
  /** Cache breakpoints on the system prompt and the thread (default on). */
  promptCaching?: boolean;
}

export class AnthropicProvider implements Provider {
  readonly name = 'anthropic';
  private readonly options: AnthropicProviderOptions;
  private client: Anthropic | undefined;

  constructor(options: AnthropicProviderOptions = {}) {
    const budget = options.thinking?.budgetTokens;
    const maxTokens = options.maxTokens ?? 8192;
    // Both limits are the API's ("budget_tokens: must be ≥ 1024", "max_tokens must be
    // greater than thinking.budget_tokens"): a configuration error, so say it at start-up.
    if (budget !== undefined && (budget < 1024 || budget >= maxTokens)) {
      throw new Error(`Anthropic thinking budget ${budget} must be at least 1024 and below maxTokens (${maxTokens})`);
    }
    this.options = options;
  }

  capabilities(model: string): ModelCapabilities {
    return capabilitiesOf('anthropic', parseModelRef(model, 'anthropic').model);
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderChunk, void, undefined> {
    const model = parseModelRef(request.model, 'anthropic').model;
    const client = await this.clientOrThrow();
    const body = this.requestBody(model, request);
    // Our own controller per call: the turn's signal lives long, and the watchdog must be
    // able to abort this request alone.
    const { controller, release } = linkedAbortController(signal);
    const assembler = new TurnAssembler();
    let watchdog: ReturnType<typeof startStallWatchdog> | undefined;
    let streaming = false;
    try {
      // Raw `create({stream: true})`, not `messages.stream()`: on abort the raw iteration
      // just ends, while the helper rejects with APIUserAbortError (facts file, section 4).
      const events = await client.messages.create(body, { signal: controller.signal });
      streaming = true;
      // Armed only once headers are in: until then the SDK's own timeout (with retries)
      // applies. Neither SDK notices a body that goes quiet, so this does. The SDK swallows
      // `ping` events, so what is timed is the gap between real events.
      watchdog = startStallWatchdog(
        this.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
        () => controller.abort(),
        VENDOR,
      );
      for await (const event of events) {
        watchdog.touch();
        const chunk = assembler.apply(event);
        if (chunk) yield chunk;
      }
      if (watchdog.fired) throw watchdog.error();
      // The caller stopped us mid-stream: the iteration ended without a throw. No final,
      // unless the message had already finished (a whole answer stands).
      if (signal.aborted && !assembler.complete) return;
      yield { type: 'final', turn: assembler.finish() };
    } catch (error) {
      if (watchdog?.fired) throw watchdog.error();
      // Before headers the SDK throws APIUserAbortError; a stop is not a failure.
      if (signal.aborted) return;
      throw toProviderError(error, model, streaming);
    } finally {
      watchdog?.stop();
      release();
    }
  }

  private async clientOrThrow(): Promise<Anthropic> {
    if (this.client) return this.client;
    const apiKey = this.options.apiKey ?? process.env.ANTHROPIC_API_KEY;
    // Checked here, not in the constructor, so a bot configured for OpenAI starts without
    // an Anthropic key and only a switch to a Claude model says what is missing.
    if (!apiKey) {
      throw new ProviderError(
        'auth',
        'ANTHROPIC_API_KEY is not set: add the Anthropic API key to the configuration to use Claude models.',
      );
    }
    sdk ??= await import('@anthropic-ai/sdk');
    // `??=`: two first calls at once share one client.
    this.client ??= new sdk.default({
      apiKey,
      baseURL: this.options.baseURL,
      maxRetries: this.options.maxRetries ?? 2,
      timeout: this.options.headersTimeoutMs ?? 60_000,
    });
    return this.client;
  }

  private requestBody(model: string, request: ProviderRequest): Anthropic.MessageCreateParamsStreaming {
    const converted = toAnthropicPrompt(request.messages);
    const prompt = this.options.promptCaching === false ? converted : withCacheBreakpoints(converted);
    const body: Anthropic.MessageCreateParamsStreaming = {
      model,
      max_tokens: this.options.maxTokens ?? 8192,
      messages: prompt.messages,
      stream: true,
    };
    if (prompt.system.length > 0) body.system = prompt.system;
    if (request.tools.length > 0) body.tools = toAnthropicTools(request.tools);
    if (this.options.thinking) body.thinking = { type: 'enabled', budget_tokens: this.options.thinking.budgetTokens };
    // Settings (temperature, top_k, …) may override the defaults above, never the streaming.
    return { ...body, ...request.settings, stream: true };
  }
}

// ---- stream assembly -----------------------------------------------------------------

type BlockState =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; json: string }
  /** Server-side tool blocks and anything newer: not ours to interpret. */
  | { type: 'other' };

/**
 * Folds the raw events of one message into an AssistantTurn. Blocks are keyed by the
 * event `index`, as the API addresses them; deltas go to the block they name.
 */
class TurnAssembler {
  private readonly blocks: BlockState[] = [];
  private stopReason: Anthropic.StopReason | null = null;
  private usage: TokenUsage | undefined;
  /** The model id message_start says answers (for traces' gen_ai.response.model). */
  private model: string | undefined;
  private stopped = false;

  apply(event: Anthropic.RawMessageStreamEvent): ProviderChunk | undefined {
    switch (event.type) {
      case 'message_start':
        this.mergeUsage(event.message.usage);
        if (event.message.model) this.model = event.message.model;
        return undefined;
      case 'content_block_start':
        return this.startBlock(event.index, event.content_block);
      case 'content_block_delta':
        return this.applyDelta(event.index, event.delta);
      case 'content_block_stop':
        return undefined;
      case 'message_delta':
        this.stopReason = event.delta.stop_reason ?? this.stopReason;
        this.mergeUsage(event.usage);
        return undefined;
      case 'message_stop':
        this.stopped = true;
        return undefined;
    }
  }

  /** Whether `message_stop` arrived: only then is the turn whole. */
  get complete(): boolean {
    return this.stopped;
  }

  finish(): AssistantTurn {
    // A body that simply ends (a proxy closing a chunked response cleanly) must not pass
    // for a complete answer: without `message_stop` the turn may be cut anywhere.
    if (!this.stopped)
      throw new ProviderError('connection', `The ${VENDOR} stream ended before the answer was complete. Try again.`);
    const text = this.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const reasoning = this.blocks.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : [])).join('\n\n');
    const turn: AssistantTurn = {
      text: text || null,
      toolCalls: this.blocks.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: b.id, name: b.name, arguments: b.json || '{}' }] : [],
      ),
      finishReason: finishReasonOf(this.stopReason),
    };
    if (reasoning) turn.reasoning = reasoning;
    if (this.usage) turn.usage = this.usage;
    if (this.model) turn.responseModel = this.model;
    const replay = this.replayBlocks();
    if (replay.length > 0) turn.extras = { [ANTHROPIC_EXTRAS_KEY]: { blocks: replay } satisfies AnthropicExtras };
    return turn;
  }

  private startBlock(
    index: number,
    block: Anthropic.RawContentBlockStartEvent['content_block'],
  ): ProviderChunk | undefined {
    if (block.type === 'text') {
      this.blocks[index] = { type: 'text', text: block.text };
      return block.text ? { type: 'text_delta', text: block.text } : undefined;
    }
    if (block.type === 'thinking') {
      this.blocks[index] = { type: 'thinking', thinking: block.thinking, signature: block.signature };
      return block.thinking ? { type: 'reasoning_delta', text: block.thinking } : undefined;
    }
    if (block.type === 'redacted_thinking') {
      // Encrypted reasoning: nothing to show, but it must be replayed as it came.
      this.blocks[index] = { type: 'redacted_thinking', data: block.data };
    } else if (block.type === 'tool_use') {
      // `input` arrives as `{}` here and is streamed as input_json_delta fragments.
      this.blocks[index] = { type: 'tool_use', id: block.id, name: block.name, json: '' };
    } else {
      this.blocks[index] = { type: 'other' };
    }
    return undefined;
  }

  private applyDelta(index: number, delta: Anthropic.RawContentBlockDelta): ProviderChunk | undefined {
    const block = this.blocks[index];
    switch (delta.type) {
      case 'text_delta':
        if (block?.type !== 'text') return undefined;
        block.text += delta.text;
        return { type: 'text_delta', text: delta.text };
      case 'thinking_delta':
        if (block?.type !== 'thinking') return undefined;
        block.thinking += delta.thinking;
        return { type: 'reasoning_delta', text: delta.thinking };
      case 'signature_delta':
        if (block?.type === 'thinking') block.signature += delta.signature;
        return undefined;
      case 'input_json_delta':
        if (block?.type === 'tool_use') block.json += delta.partial_json;
        return undefined;
      case 'citations_delta':
        return undefined;
    }
  }

  /**
   * The thinking of this turn, for the next call. A thinking block whose signature never
   * arrived cannot be replayed (the API verifies it), so it is left out.
   */
  private replayBlocks(): ReplayBlock[] {
    return this.blocks.flatMap((b): ReplayBlock[] => {
      if (b.type === 'thinking' && b.signature)
        return [{ type: 'thinking', thinking: b.thinking, signature: b.signature }];
      if (b.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: b.data }];
      return [];
    });
  }

  /** message_start carries the input side; message_delta the final output count (and, lately, input fields too). */
  private mergeUsage(usage: Anthropic.Usage | Anthropic.MessageDeltaUsage): void {
    const merged: TokenUsage = { ...(this.usage ?? { input: 0, output: 0 }) };
    if (usage.input_tokens != null) merged.input = usage.input_tokens;
    merged.output = usage.output_tokens;
    if (usage.cache_read_input_tokens != null) merged.cacheRead = usage.cache_read_input_tokens;
    if (usage.cache_creation_input_tokens != null) merged.cacheWrite = usage.cache_creation_input_tokens;
    this.usage = merged;
  }
}

function finishReasonOf(reason: Anthropic.StopReason | null): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    // `model_context_window_exceeded`: cut by the window rather than by max_tokens, but
    // truncated all the same, so a half-streamed tool call gets the "cut off" diagnosis.
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    case 'pause_turn':
    case null:
      return 'other';
  }
}

// ---- errors ----------------------------------------------------------------------------

// The real overflow answers (400 invalid_request_error): "prompt is too long: 208310 tokens >
// 200000 maximum" and "input length and `max_tokens` exceed context limit: …".
const OVERFLOW_MESSAGE = /prompt is too long|exceed(?:s)? (?:the )?context (?:limit|window)/i;

// An `error` event mid-stream carries no HTTP status (the response was a 200), only a type.
// These are the statuses the API documents for each type, so it is judged like the same
// failure before headers: an `overloaded_error` is a server problem, not an unknown one.
const STATUS_OF_ERROR_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function toProviderError(error: unknown, model: string, streaming: boolean): ProviderError {
  if (error instanceof ProviderError) return error;
  // `instanceof` on the generic class narrows to APIError<any, any, any>; the cast restores its declared defaults.
  if (sdk && error instanceof sdk.APIError) return apiErrorToProviderError(error as APIError, model);
  // Once the body is streaming, a non-SDK error is fetch's body reader failing: the socket
  // dropped mid-answer (undici's "TypeError: terminated").
  if (streaming) {
    return new ProviderError('connection', `The connection to ${VENDOR} dropped mid-answer. Try again.`, {
      cause: error,
    });
  }
  const className = error instanceof Error ? error.constructor.name : typeof error;
  return friendlyProviderError(
    { vendor: VENDOR, model, status: undefined, code: undefined, apiMessage: undefined, className },
    error,
  );
}

function apiErrorToProviderError(error: APIError, model: string): ProviderError {
  const type = error.type ?? undefined;
  const status = error.status ?? (type ? STATUS_OF_ERROR_TYPE[type] : undefined);
  // Match on `apiMessage` and `type`: `message` is "400 " + the whole JSON body.
  const apiMessage = error.apiMessage ?? undefined;
  if (status === 400 && type === 'invalid_request_error' && apiMessage && OVERFLOW_MESSAGE.test(apiMessage)) {
    return new ProviderError('context_overflow', `The conversation is too long for ${model} (${apiMessage}).`, {
      status,
      cause: error,
    });
  }
  return friendlyProviderError(
    { vendor: VENDOR, model, status, code: type, apiMessage, className: error.constructor.name },
    error,
  );
}
