// Every model call of a session goes through here, between the engine and the provider (the
// same place as the concurrency gate, providers/model-gate.ts): the spend guard admits or
// refuses it before anything is sent, the operations bus hears when it starts, when its first
// token arrives and how it ended, and what it used is settled with the guard afterwards.
//
// The idea to hold: a refusal is a ProviderError of kind `budget`, thrown before the inner
// provider is touched, so the provider receives nothing and the engine pauses the turn with a
// notice of its own (turn-engine.ts). Whatever happens after admission (a failure, a stop, the
// consumer walking away) the reservation is settled exactly once, in `finally`.
//
// A call that finished but whose server reported no usage at all is never counted as free:
// its answer is given the estimate the guard was asked with (the request's input tokens) and
// its output counted from the answer, marked `estimated`, before anything else reads it, so the
// spend limits, /usage and the thread's usage footer all count it, and say it is an estimate.
// A call stopped or failed after its answer began streaming is charged the same way: the
// server read the whole input and billed what it wrote, though no usage ever arrives. A call
// that failed before its first token (refused, a 429, a 5xx) is settled with none, as servers
// bill those at nothing.
import { randomUUID } from 'node:crypto';
import {
  ProviderError,
  type AssistantTurn,
  type CallMeta,
  type OutboundMessage,
  type Provider,
  type ProviderChunk,
  type ProviderRequest,
  type ProviderResolver,
  type TokenUsage,
} from '../engine/index.js';
import { parseModelRef } from '../providers/model-ref.js';
import type { BudgetLimitName, CallContent, OpsBus, Place, TokenCounts } from './ops-events.js';

/** What the guard is asked before a call: who, where, which model, and how big it may be. */
export interface CallEstimate {
  place: Place;
  /** The person the call is for (the turn's requester; else the thread's starter). */
  requester?: string;
  /** The model as the session names it (`openai:gpt-4.1`). */
  model: string;
  purpose: CallMeta['purpose'];
  /** Input tokens, estimated from the request (four characters a token, a flat guess per image). */
  inputTokens: number;
  /** The most the call may produce: the request's max_tokens, else the model's output limit. */
  maxOutputTokens: number;
}

export type Admission = { ok: true; ticket: unknown } | { ok: false; limit: BudgetLimitName; message: string };

/** Spend limits (src/ops/budget-guard.ts). `settle` gets the usage the provider reported, or none (the call failed or was stopped). */
export interface SpendGuard {
  admit(estimate: CallEstimate): Promise<Admission>;
  settle(ticket: unknown, usage: TokenCounts | undefined): Promise<void>;
}

export interface MeterOptions {
  place: Place;
  ops: OpsBus;
  guard?: SpendGuard;
  /** Who pays when the request does not say (a compaction call): the thread's starter. */
  fallbackRequester?: () => string | undefined;
  now?: () => number;
  /** Put the messages sent and the answer on model_call_ended (traces capturing content; src/ops/traces/). */
  captureContent?: boolean;
}

/** The same providers, each call admitted by the guard and reported on the bus. */
export function meteredResolver(resolve: ProviderResolver, options: MeterOptions): ProviderResolver {
  return (model) => {
    const inner = resolve(model);
    return {
      name: inner.name,
      capabilities: (name) => inner.capabilities(name),
      stream: (request, signal) => meteredStream(inner, request, signal, options),
    } satisfies Provider;
  };
}

async function* meteredStream(
  inner: Provider,
  request: ProviderRequest,
  signal: AbortSignal,
  options: MeterOptions,
): AsyncIterable<ProviderChunk> {
  const now = options.now ?? Date.now;
  const purpose = request.meta?.purpose ?? 'turn';
  const requester = request.meta?.requester ?? options.fallbackRequester?.();
  const maxOutputTokens = outputCeiling(request);
  let ticket: unknown;
  let inputTokens: number | undefined;
  if (options.guard) {
    const admission = await options.guard.admit({
      place: options.place,
      ...(requester ? { requester } : {}),
      model: request.model,
      purpose,
      // Read only where a limit applies: walking the whole request per call is for nothing without one.
      get inputTokens() {
        return (inputTokens ??= estimateRequestTokens(request));
      },
      maxOutputTokens,
    });
    if (!admission.ok) {
      options.ops.emit({
        type: 'budget_refused',
        at: now(),
        place: options.place,
        limit: admission.limit,
        what: 'model_call',
      });
      throw new ProviderError('budget', admission.message);
    }
    ticket = admission.ticket;
  }
  const vendor = providerNameOf(request.model, inner.name);
  const callId = randomUUID();
  const started = now();
  options.ops.emit({
    type: 'model_call_started',
    at: started,
    place: options.place,
    callId,
    provider: vendor,
    model: request.model,
    purpose,
    maxOutputTokens,
  });
  let usage: TokenCounts | undefined;
  let finishReason: string | undefined;
  let responseModel: string | undefined;
  let error: string | undefined;
  let answer: AssistantTurn | undefined;
  let firstToken = false;
  let streamedChars = 0;
  try {
    for await (let chunk of inner.stream(request, signal)) {
      if (!firstToken && (chunk.type === 'text_delta' || chunk.type === 'reasoning_delta' || chunk.type === 'final')) {
        firstToken = true;
        options.ops.emit({ type: 'model_call_first_token', at: now(), place: options.place, callId });
      }
      if (chunk.type !== 'final') streamedChars += chunk.text.length;
      if (chunk.type === 'final') {
        if (!chunk.turn.usage)
          chunk = {
            type: 'final',
            turn: {
              ...chunk.turn,
              usage: estimatedUsage(chunk.turn, inputTokens ?? estimateRequestTokens(request), maxOutputTokens),
            },
          };
        usage = countsOf(chunk.turn.usage!);
        finishReason = chunk.turn.finishReason;
        if (chunk.turn.responseModel) responseModel = chunk.turn.responseModel;
        if (options.captureContent) answer = chunk.turn;
      }
      yield chunk;
    }
  } catch (thrown) {
    error = signal.aborted ? 'interrupted' : thrown instanceof ProviderError ? thrown.kind : 'other';
    throw thrown;
  } finally {
    if (!error && !finishReason) error = signal.aborted ? 'interrupted' : 'incomplete';
    if (!usage && firstToken)
      usage = countsOf(cutShortUsage(streamedChars, inputTokens ?? estimateRequestTokens(request), maxOutputTokens));
    options.ops.emit({
      type: 'model_call_ended',
      at: now(),
      place: options.place,
      callId,
      provider: vendor,
      model: request.model,
      purpose,
      ...(requester ? { requester } : {}),
      durationMs: now() - started,
      ...(usage ? { tokens: usage } : {}),
      ...(finishReason ? { finishReason } : {}),
      ...(responseModel ? { responseModel } : {}),
      ...(error ? { error } : {}),
      ...(options.captureContent
        ? { content: { input: [...request.messages], ...(answer ? { output: answer } : {}) } satisfies CallContent }
        : {}),
    });
    if (options.guard) await options.guard.settle(ticket, usage);
  }
}

