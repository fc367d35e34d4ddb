// Automatic compaction by summary: when the conversation nears the model's context window,
// the older part is replaced, in the model's view only, by a structured summary written by
// a model. The canonical history stays whole; the state (boundary + summary) is small and
// serialisable so the session store keeps it.
//
// Trigger: min(threshold × context window, cap) tokens, measured by the last call's
// reported input (+ cache) tokens plus an estimate of what was appended since, or by a
// characters/4 estimate of the outbound view when no usage is known. The verbatim tail
// keeps about a quarter of the trigger. If the summary call fails it is tried once more,
// then the oldest ~10% is trimmed without a summary, and the notice says which happened.
import { linkedAbortController } from './abort.js';
import {
  applyCompactionView,
  chooseBoundary,
  estimateTokens,
  isLegalHead,
  type CompactionContext,
  type CompactionResult,
  type Compactor,
} from './compaction.js';
import { textOf, type Message } from './messages.js';
import type { Provider } from './provider.js';

export interface SummarizingCompactorOptions {
  /** Share of the context window at which compaction starts (default 0.8). */
  threshold?: number;
  /** Absolute ceiling in tokens, for models with huge windows (default 250,000). */
  capTokens?: number;
  /** Summarise with this model instead of the active one (a cheaper one, say). */
  summarizer?: { provider: Provider; model: string };
  /** Longest transcript handed to the summariser, in characters (default 400,000). */
  maxTranscriptChars?: number;
}

/** @internal */
export const SUMMARY_SYSTEM_PROMPT = `You compact the history of a conversation between a user and an AI agent that uses tools, so the agent can continue the work without the full transcript.
Write a faithful summary in markdown with exactly these sections:
## Goals and constraints
## Decisions
## Files and artifacts
## Errors and corrections
## User messages
(every user message, in order, verbatim when short, else closely paraphrased; never drop one)
## Pending work
## Next step
Fold the previous summary, if one is given, into the new one: it covers the older part of the same conversation. Keep names, paths, commands, numbers and identifiers exactly. Do not invent anything. Do not address the user; output only the summary.`;

const TOOL_RESULT_CHARS = 2_000;
const MESSAGE_CHARS = 8_000;

export class SummarizingCompactor implements Compactor {
  private readonly threshold: number;
  private readonly capTokens: number;
  private readonly maxTranscriptChars: number;

  constructor(private readonly options: SummarizingCompactorOptions = {}) {
    this.threshold = options.threshold ?? 0.8;
    this.capTokens = options.capTokens ?? 250_000;
    this.maxTranscriptChars = options.maxTranscriptChars ?? 400_000;
  }

  /** Tokens at which compaction starts for this model. */
  triggerTokens(context: Pick<CompactionContext, 'capabilities'>): number {
    return Math.min(this.threshold * context.capabilities.contextWindow, this.capTokens);
  }

  /** The best available measure of what the next call will send. */
  currentTokens(context: CompactionContext): number {
    const { messages, lastUsage } = context;
    if (!lastUsage) return estimateTokens(applyCompactionView(messages, context.state));
    let lastAssistant = messages.length - 1;
    while (lastAssistant >= 0 && messages[lastAssistant]!.role !== 'assistant') lastAssistant--;
    const reported = lastUsage.input + (lastUsage.cacheRead ?? 0) + (lastUsage.cacheWrite ?? 0) + lastUsage.output;
    return reported + estimateTokens(messages.slice(lastAssistant + 1));
  }

  isDue(context: CompactionContext): boolean {
    return this.currentTokens(context) > this.triggerTokens(context);
  }

