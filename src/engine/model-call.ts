// One model call: build the request through the one outbound path, stream it through the
// bridge (which races every chunk against the stop), surface deltas as they come, and say
// how it ended; then shape a complete answer into the message history keeps. Nothing here
// appends to history: the engine decides what to keep.
import type { CompactionState } from './compaction.js';
import type { EngineEvent } from './events.js';
import type { AssistantMessage, Message, Usage } from './messages.js';
import { buildOutbound, type PdfAdapter } from './outbound.js';
import { ProviderError, type AssistantTurn, type ModelCapabilities, type Provider, type TokenUsage, type ToolSchema } from './provider.js';
import { bridgeStream } from './stream-bridge.js';
import { parseToolArguments } from './tool-arguments.js';
import type { PendingToolCall } from './tool-calls.js';

export type StreamOutcome =
  | { kind: 'answer'; turn: AssistantTurn }
  | { kind: 'interrupted'; text: string; reasoning: string }
  | { kind: 'failed'; error: unknown; text: string; reasoning: string };

export interface ModelCall {
  provider: Provider;
  capabilities: ModelCapabilities;
  model: string;
  messages: readonly Message[];
  compactionState: CompactionState | null;
  /** The per-call `<system-context>` block (may take a moment to gather). */
  systemContext: () => string | Promise<string>;
  pdfAdapter: PdfAdapter | undefined;
  tools: ToolSchema[];
  settings: Record<string, unknown> | undefined;
  signal: AbortSignal;
}

export async function* streamModel(call: ModelCall): AsyncGenerator<EngineEvent, StreamOutcome, undefined> {
  let text = '';
  let reasoning = '';
  let final: AssistantTurn | undefined;
  try {
    const request = {
      model: call.model,
      messages: buildOutbound(call.messages, {
        compactionState: call.compactionState,
        capabilities: call.capabilities,
        systemContext: await call.systemContext(),
        pdfAdapter: call.pdfAdapter,
      }),
      tools: call.capabilities.tools ? call.tools : [],
      settings: call.settings,
    };
    for await (const chunk of bridgeStream(call.provider, request, call.signal)) {
      switch (chunk.type) {
        case 'text_delta':
          text += chunk.text;
          yield { type: 'assistant_delta', text: chunk.text };
          break;
        case 'reasoning_delta':
          reasoning += chunk.text;
          yield { type: 'reasoning_delta', text: chunk.text };
          break;
        case 'final':
          final = chunk.turn;
          break;
      }
    }
  } catch (error) {
    if (call.signal.aborted) return { kind: 'interrupted', text, reasoning };
    return { kind: 'failed', error, text, reasoning };
  }
  if (final) return { kind: 'answer', turn: final };
  if (call.signal.aborted) return { kind: 'interrupted', text, reasoning };
  return {
    kind: 'failed',
    error: new ProviderError('connection', 'The model stream ended before the answer was complete.'),
    text,
    reasoning,
  };
}

/** A complete answer as history keeps it, with its tool calls ready for the tool pass. */
export interface RecordableAnswer {
  message: AssistantMessage;
  pending: PendingToolCall[];
  event: EngineEvent;
}

/**
 * Turn a provider's answer into the assistant message history keeps: call ids made unique
 * in the session, arguments parsed once (mangled ones kept raw for the error result),
 * usage tagged with the model, provider-private `_extras` kept for replay.
 */
export function recordableAnswer(answer: AssistantTurn, model: string, uniqueToolCallId: (proposed: string | null | undefined) => string): RecordableAnswer {
  const pending: PendingToolCall[] = answer.toolCalls.map((call) => {
    const args = parseToolArguments(call.arguments);
    return { call: { id: uniqueToolCallId(call.id), type: 'function', function: { name: call.name, arguments: args.stored } }, args };
  });
  const message: AssistantMessage = { role: 'assistant', content: answer.text ?? null, ts: Date.now() };
  if (pending.length > 0) message.tool_calls = pending.map((p) => p.call);
  if (answer.reasoning) message.reasoning = answer.reasoning;
  if (answer.usage) message.usage = tagUsage(answer.usage, model);
  for (const [key, value] of Object.entries(answer.extras ?? {})) {
    if (key.startsWith('_') && key !== '_display') message[key] = value;
  }
  const event: EngineEvent = {
    type: 'assistant_message',
    text: message.content,
    toolCalls: pending.map((p) => ({ id: p.call.id, name: p.call.function.name })),
  };
  if (message.reasoning) event.reasoning = message.reasoning;
  if (message.usage) event.usage = message.usage;
  return { message, pending, event };
}

function tagUsage(usage: TokenUsage, model: string): Usage {
  const tagged: Usage = { model, input: usage.input, output: usage.output };
  if (usage.cacheRead !== undefined) tagged.cacheRead = usage.cacheRead;
  if (usage.cacheWrite !== undefined) tagged.cacheWrite = usage.cacheWrite;
  return tagged;
}
