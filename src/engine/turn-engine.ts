// TurnEngine: the owned agent loop.
//
// One user turn spans many model↔tool iterations until the model stops calling tools, a
// rail trips, or the user stops it. Progress is an AsyncIterable of typed events that a
// connector renders. Approvals and questions are answered out-of-band by injected async
// callbacks that may wait for a human as long as it takes; a stop ends any wait at once.
// The canonical history is the only state: resume and retry are rebuilt from it alone.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { bridgeStream } from './stream-bridge.js';
import { noCompaction, type CompactionContext, type CompactionState, type Compactor } from './compaction.js';
import type { EngineEvent, TurnEndStatus, TurnKind } from './events.js';
import type { InboxLookup } from './inbox.js';
import { interactiveToolSchemas, type InteractiveCallbacks } from './interactive.js';
import { silentLogger, type EngineLogger } from './logger.js';
import {
  hasImages,
  toolErrorContent,
  type AssistantMessage,
  type Message,
  type MessageSource,
  type NoticeKind,
  type ToolCall,
  type Usage,
  type UserContent,
} from './messages.js';
import { buildOutbound, type PdfAdapter } from './outbound.js';
import { denyAll, riskBasedPolicy, SessionGrants, type Approver, type GrantsSnapshot, type PermissionPolicy } from './permissions.js';
import {
  describeProviderError,
  isContextOverflow,
  ProviderError,
  type AssistantTurn,
  type ModelCapabilities,
  type Provider,
  type ProviderResolver,
  type TokenUsage,
  type ToolSchema,
} from './provider.js';
import { parseToolArguments } from './tool-arguments.js';
import { INTERRUPTED_BY_USER, runToolCalls, type PendingToolCall, type ToolPassContext } from './tool-calls.js';
import { ToolRegistry, type ToolDefinition } from './tools.js';

export const DEFAULT_MAX_ITERATIONS = 12;
export const DEFAULT_TOOL_STOP_GRACE_MS = 50;

export type InterruptHook = () => void | Promise<void>;
export type ContextProvider = (info: { model: string; sessionId: string }) => string | Promise<string>;

export interface TurnEngineOptions {
  /** One provider, or a resolver that picks one per model name (so a switch can cross vendors). */
  provider: Provider | ProviderResolver;
  model: string;
  sessionId?: string;
  /** System prompt; inserted first unless the history already starts with a system message. */
  instructions?: string;
  /** Prior canonical history (a reloaded session). */
  messages?: Message[];
  tools?: ToolRegistry | ToolDefinition[];
  /** Model calls allowed per user turn (default 12). */
  maxIterations?: number;
  approver?: Approver;
  policy?: PermissionPolicy;
  grants?: GrantsSnapshot;
  interactive?: InteractiveCallbacks;
  /** Answers given before a restart, keyed by (session, tool_call_id). */
  inbox?: InboxLookup;
  compactor?: Compactor;
  compactionState?: CompactionState | null;
  contextProvider?: ContextProvider;
  pdfAdapter?: PdfAdapter;
  interruptHooks?: InterruptHook[];
  modelSettings?: Record<string, unknown>;
  toolStopGraceMs?: number;
  logger?: EngineLogger;
  /** Called (and awaited) for every message appended: the persistence checkpoint. */
  onAppend?: (message: Message, index: number) => void | Promise<void>;
  onGrantsChanged?: (grants: GrantsSnapshot) => void | Promise<void>;
  onCompactionChanged?: (state: CompactionState | null) => void | Promise<void>;
}

export interface SteeringMessage {
  id: string;
  text: string;
  source?: MessageSource;
}

export interface SteeringReceipt {
  id: string;
  /**
   * `running`: a turn is running and will take it at its next safe point (or, if it is
   * already finishing, leave it in `takePendingSteering()` when its event stream ends).
   * `idle`: no turn is running; it waits in `takePendingSteering()` for the caller to
   * start one.
   */
  state: 'running' | 'idle';
}

export class EngineBusyError extends Error {
  constructor(what: string) {
    super(`${what}: a turn is already running in this session`);
    this.name = 'EngineBusyError';
  }
}

