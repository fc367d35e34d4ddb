// A model call's messages and answer in the shape the GenAI semantic conventions give
// `gen_ai.input.messages` and `gen_ai.output.messages` ({role, parts[]}, parts typed `text`,
// `tool_call`, `tool_call_response`, `reasoning`), as JSON strings: the JS SDK takes no structured
// attribute values on spans, and the conventions say to serialise then.
//
// Recorded only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and every
// string a person or a model wrote goes through the secret masker first, field by field (a
// mask applied to the JSON text could miss a secret JSON escapes). Images and files are
// named (generic parts `image`, `attachment`), never copied: a trace is no place for their bytes.
import type { AssistantTurn, OutboundMessage } from '../../engine/index.js';

type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string | null; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string }
  | { type: 'reasoning'; content: string }
  | { type: 'image' }
  | { type: 'attachment'; filename?: string };

interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: Part[];
}

type Mask = (text: string) => string;

export function inputMessagesJson(messages: readonly OutboundMessage[], mask: Mask): string {
  return JSON.stringify(messages.map((message) => inputMessage(message, mask)));
}

export function outputMessagesJson(turn: AssistantTurn, mask: Mask): string {
  const parts: Part[] = [];
  if (turn.reasoning) parts.push({ type: 'reasoning', content: mask(turn.reasoning) });
  if (turn.text) parts.push({ type: 'text', content: mask(turn.text) });
  for (const call of turn.toolCalls)
    parts.push({
      type: 'tool_call',
      id: call.id ?? null,
      name: call.name,
      arguments: callArguments(call.arguments, mask),
    });
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: turn.finishReason }]);
}

function inputMessage(message: OutboundMessage, mask: Mask): ChatMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', parts: [{ type: 'text', content: mask(message.content) }] };
    case 'user':
      if (typeof message.content === 'string')
        return { role: 'user', parts: [{ type: 'text', content: mask(message.content) }] };
      return {
        role: 'user',
        parts: message.content.map((part): Part => {
          switch (part.type) {
            case 'text':
              return { type: 'text', content: mask(part.text) };
            case 'image_url':
              return { type: 'image' };
            case 'file':
              return { type: 'attachment', ...(part.file.filename ? { filename: mask(part.file.filename) } : {}) };
            case 'attachment':
              return { type: 'attachment', filename: mask(part.attachment.name) };
          }
        }),
      };
    case 'assistant': {
      const parts: Part[] = [];
      if (message.content) parts.push({ type: 'text', content: mask(message.content) });
      for (const call of message.tool_calls ?? [])
        parts.push({
          type: 'tool_call',
          id: call.id,
          name: call.function.name,
          arguments: callArguments(call.function.arguments, mask),
        });
      return { role: 'assistant', parts };
    }
    case 'tool':
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: message.tool_call_id, response: mask(message.content) }],
      };
  }
}

/** Arguments as the object the model meant when they parse (masked value by value), else the masked raw text. */
function callArguments(raw: string, mask: Mask): unknown {
  try {
    return maskDeep(JSON.parse(raw) as unknown, mask);
  } catch {
    return mask(raw);
  }
}

function maskDeep(value: unknown, mask: Mask): unknown {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, mask));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [mask(key), maskDeep(item, mask)]));
  return value;
}
