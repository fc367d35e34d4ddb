// OpenAIProvider: the engine's Provider for OpenAI Chat Completions, and for every server
// that speaks it (Ollama, vLLM, LM Studio, OpenRouter…) through `baseURL`.
//
// The one idea: the SDK owns HTTP and retries, this class owns the call's lifetime. Each
// call gets its own AbortController, fired by the caller's signal or by an idle watchdog,
// and when the stream ends that controller's story decides the outcome: the caller
// stopped (return quietly, no final chunk), the watchdog fired (throw 'stalled'), or
// neither (a whole answer if the server said why it stopped, else a 'connection' error,
// or an SDK error translated into a ProviderError).
// Wire-shape conversion lives in openai-convert.ts.
//
// The SDK (about 15 MB) is imported on the first call, not with this file: a bot whose models
// are all Anthropic's never loads it.
import type OpenAI from 'openai';
import type { APIError } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import {
  linkedAbortController,
  ProviderError,
  type ModelCapabilities,
  type Provider,
  type ProviderChunk,
  type ProviderRequest,
} from '../engine/index.js';
import { capabilitiesOf, replaysReasoning } from './capabilities.js';
import { friendlyProviderError } from './errors.js';
import { parseModelRef } from './model-ref.js';
import { ChatTurnAssembler, toChatMessages, toChatTools } from './openai-convert.js';
import { DEFAULT_STALL_TIMEOUT_MS, startStallWatchdog } from './stall-watchdog.js';

export interface OpenAIProviderOptions {
  /** Falls back to env OPENAI_API_KEY; a local server behind `baseURL` needs none. */
  apiKey?: string;
  /** e.g. `http://localhost:11434/v1` for Ollama. Falls back to env OPENAI_BASE_URL. */
  baseURL?: string;
  /** SDK retries for 408/409/429/5xx and connection errors (default 2: a 429 costs 3 requests). */
  maxRetries?: number;
  /** The SDK's own timeout, which only covers the wait for response headers (default 60 s). */
  headersTimeoutMs?: number;
  /** Idle time between stream events before the call is abandoned as stalled. */
  stallTimeoutMs?: number;
  /** Not supported: the HTTP path is the SDK's, so the fakes test the real one. */
  fetch?: never;
}

const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;

/** Sent when a compatible server needs no key: the SDK refuses to start without one. */
const NO_KEY_NEEDED = 'not-needed';

const OPENAI_HOST = 'api.openai.com';

type OpenAISdk = typeof import('openai');
/** Set once the first call has imported it; an error that is not a ProviderError comes after that. */
let sdk: OpenAISdk | undefined;

export class OpenAIProvider implements Provider {
  readonly name = 'openai';
  private readonly options: OpenAIProviderOptions;
  private readonly stallTimeoutMs: number;
  /** The SDK client and the name errors give its server, made together at the first call. */
  private connected: { client: OpenAI; vendor: string } | undefined;

  constructor(options: OpenAIProviderOptions = {}) {
    this.options = options;
    this.stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  }