interface ActiveTurn {
  kind: TurnKind;
  controller: AbortController;
  signal: AbortSignal;
  iterations: number;
  ended: boolean;
}

type StreamOutcome =
  | { kind: 'answer'; turn: AssistantTurn }
  | { kind: 'interrupted'; text: string; reasoning: string }
  | { kind: 'failed'; error: unknown; text: string; reasoning: string };

export class TurnEngine {
  readonly sessionId: string;
  private readonly history: Message[];
  private currentModel: string;
  private readonly resolveProvider: ProviderResolver;
  private readonly registry: ToolRegistry;
  private readonly maxIterations: number;
  private readonly approver: Approver;
  private readonly policy: PermissionPolicy;
  private readonly grants: SessionGrants;
  private readonly interactive: InteractiveCallbacks;
  private readonly interactiveSchemas: ToolSchema[];
  private readonly inbox: InboxLookup | undefined;
  private readonly compactor: Compactor;
  private compactionState: CompactionState | null;
  private readonly contextProvider: ContextProvider | undefined;
  private readonly pdfAdapter: PdfAdapter | undefined;
  private readonly interruptHooks: InterruptHook[];
  private readonly modelSettings: Record<string, unknown> | undefined;
  private readonly toolStopGraceMs: number;
  private readonly logger: EngineLogger;
  private readonly onAppend: TurnEngineOptions['onAppend'];
  private readonly onGrantsChanged: TurnEngineOptions['onGrantsChanged'];
  private readonly onCompactionChanged: TurnEngineOptions['onCompactionChanged'];
  private readonly steering: SteeringMessage[] = [];
  private readonly usedToolCallIds = new Set<string>();
  private active: ActiveTurn | null = null;
  private lastUsage: TokenUsage | undefined;

  constructor(options: TurnEngineOptions) {
    const provider = options.provider;
    this.resolveProvider = typeof provider === 'function' ? provider : () => provider;
    this.currentModel = options.model;
    this.sessionId = options.sessionId ?? randomUUID();
    this.history = [...(options.messages ?? [])];
    if (options.instructions && this.history[0]?.role !== 'system') {
      this.history.unshift({ role: 'system', content: options.instructions });
    }
    this.registry = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    this.approver = options.approver ?? denyAll;
    this.policy = options.policy ?? riskBasedPolicy;
    this.grants = new SessionGrants(options.grants);
    this.interactive = options.interactive ?? {};
    this.interactiveSchemas = interactiveToolSchemas(this.interactive);
    this.inbox = options.inbox;
    this.compactor = options.compactor ?? noCompaction;
    this.compactionState = options.compactionState ?? null;
    this.contextProvider = options.contextProvider;
    this.pdfAdapter = options.pdfAdapter;
    this.interruptHooks = [...(options.interruptHooks ?? [])];
    this.modelSettings = options.modelSettings;
    this.toolStopGraceMs = options.toolStopGraceMs ?? DEFAULT_TOOL_STOP_GRACE_MS;
    this.logger = options.logger ?? silentLogger;
    this.onAppend = options.onAppend;
    this.onGrantsChanged = options.onGrantsChanged;
    this.onCompactionChanged = options.onCompactionChanged;
    for (const message of this.history) {
      if (message.role === 'assistant') for (const call of message.tool_calls ?? []) this.usedToolCallIds.add(call.id);
    }
  }

  // ---- read-only views -------------------------------------------------------------

  /** The canonical history. Read it; never edit it (outbound caches rely on that). */
  get messages(): readonly Message[] {
    return this.history;
  }

  get model(): string {
    return this.currentModel;
  }

  get isRunning(): boolean {
    return this.active !== null;
  }

  get grantsSnapshot(): GrantsSnapshot {
    return this.grants.snapshot();
  }

  get compaction(): CompactionState | null {
    return this.compactionState;
  }

  get pendingSteeringCount(): number {
    return this.steering.length;
  }

  // ---- entry points ----------------------------------------------------------------