  async compact(
    context: CompactionContext,
    options: { force: boolean } = { force: false },
  ): Promise<CompactionResult | null> {
    const previous = context.state?.boundary ?? 0;
    let tailTokens = this.triggerTokens(context) / 4;
    if (options.force) {
      // The provider said the request does not fit, whatever our estimate thought: keep at
      // most half of what we believe we send, so the pass makes real room.
      tailTokens = Math.min(tailTokens, estimateTokens(applyCompactionView(context.messages, context.state)) / 2);
    }
    const boundary = chooseBoundary(context.messages, previous, tailTokens);
    if (boundary === null) return null;
    const covered = context.messages.slice(previous, boundary);
    const count = covered.filter((m) => m.role !== 'system' && m.role !== 'notice').length;
    let firstError: unknown;
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        const summary = await this.summarise(context, covered);
        const retried = attempt === 2 ? ' (the first attempt failed; the second worked)' : '';
        return {
          state: { boundary, summary },
          notice: `Compacted ${count} earlier messages into a summary${retried}.`,
        };
      } catch (error) {
        if (context.signal.aborted) throw error;
        firstError ??= error;
      }
    }
    return this.trimOldest(context, previous, firstError);
  }

  private async summarise(context: CompactionContext, covered: readonly Message[]): Promise<string> {
    const { provider, model } = this.options.summarizer ?? { provider: context.provider, model: context.model };
    const transcript = this.transcriptOf(covered);
    const previousSummary = context.state?.summary;
    const request = [
      previousSummary ? `<previous-summary>\n${previousSummary}\n</previous-summary>\n\n` : '',
      `<conversation>\n${transcript}\n</conversation>`,
    ].join('');
    const { controller, release } = linkedAbortController(context.signal);
    let text = '';
    let final: string | null = null;
    try {
      const stream = provider.stream(
        {
          model,
          messages: [
            { role: 'system', content: SUMMARY_SYSTEM_PROMPT },
            { role: 'user', content: request },
          ],
          tools: [],
          meta: { purpose: 'compaction' },
        },
        controller.signal,
      );
      for await (const chunk of stream) {
        if (chunk.type === 'text_delta') text += chunk.text;
        else if (chunk.type === 'final') final = chunk.turn.text;
      }
    } finally {
      release();
    }
    if (context.signal.aborted) throw new Error('compaction stopped by the user');
    const summary = (final ?? text).trim();
    if (!summary) throw new Error('the summariser returned nothing');
    return summary;
  }

  /** Plain-text rendering of the covered messages, sized for the summariser. */
  private transcriptOf(messages: readonly Message[]): string {
    const lines: string[] = [];
    for (const message of messages) {
      const line = renderForSummary(message);
      if (line) lines.push(line);
    }
    let transcript = lines.join('\n\n');
    if (transcript.length > this.maxTranscriptChars) {
      // Keep both ends: the goals are at the start, the latest state at the end.
      const half = Math.floor(this.maxTranscriptChars / 2);
      const cut = transcript.length - 2 * half;
      transcript = `${transcript.slice(0, half)}\n\n[… ${cut} characters of the middle left out …]\n\n${transcript.slice(-half)}`;
    }
    return transcript;
  }

  /** The fallback when summarising fails twice: drop about the oldest tenth from the view. */
  private trimOldest(context: CompactionContext, previous: number, error: unknown): CompactionResult | null {
    const { messages } = context;
    let start = previous;
    while (start < messages.length && messages[start]!.role === 'system') start++;
    // Cut at a user turn at or after the first tenth: a view that opens mid-turn, on an
    // assistant's tool call without the request behind it, is only the last resort.
    const target = start + Math.max(1, Math.ceil((messages.length - start) * 0.1));
    let boundary = -1;
    for (let i = target; i < messages.length; i++) {
      if (messages[i]!.role === 'user') {
        boundary = i;
        break;
      }
    }
    if (boundary < 0) {
      for (let i = target; i < messages.length; i++) {
        if (isLegalHead(messages[i])) {
          boundary = i;
          break;
        }
      }
    }
    if (boundary <= previous) return null;
    const dropped = messages.slice(previous, boundary).filter((m) => m.role !== 'system' && m.role !== 'notice').length;
    const reason = error instanceof Error ? error.message : String(error);
    const summary = [context.state?.summary, `[${dropped} older messages were dropped without a summary]`]
      .filter(Boolean)
      .join('\n\n');
    return {
      state: { boundary, summary },
      notice: `Compaction could not summarise (${reason}), twice; trimmed the oldest ${dropped} messages from the model's view instead.`,
    };
  }
}

function renderForSummary(message: Message): string | null {
  switch (message.role) {
    case 'notice':
      return null;
    case 'system':
      return `SYSTEM: ${clip(message.content, MESSAGE_CHARS)}`;
    case 'user':
      return `USER: ${clip(textOf(message.content), MESSAGE_CHARS)}`;
    case 'assistant': {
      const parts: string[] = [];
      if (message.content) parts.push(`ASSISTANT: ${clip(message.content, MESSAGE_CHARS)}`);
      for (const call of message.tool_calls ?? []) {
        parts.push(`TOOL CALL ${call.function.name}(${clip(call.function.arguments, TOOL_RESULT_CHARS)})`);
      }
      return parts.length > 0 ? parts.join('\n') : null;
    }
    case 'tool':
      return `TOOL RESULT: ${clip(message.content, TOOL_RESULT_CHARS)}`;
  }
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)} […${text.length - limit} more characters]` : text;
}
