// A provider that plays a script, one step per model call, and records every request it
// received. Steps can stall before the first token, stream slowly, wedge or fail
// mid-stream, return tool calls (with reused or missing ids), and report usage, so every
// engine path can be driven without a network. The HTTP fakes for the real SDKs come with
// the providers work; this one exercises the engine contract itself.
import type {
  AssistantTurn,
  FinishReason,
  ModelCapabilities,
  Provider,
  ProviderChunk,
  ProviderRequest,
  TokenUsage,
} from '../../src/engine/index.js';

export interface ScriptedToolCall {
  id?: string | null;
  name: string;
  /** An object is JSON-encoded; a string is sent as is (for mangled-argument tests). */
  arguments?: string | Record<string, unknown>;
}

export interface ScriptStep {
  text?: string;
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  finishReason?: FinishReason;
  usage?: TokenUsage;
  extras?: Record<string, unknown>;
  /** Characters per streamed delta (default: the whole text in one delta). */
  chunkSize?: number;
  /** Pause between deltas, in ms. */
  delayMs?: number;
  /** Never send a single chunk. */
  stallBeforeFirstToken?: boolean;
  /** Send this many deltas, then go silent forever. */
  stallAfterChunks?: number;
  /** Send this many deltas, then throw `error`. */
  failAfterChunks?: number;
  error?: Error;
  /** Keep stalling even after the request is aborted (a provider that ignores its signal). */
  ignoreAbort?: boolean;
  /** End the stream without the final chunk (a silently dropped connection). */
  omitFinal?: boolean;
}

export type Step = ScriptStep | ((request: ProviderRequest, callIndex: number) => ScriptStep);

export interface ScriptedProviderOptions {
  name?: string;
  capabilities?: Partial<ModelCapabilities>;
  /** Add an abort listener to every request signal and never remove it, like openai 6 does. */
  leakSignalListeners?: boolean;
}

export class ScriptedProvider implements Provider {
  readonly name: string;
  /** Deep copies of every request, in call order. */
  readonly requests: ProviderRequest[] = [];
  /** The signal each request was given. */
  readonly signals: AbortSignal[] = [];
  private readonly steps: Step[];
  private readonly caps: ModelCapabilities;
  private readonly leak: boolean;

  constructor(steps: Step[] = [], options: ScriptedProviderOptions = {}) {
    this.steps = [...steps];
    this.name = options.name ?? 'scripted';
    this.caps = { tools: true, vision: true, pdf: true, contextWindow: 128_000, ...options.capabilities };
    this.leak = options.leakSignalListeners ?? false;
  }

  push(...steps: Step[]): void {
    this.steps.push(...steps);
  }

  get remainingSteps(): number {
    return this.steps.length;
  }

  capabilities(): ModelCapabilities {
    return this.caps;
  }

  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderChunk> {
    const callIndex = this.requests.length;
    this.requests.push(structuredClone(request));
    this.signals.push(signal);
    if (this.leak) signal.addEventListener('abort', () => undefined);
    const next = this.steps.shift();
    if (next === undefined) throw new Error(`scripted provider: no step left for call ${callIndex + 1}`);
    const step = typeof next === 'function' ? next(request, callIndex) : next;
    return play(step, signal);
  }
}

async function* play(step: ScriptStep, signal: AbortSignal): AsyncGenerator<ProviderChunk> {
  const stall = () => waitForever(step.ignoreAbort ? undefined : signal);
  if (step.stallBeforeFirstToken) await stall();
  let sent = 0;
  for (const [type, full] of [
    ['reasoning_delta', step.reasoning],
    ['text_delta', step.text],
  ] as const) {
    if (!full) continue;
    const size = step.chunkSize ?? full.length;
    for (let at = 0; at < full.length; at += size) {
      if (step.stallAfterChunks !== undefined && sent >= step.stallAfterChunks) await stall();
      if (step.failAfterChunks !== undefined && sent >= step.failAfterChunks)
        throw step.error ?? new Error('stream failed');
      if (signal.aborted && !step.ignoreAbort) return;
      if (step.delayMs) await delay(step.delayMs);
      yield { type, text: full.slice(at, at + size) };
      sent++;
    }
  }
  if (step.stallAfterChunks !== undefined && sent >= step.stallAfterChunks) await stall();
  if (step.failAfterChunks !== undefined) throw step.error ?? new Error('stream failed');
  if (step.error) throw step.error;
  if (step.omitFinal) return;
  const turn: AssistantTurn = {
    text: step.text ?? null,
    toolCalls: (step.toolCalls ?? []).map((call) => ({
      id: call.id,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
    })),
    finishReason: step.finishReason ?? (step.toolCalls?.length ? 'tool_calls' : 'stop'),
  };
  if (step.reasoning) turn.reasoning = step.reasoning;
  if (step.usage) turn.usage = step.usage;
  if (step.extras) turn.extras = step.extras;
  yield { type: 'final', turn };
}

function waitForever(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Shorthands for the common steps. */
export const say = (text: string, extra: Partial<ScriptStep> = {}): ScriptStep => ({ text, ...extra });
export const callTools = (...toolCalls: ScriptedToolCall[]): ScriptStep => ({ toolCalls });
export const call = (
  name: string,
  args: Record<string, unknown> | string = {},
  id?: string | null,
): ScriptedToolCall => ({
  name,
  arguments: args,
  id,
});