  /** Start a turn with a new user message. */
  run(input: UserContent, options: { source?: MessageSource; display?: unknown } = {}): AsyncIterable<EngineEvent> {
    return this.turn('run', async function* (this: TurnEngine) {
      const message: Message = { role: 'user', content: input, ts: Date.now() };
      if (options.source) message.source = options.source;
      if (options.display !== undefined) message._display = options.display;
      // Persisted before the model is called: a crash from here on loses no user input.
      await this.append(message);
      const start: EngineEvent = { type: 'turn_start', kind: 'run', input };
      if (options.source) start.source = options.source;
      if (options.display !== undefined) start.display = options.display;
      yield start;
    });
  }

  /**
   * Run the loop again after a provider error (or the iteration limit), with no new user
   * message. Yields nothing unless the history ends in such a notice, looking through any
   * model switches after it: switching model and then retrying is the intended recovery.
   */
  async *retry(): AsyncGenerator<EngineEvent, void, undefined> {
    if (!this.canRetry()) return;
    yield* this.turn('retry', async function* () {
      yield { type: 'turn_start', kind: 'retry', input: null };
    });
  }

  /**
   * Continue a turn that stopped at unanswered tool calls (a pending approval when the
   * process restarted). Those calls go through the normal pipeline; a prompt already
   * answered in the inbox returns its answer without asking, answered calls are skipped,
   * so nothing runs twice. Yields nothing when there is nothing to resume.
   */
  async *resume(): AsyncGenerator<EngineEvent, void, undefined> {
    if (this.unansweredToolCalls().length === 0) return;
    yield* this.turn('resume', async function* (this: TurnEngine, turn: ActiveTurn) {
      yield { type: 'turn_start', kind: 'resume', input: null };
      const pending = this.unansweredToolCalls().map((call) => ({ call, args: parseToolArguments(call.function.arguments) }));
      yield* runToolCalls(this.toolPassContext(turn), pending, undefined);
      yield { type: 'iteration_end', iteration: 0 };
      return 'tools_done' as const;
    });
  }

  /**
   * Stop the running turn as soon as possible, from any state. Returns false (and does
   * nothing) when no turn runs, so a stale stop never leaks into the next turn.
   */
  requestInterrupt(): boolean {
    const turn = this.active;
    if (!turn || turn.controller.signal.aborted) return false;
    turn.controller.abort(new Error(INTERRUPTED_BY_USER));
    for (const hook of this.interruptHooks) {
      // Best effort: a failing hook must not block the stop.
      try {
        const pending = hook();
        if (pending) pending.catch((error: unknown) => this.logger.warn({ err: error }, 'interrupt hook failed'));
      } catch (error) {
        this.logger.warn({ err: error }, 'interrupt hook failed');
      }
    }
    return true;
  }

  addInterruptHook(hook: InterruptHook): () => void {
    this.interruptHooks.push(hook);
    return () => {
      const index = this.interruptHooks.indexOf(hook);
      if (index >= 0) this.interruptHooks.splice(index, 1);
    };
  }

  /** Queue a user message for the running turn's next safe point. Never dropped. */
  queueSteering(text: string, source?: MessageSource, id: string = randomUUID()): SteeringReceipt {
    const steer: SteeringMessage = { id, text };
    if (source) steer.source = source;
    this.steering.push(steer);
    return { id: steer.id, state: this.active ? 'running' : 'idle' };
  }

  /**
   * Steering no turn took: queued while idle, or arriving as a turn finished (or after it
   * was stopped). Call after every turn's event stream ends; a non-empty answer means
   * start the next turn with these messages.
   */
  takePendingSteering(): SteeringMessage[] {
    return this.steering.splice(0, this.steering.length);
  }

  /**
   * Rebind the session's model. History is canonical and every provider converts per call,
   * so this is a field write plus a notice marking where it happened (none on the first
   * bind of an empty session). Returns the notice text, or null.
   */
  async switchModel(model: string): Promise<string | null> {
    if (this.active) throw new EngineBusyError('cannot switch model');
    const target = model.trim();
    if (!target || target === this.currentModel) return null;
    const capabilities = this.resolveProvider(target).capabilities(target);
    this.currentModel = target;
    if (!this.history.some((m) => m.role !== 'system')) return null;
    let text = `Model switched to ${target}`;
    if (!capabilities.vision && hasImages(this.history)) text += ' — earlier images cannot be seen by this model';
    await this.appendNotice('model_switch', text);
    return text;
  }

