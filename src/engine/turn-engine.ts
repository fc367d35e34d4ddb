// TurnEngine: the owned agent loop.
//
// One user turn spans many model↔tool iterations until the model stops calling tools, a
// rail trips, or the user stops it. Progress is an AsyncIterable of typed events that a
// connector renders. Approvals and questions are answered out-of-band by injected async
// callbacks that may wait for a human as long as it takes; a stop ends any wait at once.
// The canonical history is the only state: resume and retry are rebuilt from it alone.
//
// A turn is reserved when `run` / `retry` / `resume` is called, not when its events are
// first pulled: a stop that arrives in between (a 🛑 right after the message) still lands.
// So iterate what you start: a reserved turn holds the engine until its events are drained.
//
// This class is the engine's public surface: its entry points and what they may read. The
// options it is built from are engine-options.ts; the loop a turn runs is turn-loop.ts, and
// the ways a turn ends short of completing are turn-endings.ts.
import { randomUUID } from 'node:crypto';
import { noCompaction, type CompactionState } from './compaction.js';
import { CompactionRunner } from './compaction-runner.js';
import {
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE,
  DEFAULT_TOOL_STOP_GRACE_MS,
  type InterruptHook,
  type TurnEngineOptions,
} from './engine-options.js';
import type { EngineEvent, TurnKind } from './events.js';
import { History, type ToolRound } from './history.js';
import { interactiveToolSchemas } from './interactive.js';
import { silentLogger } from './logger.js';
import {
  hasImages,
  textOf,
  type IncomingFile,
  type Message,
  type MessageSource,
  type NoticeKind,
  type ToolCall,
  type UserContent,
} from './messages.js';
import { piecewise } from './output-masks.js';
import { contentWithoutFiles, SteeringQueue, type SteeringMessage, type SteeringReceipt } from './steering.js';
import { denyAll, riskBasedPolicy, SessionGrants, type GrantsSnapshot } from './permissions.js';
import { DEFAULT_MAX_RESULT_CHARS, MIN_MAX_RESULT_CHARS } from './result-cap.js';
import { parseToolArguments } from './tool-arguments.js';
import { INTERRUPTED_BY_USER, runToolCalls } from './tool-calls.js';
import { InMemoryToolLedger } from './tool-ledger.js';
import { ToolRegistry } from './tools.js';
import type { ActiveTurn, EngineParts } from './engine-parts.js';
import { driveTurn, newTurn, toolPassContext, type Opening } from './turn-loop.js';

/** @internal */
export class EngineBusyError extends Error {
  constructor(what: string) {
    super(`${what}: a turn is already running in this session`);
    this.name = 'EngineBusyError';
  }
}

const NOTHING: AsyncIterable<EngineEvent> = {
  [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }),
};

export class TurnEngine {
  readonly sessionId: string;
  private readonly parts: EngineParts;
  private readonly interruptHooks: InterruptHook[];
  private active: ActiveTurn | null = null;

