// One model call: build the request through the one outbound path, stream it through the
// bridge (which races every chunk against the stop), surface deltas as they come, and say
// how it ended; then shape a complete answer into the message history keeps. Nothing here
// appends to history: the engine decides what to keep. The model's words are masked like a
// tool's output (a secret it read in a form the masks missed, or that a person typed, is not
// repeated into the thread): the deltas through a stream mask, which holds back an end that
// could be the start of a secret until the next delta says, the complete answer as a whole.
import type { CompactionState } from './compaction.js';
import type { EngineEvent } from './events.js';
import type { AssistantMessage, Message, Usage } from './messages.js';
import { buildOutbound, type AttachmentView, type PdfAdapter } from './outbound.js';
import {
  ProviderError,
  type AssistantTurn,
  type CallMeta,
  type ModelCapabilities,
  type Provider,
  type ProviderRequest,
  type TokenUsage,
  type ToolSchema,
} from './provider.js';
import type { StopScope } from './abort.js';
import { bridgeStream } from './stream-bridge.js';
import { parseToolArguments } from './tool-arguments.js';
import type { OutputMask, StreamMask } from './output-masks.js';
import type { PendingToolCall } from './tool-pass.js';
import type { ContextProvider } from './engine-options.js';

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
  /** The per-call `<system-context>` block (may take a moment to gather); absent: none. */
  contextProvider: ContextProvider | undefined;
  sessionId: string;
  pdfAdapter: PdfAdapter | undefined;
  attachmentView: AttachmentView | undefined;
  tools: ToolSchema[];
  settings: Record<string, unknown> | undefined;
  /** The turn's stop: every chunk is raced against it. */
  stop: StopScope;
  mask: OutputMask;
  maskStream: () => StreamMask;
  /** Who the call is for (src/ops/ accounting): passed on as the request's `meta`. */
  meta?: CallMeta;
}

export async function* streamModel(call: ModelCall): AsyncGenerator<EngineEvent, StreamOutcome, undefined> {
  // What was shown, masked: a cut-short answer is kept in history as the thread showed it.
  // Each mask is made when its first piece arrives: most calls stream no reasoning.
  const shown = { text: '', reasoning: '' };
  let textMask: StreamMask | undefined;
  let reasoningMask: StreamMask | undefined;
  let final: AssistantTurn | undefined;
  let failure: { error: unknown } | undefined;
  const signal = call.stop.signal;
  try {
    const request: ProviderRequest = {
      model: call.model,
      messages: buildOutbound(call.messages, {
        compactionState: call.compactionState,
        capabilities: call.capabilities,
        systemContext: call.contextProvider
          ? await call.contextProvider({ model: call.model, sessionId: call.sessionId })
          : '',
        pdfAdapter: call.pdfAdapter,
        attachmentView: call.attachmentView,
      }),
      tools: call.capabilities.tools ? call.tools : [],
      settings: call.settings,
    };
    if (call.meta) request.meta = call.meta;
    for await (const chunk of bridgeStream(call.provider, request, call.stop)) {
      switch (chunk.type) {
        case 'text_delta': {
          const text = (textMask ??= call.maskStream()).push(chunk.text);
          shown.text += text;
          if (text) yield { type: 'assistant_delta', text };
          break;
        }
        case 'reasoning_delta': {
          const text = (reasoningMask ??= call.maskStream()).push(chunk.text);
          shown.reasoning += text;
          if (text) yield { type: 'reasoning_delta', text };
          break;
        }
        case 'final':
          final = chunk.turn;
          break;
      }
    }
  } catch (error) {
    failure = { error };
  }
  // The held-back ends, let out when the stream is over, however it ended.
  const restText = textMask?.end();
  if (restText) {
    shown.text += restText;
    yield { type: 'assistant_delta', text: restText };
  }
  const restReasoning = reasoningMask?.end();
  if (restReasoning) {
    shown.reasoning += restReasoning;
    yield { type: 'reasoning_delta', text: restReasoning };
  }
  if (failure) {
    if (signal.aborted) return { kind: 'interrupted', text: shown.text, reasoning: shown.reasoning };
    return { kind: 'failed', error: failure.error, text: shown.text, reasoning: shown.reasoning };
  }
  if (final) return { kind: 'answer', turn: maskedTurn(final, call.mask) };
  if (signal.aborted) return { kind: 'interrupted', text: shown.text, reasoning: shown.reasoning };
  return {
    kind: 'failed',
    error: new ProviderError('connection', 'The model stream ended before the answer was complete.'),
    text: shown.text,
    reasoning: shown.reasoning,
  };
}

/** The answer's words masked as whole texts (its tool calls are the model's words to the approver, shown as written). */
function maskedTurn(turn: AssistantTurn, mask: OutputMask): AssistantTurn {
  const text = turn.text ? mask(turn.text) : turn.text;
  const reasoning = turn.reasoning ? mask(turn.reasoning) : turn.reasoning;
  // Most answers hold no secret: the provider's turn is kept as it is (nothing edits it later).
  if (text === turn.text && reasoning === turn.reasoning) return turn;
  const masked = { ...turn };
  if (turn.text) masked.text = text;
  if (turn.reasoning) masked.reasoning = reasoning;
  return masked;
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
export function recordableAnswer(
  answer: AssistantTurn,
  model: string,
  ids: { uniqueToolCallId(proposed: string | null | undefined): string },
): RecordableAnswer {
  const pending: PendingToolCall[] = answer.toolCalls.map((call) => {
    const args = parseToolArguments(call.arguments);
    return {
      call: {
        id: ids.uniqueToolCallId(call.id),
        type: 'function',
        function: { name: call.name, arguments: args.stored },
      },
      args,
    };
  });
  const message: AssistantMessage = { role: 'assistant', content: answer.text ?? null, ts: Date.now() };
  if (pending.length > 0) message.tool_calls = pending.map((p) => p.call);
  if (answer.reasoning) message.reasoning = answer.reasoning;
  if (answer.usage) message.usage = tagUsage(answer.usage, model);
  if (answer.extras) {
    for (const [key, value] of Object.entries(answer.extras)) {
      if (key.startsWith('_') && key !== '_display') message[key] = value;
    }
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
  if (usage.reasoning !== undefined) tagged.reasoning = usage.reasoning;
  if (usage.estimated) tagged.estimated = true;
  return tagged;
}