  /**
   * Answer the trailing unanswered tool calls without running them, and mark where with a
   * notice: a stop while a prompt waited but no turn ran (after a restart), or a call that
   * was running when the process died. Returns the calls it answered. Refused mid-turn.
   */
  async closeUnansweredToolCalls(reason: string, notice?: { kind: NoticeKind; text: string }): Promise<ToolCall[]> {
    if (this.active) throw new EngineBusyError('cannot close tool calls');
    const calls = this.unansweredToolCalls();
    for (const call of calls) {
      await this.append({ role: 'tool', tool_call_id: call.id, content: toolErrorContent(reason), ts: Date.now() });
    }
    if (calls.length > 0 && notice) await this.appendNotice(notice.kind, notice.text);
    return calls;
  }

  /** The tools this engine offers (read-only use: recovery checks which are idempotent). */
  get tools(): Pick<ToolRegistry, 'get' | 'names'> {
    return this.registry;
  }

  /** Whether `retry()` would do anything now. */
  canRetry(): boolean {
    for (let i = this.history.length - 1; i >= 0; i--) {
      const message = this.history[i]!;
      if (message.role !== 'notice') return false;
      if (message.kind === 'model_switch') continue;
      return message.kind === 'error' || message.kind === 'max_iterations';
    }
    return false;
  }

  /** The trailing assistant message's tool calls that have no result yet. */
  unansweredToolCalls(): ToolCall[] {
    for (let i = this.history.length - 1; i >= 0; i--) {
      const message = this.history[i]!;
      if (message.role === 'user') return [];
      if (message.role !== 'assistant') continue;
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return [];
      // Ids are unique within a session (see uniqueToolCallId), so a global answered set is exact.
      const answered = new Set(
        this.history.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
      );
      return calls.filter((call) => !answered.has(call.id));
    }
    return [];
  }

  // ---- the turn ----------------------------------------------------------------------

  /**
   * Every runner goes through here: one running turn at a time, a fresh stop signal per
   * turn, exactly one `turn_end`, and the no-orphan invariant kept even if the consumer
   * walks away mid-turn or something throws.
   */
  private async *turn(
    kind: TurnKind,
    opening: (this: TurnEngine, turn: ActiveTurn) => AsyncGenerator<EngineEvent, 'tools_done' | void, undefined>,
  ): AsyncGenerator<EngineEvent, void, undefined> {
    if (this.active) throw new EngineBusyError(`cannot ${kind}`);
    const controller = new AbortController();
    // Each running tool, approval wait and stream race holds one listener on the turn
    // signal while it waits, so a wide batch of concurrent tools legitimately exceeds
    // Node's default warning threshold of 10. Leaks are still caught: every race releases
    // its listener (test/engine/stream-bridge.test.ts counts them).
    setMaxListeners(64, controller.signal);
    const turn: ActiveTurn = { kind, controller, signal: controller.signal, iterations: 0, ended: false };
    this.active = turn;
    try {
      let status: TurnEndStatus;
      try {
        const opened = yield* opening.call(this, turn);
        const next = opened === 'tools_done' ? yield* this.afterToolRound(turn) : 'continue';
        status = next === 'continue' ? yield* this.loop(turn) : next;
      } catch (error) {
        status = yield* this.failInternally(turn, error);
      }
      turn.ended = true;
      yield { type: 'turn_end', status, iterations: turn.iterations, pendingSteering: this.steering.length };
    } finally {
      if (!turn.ended) await this.abandon(turn);
      this.active = null;
    }
  }