  constructor(options: TurnEngineOptions) {
    const { limits = {}, ports = {}, hooks = {} } = options;
    const provider = options.provider;
    const sessionId = options.sessionId ?? randomUUID();
    const logger = ports.logger ?? silentLogger;
    const maskOutput = ports.maskOutput ?? ((text: string) => text);
    const history = new History(options.messages ?? [], hooks.onAppend);
    if (options.instructions) history.prependSystem(options.instructions);
    const maxResultChars = limits.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
    if (!Number.isInteger(maxResultChars) || maxResultChars < MIN_MAX_RESULT_CHARS) {
      throw new Error(`maxResultChars must be an integer of at least ${MIN_MAX_RESULT_CHARS}, got ${maxResultChars}`);
    }
    const interactive = ports.interactive ?? {};
    this.sessionId = sessionId;
    this.interruptHooks = [...(hooks.onInterrupt ?? [])];
    this.parts = {
      sessionId,
      history,
      model: options.model,
      resolveProvider: typeof provider === 'function' ? provider : () => provider,
      registry: options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []),
      interactiveSchemas: interactiveToolSchemas(interactive),
      steering: new SteeringQueue(),
      compacting: new CompactionRunner(
        ports.compactor ?? noCompaction,
        options.compactionState ?? null,
        history,
        logger,
        hooks.onCompactionChanged,
      ),
      grants: new SessionGrants(options.grants),
      modelSettings: options.modelSettings,
      maxIterations: limits.maxIterations ?? DEFAULT_MAX_ITERATIONS,
      maxToolCallsPerResponse: limits.maxToolCallsPerResponse ?? DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE,
      maxResultChars,
      toolStopGraceMs: limits.toolStopGraceMs ?? DEFAULT_TOOL_STOP_GRACE_MS,
      policy: ports.policy ?? riskBasedPolicy,
      approver: ports.approver ?? denyAll,
      interactive,
      inbox: ports.inbox,
      ledger: ports.ledger ?? new InMemoryToolLedger(),
      contextProvider: ports.contextProvider,
      pdfAdapter: ports.pdfAdapter,
      prepareInput: ports.prepareInput ?? contentWithoutFiles,
      attachmentView: ports.attachmentView,
      maskOutput,
      maskStream: ports.maskStream ?? piecewise(maskOutput),
      logger,
      onGrantsChanged: hooks.onGrantsChanged,
    };
  }

  // ---- read-only views -------------------------------------------------------------

  /** The canonical history. Read it; never edit it (outbound caches rely on that). */
  get messages(): readonly Message[] {
    return this.parts.history.messages;
  }

  get model(): string {
    return this.parts.model;
  }

  /** True from the moment a turn is reserved (run / retry / resume called) until its events end. */
  get isRunning(): boolean {
    return this.active !== null;
  }

  get grantsSnapshot(): GrantsSnapshot {
    return this.parts.grants.snapshot();
  }

  get compaction(): CompactionState | null {
    return this.parts.compacting.state;
  }

  get pendingSteeringCount(): number {
    return this.parts.steering.size;
  }

  /** The tools this engine offers (read-only use). */
  get tools(): Pick<ToolRegistry, 'get' | 'names'> {
    return this.parts.registry;
  }

  /** Whether the last turn was paused by a spend limit (only an admin's Continue retries it: thread-controls.ts). */
  pausedBySpendLimit(): boolean {
    return this.parts.history.endsPausedBySpend();
  }

  /** Whether `retry()` would do anything now. */
  canRetry(): boolean {
    return this.parts.history.endsRetryable();
  }

  /** The trailing assistant message's tool calls that have no result yet. */
  unansweredToolCalls(): ToolCall[] {
    return this.parts.history.unansweredToolCalls();
  }

  /** The trailing assistant message's tool calls, answered or not. */
  trailingRound(): ToolRound | undefined {
    return this.parts.history.trailingRound();
  }

  // ---- entry points ----------------------------------------------------------------

  /** Start a turn with a new user message. Throws EngineBusyError while another turn runs. */
  run(
    input: UserContent,
    options: { source?: MessageSource; display?: unknown; attachments?: IncomingFile[] } = {},
  ): AsyncIterable<EngineEvent> {
    const parts = this.parts;
    return this.turn('run', async function* (turn: ActiveTurn) {
      // The files are fetched before the message is recorded: the transcript keeps references to them.
      const attachments = options.attachments ?? [];
      const prepared =
        attachments.length > 0
          ? await parts.prepareInput(
              {
                text: typeof input === 'string' ? input : textOf(input),
                attachments,
                ...(options.source ? { source: options.source } : {}),
              },
              turn.signal,
            )
          : undefined;
      if (prepared) input = prepared.content;
      const message: Message = { role: 'user', content: input, ts: Date.now() };
      if (options.source) message.source = options.source;
      if (options.display !== undefined) message._display = options.display;
      // Persisted before the model is called: a crash from here on loses no user input.
      await parts.history.append(message);
      const start: EngineEvent = { type: 'turn_start', kind: 'run', input };
      if (options.source) start.source = options.source;
      if (options.display !== undefined) start.display = options.display;
      yield start;
      if (prepared && prepared.problems.length > 0) yield { type: 'input_files', problems: prepared.problems };
    });
  }

  /**
   * Run the loop again after a provider error (or the iteration limit), with no new user
   * message. Yields nothing unless the history ends in such a notice, looking through any
   * model switches after it: switching model and then retrying is the intended recovery.
   */
  retry(): AsyncIterable<EngineEvent> {
    if (!this.canRetry()) return NOTHING;
    return this.turn('retry', async function* () {
      yield { type: 'turn_start', kind: 'retry', input: null };
    });
  }

  /**
   * Continue a turn a restart cut short: at unanswered tool calls, or where the model owed
   * the next message (the crash came mid-stream, or between a tool round and the next model
   * call). Each unanswered call is decided on its own: one the ledger says started is
   * answered "interrupted by a restart" and not run again (unless its tool is idempotent,
   * then it runs again); one whose prompt was answered meanwhile uses that answer without
   * asking; one never started goes through the normal pipeline. Then the loop goes on.
   * Yields nothing when there is nothing to resume.
   */
  resume(): AsyncIterable<EngineEvent> {
    if (!this.canResume()) return NOTHING;
    const parts = this.parts;
    return this.turn('resume', async function* (turn: ActiveTurn) {
      yield { type: 'turn_start', kind: 'resume', input: null };
      const round = parts.history.trailingRound();
      if (!round || round.unanswered.length === 0) return 'tools_done' as const;
      const started = await parts.ledger.started(parts.sessionId, round.round);
      const pending = round.unanswered.map((call) => ({ call, args: parseToolArguments(call.function.arguments) }));
      yield* runToolCalls(toolPassContext(parts, turn), round.round, pending, undefined, started);
      yield { type: 'iteration_end', iteration: 0 };
      return 'tools_done' as const;
    });
  }

  /** Whether `resume()` would do anything now. */
  canResume(): boolean {
    return this.parts.history.unansweredToolCalls().length > 0 || this.parts.history.awaitsModel();
  }

  /**
   * Stop the running (or reserved) turn as soon as possible, from any state. Returns false
   * (and does nothing) when no turn is running, so a stale stop never leaks into the next turn.
   */
  requestInterrupt(): boolean {
    const turn = this.active;
    if (!turn || turn.controller.signal.aborted) return false;
    turn.controller.abort(new Error(INTERRUPTED_BY_USER));
    for (const hook of this.interruptHooks) {
      // Best effort: a failing hook must not block the stop.
      try {
        const pending = hook();
        if (pending) pending.catch((error: unknown) => this.parts.logger.warn({ err: error }, 'interrupt hook failed'));
      } catch (error) {
        this.parts.logger.warn({ err: error }, 'interrupt hook failed');
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
  queueSteering(
    text: string,
    source?: MessageSource,
    id: string = randomUUID(),
    attachments?: IncomingFile[],
  ): SteeringReceipt {
    this.parts.steering.push({
      id,
      text,
      ...(source ? { source } : {}),
      ...(attachments?.length ? { attachments } : {}),
    });
    return { id, state: this.active ? 'running' : 'idle' };
  }

  /** Whether a steering message with this id is already queued (a stored input queued once). */
  hasQueuedSteering(id: string): boolean {
    return this.parts.steering.has(id);
  }

  /** The ids of the steering messages waiting to be taken, in order. */
  queuedSteeringIds(): string[] {
    return this.parts.steering.ids();
  }

  /**
   * Steering no turn took: queued while idle, or arriving as a turn finished (or after it
   * was stopped). Call after every turn's event stream ends; a non-empty answer means
   * start the next turn with these messages.
   */
  takePendingSteering(): SteeringMessage[] {
    return this.parts.steering.takeAll();
  }

  /**
   * Rebind the session's model. History is canonical and every provider converts per call,
   * so this is a field write plus a notice marking where it happened (none on the first
   * bind of an empty session). Returns the notice text, or null.
   */
  async switchModel(model: string): Promise<string | null> {
    if (this.active) throw new EngineBusyError('cannot switch model');
    const target = model.trim();
    if (!target || target === this.parts.model) return null;
    const capabilities = this.parts.resolveProvider(target).capabilities(target);
    this.parts.model = target;
    if (!this.parts.history.messages.some((m) => m.role !== 'system')) return null;
    let text = `Model switched to ${target}`;
    if (!capabilities.vision && hasImages(this.parts.history.messages))
      text += ' — earlier images cannot be seen by this model';
    await this.parts.history.appendNotice('model_switch', text);
    return text;
  }

  /**
   * Answer the trailing unanswered tool calls without running them, and mark where with a
   * notice: a stop while a prompt waited but no turn ran (after a restart). Returns the
   * calls it answered. Refused mid-turn.
   */
  async closeUnansweredToolCalls(reason: string, notice?: { kind: NoticeKind; text: string }): Promise<ToolCall[]> {
    if (this.active) throw new EngineBusyError('cannot close tool calls');
    const calls = await this.parts.history.answerUnanswered(reason);
    if (calls.length > 0 && notice) await this.parts.history.appendNotice(notice.kind, notice.text);
    return calls;
  }

  /** Mark a place in the history for the user (an error a turn could not report itself). Refused mid-turn. */
  async recordNotice(kind: NoticeKind, text: string): Promise<void> {
    if (this.active) throw new EngineBusyError('cannot add a notice');
    await this.parts.history.appendNotice(kind, text);
  }

  // ---- the turn ----------------------------------------------------------------------

  /**
   * Every runner goes through here: one turn at a time, reserved now (so a stop before the
   * first pull lands), then driven by the loop (turn-loop.ts) until its one `turn_end`.
   */
  private turn(kind: TurnKind, opening: Opening): AsyncIterable<EngineEvent> {
    if (this.active) throw new EngineBusyError(`cannot ${kind}`);
    const turn = newTurn(kind);
    this.active = turn;
    return driveTurn(this.parts, turn, opening, () => {
      this.active = null;
    });
  }
}