  capabilities(model: string): ModelCapabilities {
    return capabilitiesOf('openai', parseModelRef(model, 'openai').model);
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderChunk, void, undefined> {
    const model = parseModelRef(request.model, 'openai').model;
    const { client, vendor } = await this.connect();
    const replayReasoning = replaysReasoning(model, request.settings);
    if (signal.aborted) return;
    // Our own controller, not the caller's signal: openai 6 adds an abort listener to every
    // signal it is given and never removes it (see abort.ts), and the watchdog needs a
    // way to abort that is distinguishable from the caller's stop.
    const { controller, release } = linkedAbortController(signal);
    const watchdog = startStallWatchdog(this.stallTimeoutMs, () => controller.abort(), vendor);
    const assembler = new ChatTurnAssembler();
    let streaming = false;
    let finished = false;
    try {
      // The watchdog is already armed here, so it also covers the wait for headers (and
      // the SDK's retries) whenever it is shorter than the SDK timeout.
      const stream = await client.chat.completions.create(requestBody(model, request, replayReasoning), {
        signal: controller.signal,
      });
      streaming = true;
      watchdog.touch();
      for await (const chunk of stream) {
        // Armed only while we wait on the server: time the consumer (a slow chat
        // platform) takes between our yields is not the server going quiet.
        watchdog.pause();
        // Events already buffered still come out after an abort; a stop means stop now.
        if (controller.signal.aborted) break;
        for (const delta of assembler.accept(chunk)) yield delta;
        watchdog.touch();
      }
      finished = true;
    } catch (error) {
      // "aborting *before* headers throws APIUserAbortError": a stop is not a failure.
      if (signal.aborted) return;
      if (watchdog.fired) throw watchdog.error();
      throw translateError(error, { vendor, model, streaming });
    } finally {
      watchdog.stop();
      release();
      // A consumer that walks away mid-stream must not leave the connection open.
      if (!finished) controller.abort();
    }
    // "aborting *mid-stream* ends the `for await` silently, with no throw": only the
    // signals can tell a stop or a stall from a complete answer.
    if (signal.aborted) return;
    if (watchdog.fired) throw watchdog.error();
    // A body that ended without a finish_reason throws here, as a dropped connection would:
    // the engine keeps what was shown, says so, and offers Retry; no half call ever runs.
    const turn = assembler.turn(vendor);
    const extras = replayReasoning ? assembler.replayExtras() : undefined;
    if (extras) turn.extras = extras;
    yield { type: 'final', turn };
  }

  /**
   * The SDK client, made on first use. `new OpenAI()` throws without a key, and a local
   * server needs none, so a placeholder goes in when a base URL is set; with neither, the
   * failure is the user's config, said at call time rather than crashing the bot at start.
   */
  private async connect(): Promise<{ client: OpenAI; vendor: string }> {
    if (this.connected) return this.connected;
    const baseURL = this.options.baseURL || process.env.OPENAI_BASE_URL || undefined;
    const apiKey = this.options.apiKey || process.env.OPENAI_API_KEY || (baseURL ? NO_KEY_NEEDED : undefined);
    if (!apiKey) {
      throw new ProviderError(
        'auth',
        'OPENAI_API_KEY is not set: add it to the configuration, or set a base URL for a local OpenAI-compatible server (which needs no key).',
      );
    }
    sdk ??= await import('openai');
    // `??=`: two first calls at once share one client.
    this.connected ??= {
      client: new sdk.default({
        apiKey,
        baseURL,
        maxRetries: this.options.maxRetries ?? 2,
        timeout: this.options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
      }),
      vendor: vendorLabel(baseURL),
    };
    return this.connected;
  }
}

function requestBody(
  model: string,
  request: ProviderRequest,
  replayReasoning: boolean,
): ChatCompletionCreateParamsStreaming {
  const body: ChatCompletionCreateParamsStreaming = {
    // Settings go first: they tune the call (temperature, max_tokens, reasoning_effort…),
    // but must not replace the model or history, or switch streaming off underneath us.
    ...(request.settings as Partial<ChatCompletionCreateParamsStreaming> | undefined),
    model,
    messages: toChatMessages(request.messages, { replayReasoning }),
    stream: true,
    stream_options: { include_usage: true },
  };
  // An empty `tools` array is a 400 on OpenAI ("[] is too short - 'tools'").
  if (request.tools.length > 0) body.tools = toChatTools(request.tools);
  return body;
}

/** "OpenAI", or the compatible server by host, so "Could not reach …" names the right thing. */
function vendorLabel(baseURL: string | undefined): string {
  if (!baseURL) return 'OpenAI';
  try {
    const host = new URL(baseURL).host;
    return host === OPENAI_HOST ? 'OpenAI' : `${host} (OpenAI-compatible)`;
  } catch {
    return 'The OpenAI-compatible server';
  }
}

// Each server words an overflow its own way: OpenAI and vLLM "This model's maximum
// context length is 128000 tokens…", Ollama and llama.cpp "the request exceeds the
// available context size", others "too many tokens" or "context window".
const OVERFLOW_MESSAGE =
  /maximum context length|context length|context size|context window|too many tokens|prompt is too long/i;

interface CallFacts {
  vendor: string;
  model: string;
  /** True once headers arrived: a failure after that is a broken stream, not a refusal. */
  streaming: boolean;
}

function translateError(error: unknown, facts: CallFacts): ProviderError {
  if (error instanceof ProviderError) return error;
  const { vendor, model } = facts;
  if (isApiError(error)) {
    const apiMessage = apiMessageOf(error);
    if (isContextOverflow(error, apiMessage)) {
      return new ProviderError('context_overflow', `The conversation is longer than ${model}'s context window.`, {
        status: error.status,
        cause: error,
      });
    }
    // In openai 6 `error.name` is "Error" for every class, so the class is read off the constructor.
    const code = typeof error.code === 'string' ? error.code : error.type;
    return friendlyProviderError(
      { vendor, model, status: error.status, code, apiMessage, className: error.constructor.name },
      error,
    );
  }
  // undici reports a socket closed mid-body as `TypeError: terminated` (cause
  // "SocketError: other side closed"), and the SDK passes it through untouched.
  if (facts.streaming && error instanceof TypeError) {
    return new ProviderError(
      'connection',
      `The connection to ${vendor} dropped before the answer was complete. Try again.`,
      {
        cause: error,
      },
    );
  }
  const className = error instanceof Error ? error.constructor.name : typeof error;
  return friendlyProviderError(
    { vendor, model, status: undefined, code: undefined, apiMessage: undefined, className },
    error,
  );
}

// `instanceof` alone narrows to `APIError<any, any, any>`; the guard pins the defaults.
function isApiError(error: unknown): error is APIError {
  return sdk !== undefined && error instanceof sdk.APIError;
}

/**
 * The API's own words. `error.error` is the body's inner `error` (an object, or a bare
 * string on some compatible servers); a non-JSON body only survives in `message`, after
 * the SDK's "400 " prefix.
 */
function apiMessageOf(error: APIError): string | undefined {
  const inner: unknown = error.error;
  if (typeof inner === 'string') return inner;
  if (inner !== null && typeof inner === 'object' && 'message' in inner && typeof inner.message === 'string')
    return inner.message;
  if (error.status === undefined) return undefined;
  const text = error.message.replace(/^\d{3} /, '');
  return text === 'status code (no body)' ? undefined : text;
}

function isContextOverflow(error: APIError, apiMessage: string | undefined): boolean {
  // llama.cpp says `type: "exceed_context_size_error"` (with a numeric `code`).
  if (error.code === 'context_length_exceeded' || error.type === 'exceed_context_size_error') return true;
  // Only refusals of the request (or an error sent inside the stream, which has no
  // status) qualify: a 429's "tokens per min" text is a rate limit, not an overflow.
  if (error.status !== undefined && error.status !== 400 && error.status !== 413 && error.status !== 422) return false;
  return apiMessage !== undefined && OVERFLOW_MESSAGE.test(apiMessage);
}
