// The trivial compactor, for the engine's tests: when the history outgrows a token budget (or
// a provider says the context overflowed), drop the oldest turns from the view, keeping the
// newest user turn onwards, and say how many were left out. The bot compacts with the
// summarising compactor (src/engine/summary-compactor.ts); this one keeps the engine's
// compaction path honest and tested without a model to summarise.
import {
  applyCompactionView,
  estimateTokens,
  isLegalHead,
  type CompactionContext,
  type CompactionResult,
  type Compactor,
} from '../../src/engine/index.js';

export class TrimmingCompactor implements Compactor {
  constructor(private readonly options: { maxTokens: number }) {}

  isDue(context: CompactionContext): boolean {
    const signal = context.lastUsage
      ? context.lastUsage.input + (context.lastUsage.cacheRead ?? 0) + (context.lastUsage.cacheWrite ?? 0)
      : estimateTokens(applyCompactionView(context.messages, context.state));
    return signal > this.options.maxTokens;
  }

  async compact(context: CompactionContext): Promise<CompactionResult | null> {
    const { messages, state } = context;
    const previous = state?.boundary ?? 0;
    // The newest legal head past the old boundary that still leaves a tail to show.
    let boundary = -1;
    for (let i = messages.length - 1; i > previous; i--) {
      if (messages[i]?.role === 'user') {
        boundary = i;
        break;
      }
    }
    if (boundary <= previous) {
      for (let i = previous + 1; i < messages.length - 1; i++) {
        if (isLegalHead(messages[i])) {
          boundary = i;
          break;
        }
      }
    }
    if (boundary <= previous) return null;
    const dropped = messages.slice(0, boundary).filter((m) => m.role !== 'system' && m.role !== 'notice').length;
    // `dropped` counts from the start of history, so it replaces any earlier summary.
    const summary = `[${dropped} earlier messages were trimmed from this view]`;
    return {
      state: { boundary, summary },
      notice: `Compacted: ${dropped} earlier messages left out of the model's view.`,
    };
  }
}