  private async *loop(turn: ActiveTurn): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    for (;;) {
      if (turn.signal.aborted) return yield* this.endInterrupted(turn);
      if (turn.iterations >= this.maxIterations) {
        await this.appendNotice(
          'max_iterations',
          `Stopped after ${turn.iterations} model calls in this turn (the limit is ${this.maxIterations}). Continue to let it go on.`,
        );
        return 'max_iterations_exceeded';
      }

      let provider: Provider;
      let capabilities: ModelCapabilities;
      try {
        provider = this.resolveProvider(this.currentModel);
        capabilities = provider.capabilities(this.currentModel);
      } catch (error) {
        return yield* this.endFailed(turn, error, '', '');
      }

      yield* this.compactionCheckpoint(turn, provider, capabilities);
      if (turn.signal.aborted) return yield* this.endInterrupted(turn);

      turn.iterations++;
      const outcome = yield* this.streamModel(turn, provider, capabilities);
      if (outcome.kind === 'interrupted') {
        await this.appendPartial(outcome.text, outcome.reasoning);
        return yield* this.endInterrupted(turn);
      }
      if (outcome.kind === 'failed') {
        if (isContextOverflow(outcome.error) && !turn.signal.aborted) {
          if (yield* this.compactAfterOverflow(turn, provider, capabilities)) continue;
        }
        return yield* this.endFailed(turn, outcome.error, outcome.text, outcome.reasoning);
      }

      const { turn: answer } = outcome;
      const pending = yield* this.appendAssistant(answer);
      if (pending.length === 0) {
        // The answer is whole even if a stop arrived as it finished: it stands.
        if (!turn.signal.aborted && this.steering.length > 0) {
          yield* this.injectSteering();
          continue;
        }
        return 'completed';
      }
      yield* runToolCalls(this.toolPassContext(turn), pending, answer.finishReason);
      yield { type: 'iteration_end', iteration: turn.iterations };
      const next = yield* this.afterToolRound(turn);
      if (next !== 'continue') return next;
    }
  }

  /** The checkpoint after a tool round: stop, or take steering and go on. */
  private async *afterToolRound(turn: ActiveTurn): AsyncGenerator<EngineEvent, TurnEndStatus | 'continue', undefined> {
    if (turn.signal.aborted) return yield* this.endInterrupted(turn);
    yield* this.injectSteering();
    return 'continue';
  }

  private async *streamModel(
    turn: ActiveTurn,
    provider: Provider,
    capabilities: ModelCapabilities,
  ): AsyncGenerator<EngineEvent, StreamOutcome, undefined> {
    let text = '';
    let reasoning = '';
    let final: AssistantTurn | undefined;
    try {
      const systemContext = this.contextProvider
        ? await this.contextProvider({ model: this.currentModel, sessionId: this.sessionId })
        : '';
      const request = {
        model: this.currentModel,
        messages: buildOutbound(this.history, {
          compactionState: this.compactionState,
          capabilities,
          systemContext,
          pdfAdapter: this.pdfAdapter,
        }),
        tools: capabilities.tools ? this.toolSchemas() : [],
        settings: this.modelSettings,
      };
      for await (const chunk of bridgeStream(provider, request, turn.signal)) {
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
      if (turn.signal.aborted) return { kind: 'interrupted', text, reasoning };
      return { kind: 'failed', error, text, reasoning };
    }
    if (final) return { kind: 'answer', turn: final };
    if (turn.signal.aborted) return { kind: 'interrupted', text, reasoning };
    return {
      kind: 'failed',
      error: new ProviderError('connection', 'The model stream ended before the answer was complete.'),
      text,
      reasoning,
    };
  }

  /** Record a complete assistant turn; returns its tool calls, ready for the tool pass. */
  private async *appendAssistant(answer: AssistantTurn): AsyncGenerator<EngineEvent, PendingToolCall[], undefined> {
    const pending: PendingToolCall[] = answer.toolCalls.map((call) => {
      const args = parseToolArguments(call.arguments);
      return {
        call: {
          id: this.uniqueToolCallId(call.id),
          type: 'function',
          function: { name: call.name, arguments: args.stored },
        },
        args,
      };
    });
    const message: AssistantMessage = { role: 'assistant', content: answer.text ?? null, ts: Date.now() };
    if (pending.length > 0) message.tool_calls = pending.map((p) => p.call);
    if (answer.reasoning) message.reasoning = answer.reasoning;
    const usage = answer.usage ? this.tagUsage(answer.usage) : undefined;
    if (usage) message.usage = usage;
    for (const [key, value] of Object.entries(answer.extras ?? {})) {
      if (key.startsWith('_') && key !== '_display') message[key] = value;
    }
    if (answer.usage) this.lastUsage = answer.usage;
    await this.append(message);
    const event: EngineEvent = {
      type: 'assistant_message',
      text: message.content,
      toolCalls: pending.map((p) => ({ id: p.call.id, name: p.call.function.name })),
    };
    if (message.reasoning) event.reasoning = message.reasoning;
    if (usage) event.usage = usage;
    yield event;
    return pending;
  }

  /**
   * Tool-call ids must be unique within the session: some providers number calls per turn
   * (`call_0` again every turn) or send none, and a reused id would let an approval or a
   * resume match an earlier call and silently reuse its decision.
   */
  private uniqueToolCallId(proposed: string | null | undefined): string {
    let id = proposed?.trim() ?? '';
    if (!id || this.usedToolCallIds.has(id)) id = `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    this.usedToolCallIds.add(id);
    return id;
  }

  private tagUsage(usage: TokenUsage): Usage {
    const tagged: Usage = { model: this.currentModel, input: usage.input, output: usage.output };
    if (usage.cacheRead !== undefined) tagged.cacheRead = usage.cacheRead;
    if (usage.cacheWrite !== undefined) tagged.cacheWrite = usage.cacheWrite;
    return tagged;
  }

  private async *injectSteering(): AsyncGenerator<EngineEvent, void, undefined> {
    while (this.steering.length > 0) {
      const steer = this.steering.shift()!;
      const message: Message = { role: 'user', content: steer.text, ts: Date.now() };
      if (steer.source) message.source = steer.source;
      await this.append(message);
      const event: EngineEvent = { type: 'steering_injected', id: steer.id, text: steer.text };
      if (steer.source) event.source = steer.source;
      yield event;
    }
  }

  // ---- compaction --------------------------------------------------------------------

  private compactionContext(turn: ActiveTurn, provider: Provider, capabilities: ModelCapabilities): CompactionContext {
    return {
      messages: this.history,
      state: this.compactionState,
      capabilities,
      provider,
      model: this.currentModel,
      lastUsage: this.lastUsage,
      signal: turn.signal,
    };
  }

  private async *compactionCheckpoint(
    turn: ActiveTurn,
    provider: Provider,
    capabilities: ModelCapabilities,
  ): AsyncGenerator<EngineEvent, void, undefined> {
    const context = this.compactionContext(turn, provider, capabilities);
    if (!this.compactor.isDue(context)) return;
    // Announced first: a summary takes seconds and the user should know why it is quiet.
    yield { type: 'compacting' };
    try {
      const result = await this.compactor.compact(context, { force: false });
      if (result) yield* this.applyCompaction(result.state, result.notice);
    } catch (error) {
      this.logger.warn({ err: error }, 'compaction failed; continuing with the full history');
    }
  }

  /**
   * A context overflow is housekeeping, not an error for the user: force a compaction and
   * try again. Progress-guarded: a pass that cannot move the boundary forward gives up,
   * so a model that keeps overflowing still ends in the error path.
   */
  private async *compactAfterOverflow(
    turn: ActiveTurn,
    provider: Provider,
    capabilities: ModelCapabilities,
  ): AsyncGenerator<EngineEvent, boolean, undefined> {
    yield { type: 'compacting' };
    const before = this.compactionState?.boundary ?? 0;
    try {
      const result = await this.compactor.compact(this.compactionContext(turn, provider, capabilities), { force: true });
      if (!result || result.state.boundary <= before) return false;
      yield* this.applyCompaction(result.state, result.notice);
      return true;
    } catch (error) {
      this.logger.warn({ err: error }, 'forced compaction failed');
      return false;
    }
  }

  private async *applyCompaction(state: CompactionState, notice: string): AsyncGenerator<EngineEvent, void, undefined> {
    this.compactionState = state;
    // The last call's usage described the old view; until the next call reports, estimate.
    this.lastUsage = undefined;
    await this.onCompactionChanged?.(state);
    await this.appendNotice('compacted', notice);
    yield { type: 'compacted', text: notice };
  }

  // ---- endings -----------------------------------------------------------------------

  private async *endInterrupted(turn: ActiveTurn): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    await this.appendNotice('interrupted', 'Stopped by the user.');
    yield { type: 'interrupted', iterations: turn.iterations };
    return 'interrupted';
  }

  /** A failed model call: what the user watched arrive is kept, then an error notice. */
  private async *endFailed(
    turn: ActiveTurn,
    error: unknown,
    text: string,
    reasoning: string,
  ): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    if (turn.signal.aborted) {
      await this.appendPartial(text, reasoning);
      return yield* this.endInterrupted(turn);
    }
    await this.appendPartial(text, reasoning);
    const described = isContextOverflow(error)
      ? {
          message: 'The conversation no longer fits in the model\'s context, and compaction could not make room.',
          kind: 'context_overflow',
        }
      : describeProviderError(error);
    this.logger.warn({ err: error, kind: described.kind }, 'model call failed');
    await this.appendNotice('error', described.message);
    yield { type: 'error', message: described.message, errorKind: described.kind };
    return 'error';
  }

  /** A bug or a failing store must not kill the bot: report it, keep the history valid. */
  private async *failInternally(turn: ActiveTurn, error: unknown): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    this.logger.error({ err: error }, 'turn failed unexpectedly');
    const message = `Something went wrong inside the agent: ${error instanceof Error ? error.message : String(error)}`;
    try {
      await this.answerOrphans('the turn failed before this call could run');
      await this.appendNotice('error', message);
    } catch (persistError) {
      this.logger.error({ err: persistError }, 'could not record the failure');
    }
    yield { type: 'error', message, errorKind: 'internal' };
    return turn.signal.aborted ? 'interrupted' : 'error';
  }

  /** The consumer walked away mid-turn (or a yield threw): stop, and leave no orphans. */
  private async abandon(turn: ActiveTurn): Promise<void> {
    turn.controller.abort(new Error('turn abandoned'));
    try {
      await this.answerOrphans(INTERRUPTED_BY_USER);
      await this.appendNotice('interrupted', 'Stopped.');
    } catch (error) {
      this.logger.error({ err: error }, 'could not close an abandoned turn');
    }
  }

  private async answerOrphans(reason: string): Promise<void> {
    for (const call of this.unansweredToolCalls()) {
      await this.append({ role: 'tool', tool_call_id: call.id, content: toolErrorContent(reason), ts: Date.now() });
    }
  }

  // ---- history -----------------------------------------------------------------------

  private async append(message: Message): Promise<void> {
    this.history.push(message);
    if (this.onAppend) await this.onAppend(message, this.history.length - 1);
  }

  private async appendNotice(kind: NoticeKind, text?: string): Promise<void> {
    const notice: Message = { role: 'notice', kind, ts: Date.now() };
    if (text) notice.text = text;
    await this.append(notice);
  }

  /** The partial the user watched arrive: text and thinking, never half-formed tool calls. */
  private async appendPartial(text: string, reasoning: string): Promise<void> {
    if (!text && !reasoning) return;
    const message: AssistantMessage = { role: 'assistant', content: text || null, ts: Date.now() };
    if (reasoning) message.reasoning = reasoning;
    await this.append(message);
  }

  private toolSchemas(): ToolSchema[] {
    const registered = this.registry.schemas();
    return this.interactiveSchemas.length > 0 ? [...registered, ...this.interactiveSchemas] : registered;
  }

  private toolPassContext(turn: ActiveTurn): ToolPassContext {
    return {
      sessionId: this.sessionId,
      signal: turn.signal,
      tools: this.registry,
      policy: this.policy,
      approver: this.approver,
      grants: this.grants,
      interactive: this.interactive,
      inbox: this.inbox,
      logger: this.logger,
      toolStopGraceMs: this.toolStopGraceMs,
      append: (message) => this.append(message),
      grantsChanged: () => this.onGrantsChanged?.(this.grants.snapshot()),
    };
  }
}

