// Compaction is a view, never an edit: messages before a boundary are shown to the model
// as one `<compacted-history>` block while the canonical history stays whole. The engine
// owns when it runs (a checkpoint before every model call, and forced on a context
// overflow); a Compactor owns how. Every forced pass must move the boundary forward or
// return null, so a model that keeps overflowing still ends in the error path.
import type { Message } from './messages.js';
import type { ModelCapabilities, Provider, TokenUsage } from './provider.js';

/** Serialisable: the session store keeps it next to the transcript. */
export interface CompactionState {
  /** Index into the canonical history of the first message shown verbatim. */
  boundary: number;
  /** What the model reads instead of messages[0..boundary) (system messages excepted). */
  summary: string;
}

export interface CompactionContext {
  messages: readonly Message[];
  state: CompactionState | null;
  capabilities: ModelCapabilities;
  /** The active model and its provider: a summarising compactor may call it. */
  provider: Provider;
  model: string;
  /** Input + cache tokens of the last model call, when the provider reported them. */
  lastUsage: TokenUsage | undefined;
  signal: AbortSignal;
}

export interface CompactionResult {
  state: CompactionState;
  /** The notice text the user sees ("compacted 40 earlier messages"). */
  notice: string;
}

export interface Compactor {
  isDue(context: CompactionContext): boolean;
  /** Null when nothing can move forward (the progress guard). */
  compact(context: CompactionContext, options: { force: boolean }): Promise<CompactionResult | null>;
}

/** Render the outbound view of a compacted history. Shared by every compactor. */
export function applyCompactionView(messages: readonly Message[], state: CompactionState | null): readonly Message[] {
  if (!state || state.boundary <= 0) return messages;
  const leadingSystem = messages.filter((m, i) => i < state.boundary && m.role === 'system');
  const block: Message = {
    role: 'user',
    content: `<compacted-history>\n${state.summary}\n</compacted-history>`,
  };
  return [...leadingSystem, block, ...messages.slice(state.boundary)];
}

/** A boundary may only sit on a user message (else an assistant one): never on a tool result. */
export function isLegalHead(message: Message | undefined): boolean {
  return message?.role === 'user' || message?.role === 'assistant';
}

/** Rough token count: four characters a token, the usual estimate without a tokenizer. */
export function estimateTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}

/** What one message costs in the model's view (sidecars and notices never reach it). */
function estimateMessageTokens(message: Message): number {
  switch (message.role) {
    case 'notice':
      return 0;
    case 'system':
    case 'tool':
      return Math.ceil(message.content.length / 4) + 4;
    case 'user': {
      if (typeof message.content === 'string') return Math.ceil(message.content.length / 4) + 4;
      let tokens = 4;
      for (const part of message.content) {
        // Images and documents are billed by size, not by their base64 text: a flat guess.
        tokens += part.type === 'text' ? Math.ceil(part.text.length / 4) : 1_000;
      }
      return tokens;
    }
    case 'assistant': {
      let chars = message.content?.length ?? 0;
      for (const call of message.tool_calls ?? [])
        chars += call.function.name.length + call.function.arguments.length + 16;
      return Math.ceil(chars / 4) + 4;
    }
  }
}

/**
 * Where a new compaction boundary goes: at the start of a verbatim tail of about
 * `tailTokens`, on a user message if one starts such a tail, else on an assistant message
 * (the boundary then falls inside a giant final turn), never on a tool result. It must be
 * past `previous`, and leave something to summarise: null means no progress is possible.
 */
export function chooseBoundary(messages: readonly Message[], previous: number, tailTokens: number): number | null {
  let tail = 0;
  let fitsFrom = messages.length;
  for (let i = messages.length - 1; i > previous; i--) {
    tail += estimateMessageTokens(messages[i]!);
    if (tail > tailTokens) break;
    fitsFrom = i;
  }
  let boundary = findHead(messages, fitsFrom, 'user') ?? findHead(messages, fitsFrom, 'assistant');
  if (boundary === undefined) {
    // Even the newest message alone is bigger than the tail: cut just before it.
    for (let i = messages.length - 1; i > previous && boundary === undefined; i--) {
      if (isLegalHead(messages[i])) boundary = i;
    }
  }
  if (boundary === undefined || boundary <= previous) return null;
  const summarisable = messages.slice(previous, boundary).some((m) => m.role !== 'system' && m.role !== 'notice');
  return summarisable ? boundary : null;
}

function findHead(messages: readonly Message[], from: number, role: 'user' | 'assistant'): number | undefined {
  for (let i = from; i < messages.length; i++) if (messages[i]!.role === role) return i;
  return undefined;
}

/** Never compacts on its own, and cannot make room when forced: overflows surface as errors. */
export const noCompaction: Compactor = {
  isDue: () => false,
  compact: async () => null,
};