function countsOf(usage: TokenUsage): TokenCounts {
  const counts: TokenCounts = {
    input: usage.input,
    cachedInput: usage.cacheRead ?? 0,
    cacheWrite: usage.cacheWrite ?? 0,
    output: usage.output,
    reasoning: usage.reasoning ?? 0,
  };
  if (usage.estimated) counts.estimated = true;
  return counts;
}

/**
 * What a finished call used when its server did not say: the input the guard was asked with,
 * and the answer's text, reasoning and tool calls at four characters a token (the input's
 * rule), at most the call's output ceiling.
 */
function estimatedUsage(answer: AssistantTurn, inputTokens: number, maxOutputTokens: number): TokenUsage {
  let chars = (answer.text?.length ?? 0) + (answer.reasoning?.length ?? 0);
  for (const call of answer.toolCalls) chars += call.name.length + call.arguments.length;
  return { input: inputTokens, output: Math.min(maxOutputTokens, Math.ceil(chars / 4)), estimated: true };
}

/** What a call cut short after its answer began used, by estimate: its input, and what it streamed at four characters a token. */
function cutShortUsage(streamedChars: number, inputTokens: number, maxOutputTokens: number): TokenUsage {
  return { input: inputTokens, output: Math.min(maxOutputTokens, Math.ceil(streamedChars / 4)), estimated: true };
}

/** The vendor of a model as the session names it (`openai`, `anthropic`, `demo`). */
function providerNameOf(model: string, fallback: string): string {
  try {
    return parseModelRef(model).provider;
  } catch {
    return fallback;
  }
}

/**
 * The most output tokens a call may produce: what the request's settings cap it at, else the
 * provider's default cap (Anthropic calls send 8192: anthropic.ts), else the model's output limit.
 * @internal
 */
export function outputCeiling(request: ProviderRequest): number {
  const settings = request.settings ?? {};
  for (const key of ['max_tokens', 'max_completion_tokens', 'max_output_tokens']) {
    const value = settings[key];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return Math.ceil(value);
  }
  let ref: { provider: string; model: string };
  try {
    ref = parseModelRef(request.model);
  } catch {
    return DEFAULT_OUTPUT_LIMIT;
  }
  if (ref.provider === 'anthropic') return 8192;
  if (ref.provider === 'demo') return 1024;
  const id = ref.model.toLowerCase();
  const known = OUTPUT_LIMITS.find(([prefix]) => id === prefix || id.startsWith(`${prefix}-`));
  return known ? known[1] : DEFAULT_OUTPUT_LIMIT;
}

/** Vendors' published output limits, longest prefix first. A model not listed: 16k, a common cap. */
const OUTPUT_LIMITS: [string, number][] = (
  [
    ['gpt-4.1', 32_768],
    ['gpt-4o-mini', 16_384],
    ['gpt-4o', 16_384],
    ['gpt-5', 128_000],
    ['o3-mini', 100_000],
    ['o3', 100_000],
    ['o4-mini', 100_000],
    ['gpt-3.5-turbo', 4_096],
  ] as [string, number][]
).sort((a, b) => b[0].length - a[0].length);
const DEFAULT_OUTPUT_LIMIT = 16_384;

/**
 * Input tokens of a request, roughly: four characters a token, 1,000 per image or document.
 * @internal
 */
export function estimateRequestTokens(request: ProviderRequest): number {
  let chars = 0;
  let media = 0;
  for (const message of request.messages) {
    const counted = charsOf(message);
    chars += counted.chars;
    media += counted.media;
  }
  for (const tool of request.tools)
    chars += tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length;
  return Math.ceil(chars / 4) + media * 1_000 + request.messages.length * 4;
}

function charsOf(message: OutboundMessage): { chars: number; media: number } {
  if (message.role === 'user' && typeof message.content !== 'string') {
    let chars = 0;
    let media = 0;
    for (const part of message.content) {
      if (part.type === 'text') chars += part.text.length;
      else media++;
    }
    return { chars, media };
  }
  let chars = typeof message.content === 'string' ? message.content.length : 0;
  if (message.role === 'assistant')
    for (const call of message.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  return { chars, media: 0 };
}
