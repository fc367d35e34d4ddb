// When compaction runs, for one engine: a checkpoint before every model call, and a forced
// pass after a context overflow. How a summary is made belongs to the Compactor
// (compaction.ts); this file owns the timing, the events the user sees ("compacting" first,
// because a summary takes seconds), the notice in history, and the state kept with the
// session.
import type { CompactionContext, CompactionState, Compactor } from './compaction.js';
import type { EngineEvent } from './events.js';
import type { History } from './history.js';
import type { EngineLogger } from './logger.js';
import type { ModelCapabilities, Provider, TokenUsage } from './provider.js';

/** The model call a checkpoint stands before. */
export interface ModelCallSetting {
  provider: Provider;
  capabilities: ModelCapabilities;
  model: string;
  signal: AbortSignal;
}

export class CompactionRunner {
  private current: CompactionState | null;
  /** Input tokens of the last model call: the best measure of the view's size, until it changes. */
  private lastUsage: TokenUsage | undefined;

  constructor(
    private readonly compactor: Compactor,
    initial: CompactionState | null,
    private readonly history: History,
    private readonly logger: EngineLogger,
    private readonly onChanged: ((state: CompactionState | null) => void | Promise<void>) | undefined,
  ) {
    this.current = initial;
  }

  get state(): CompactionState | null {
    return this.current;
  }

  noteUsage(usage: TokenUsage): void {
    this.lastUsage = usage;
  }

  /** The checkpoint before a model call: what to compact with when a compaction is due, else undefined. */
  due(setting: ModelCallSetting): CompactionContext | undefined {
    const context = this.context(setting);
    return this.compactor.isDue(context) ? context : undefined;
  }

  /** Compact, when `due` said so. */
  async *checkpoint(context: CompactionContext): AsyncGenerator<EngineEvent, void, undefined> {
    // Announced first: a summary takes seconds and the user should know why it is quiet.
    yield { type: 'compacting' };
    try {
      const result = await this.compactor.compact(context, { force: false });
      if (result) yield* this.apply(result.state, result.notice);
    } catch (error) {
      this.logger.warn({ err: error }, 'compaction failed; continuing with the full history');
    }
  }

  /**
   * A context overflow is housekeeping, not an error for the user: force a compaction so the
   * call can be tried again. Progress-guarded: a pass that cannot move the boundary forward
   * returns false, so a model that keeps overflowing still ends in the error path.
   */
  async *afterOverflow(setting: ModelCallSetting): AsyncGenerator<EngineEvent, boolean, undefined> {
    yield { type: 'compacting' };
    const before = this.current?.boundary ?? 0;
    try {
      const result = await this.compactor.compact(this.context(setting), { force: true });
      if (!result || result.state.boundary <= before) return false;
      yield* this.apply(result.state, result.notice);
      return true;
    } catch (error) {
      this.logger.warn({ err: error }, 'forced compaction failed');
      return false;
    }
  }

  private context(setting: ModelCallSetting): CompactionContext {
    return {
      messages: this.history.messages,
      state: this.current,
      capabilities: setting.capabilities,
      provider: setting.provider,
      model: setting.model,
      lastUsage: this.lastUsage,
      signal: setting.signal,
    };
  }

  private async *apply(state: CompactionState, notice: string): AsyncGenerator<EngineEvent, void, undefined> {
    this.current = state;
    // The last call's usage described the old view; until the next call reports, estimate.
    this.lastUsage = undefined;
    await this.onChanged?.(state);
    await this.history.appendNotice('compacted', notice);
    yield { type: 'compacted', text: notice };
  }
}
