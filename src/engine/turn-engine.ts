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
import { randomUUID } from 'node:crypto';
import { StopScope } from './abort.js';
import { setMaxListeners } from 'node:events';
import { noCompaction, type CompactionState, type Compactor } from './compaction.js';
import { CompactionRunner, type ModelCallSetting } from './compaction-runner.js';
import type { EngineEvent, TurnEndStatus, TurnKind } from './events.js';
import { History, type ToolRound } from './history.js';
import type { InboxLookup } from './inbox.js';
import { interactiveToolSchemas, type InteractiveCallbacks } from './interactive.js';
import { silentLogger, type EngineLogger } from './logger.js';
import { hasImages, textOf, type IncomingFile, type Message, type MessageSource, type NoticeKind, type ToolCall, type UserContent } from './messages.js';
import { piecewise, recordableAnswer, streamModel, type StreamMask } from './model-call.js';
import { contentWithoutFiles, SteeringQueue, type InputPreparer, type SteeringMessage, type SteeringReceipt } from './steering.js';
import type { AttachmentView, PdfAdapter } from './outbound.js';
import { denyAll, riskBasedPolicy, SessionGrants, type Approver, type GrantsSnapshot, type PermissionPolicy } from './permissions.js';
import { describeProviderError, isContextOverflow, ProviderError, type CallMeta, type Provider, type ProviderResolver, type ToolSchema } from './provider.js';
import { DEFAULT_MAX_RESULT_CHARS, MIN_MAX_RESULT_CHARS } from './result-cap.js';
import { parseToolArguments } from './tool-arguments.js';
import { INTERRUPTED_BY_USER, runToolCalls, type OutputMask, type ToolPassContext } from './tool-calls.js';
import { InMemoryToolLedger, type ToolLedger } from './tool-ledger.js';
import { isWritesFenced } from './fenced.js';
import { ToolRegistry, type ToolDefinition } from './tools.js';

export const DEFAULT_MAX_ITERATIONS = 12;
/** A model that asks for hundreds of calls at once would flood the thread with cards. */
export const DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE = 20;
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
  /** At most this many tool calls of one model response run (default 20); the rest get an error result. */
  maxToolCallsPerResponse?: number;
  approver?: Approver;
  policy?: PermissionPolicy;
  grants?: GrantsSnapshot;
  interactive?: InteractiveCallbacks;
  /** Answers given before a restart, keyed by (session, tool_call_id). */
  inbox?: InboxLookup;
  /**
   * Where tool starts are recorded before tools run. Default: in memory, which a crash takes
   * with it; a session that must survive restarts passes a durable one.
   */
  ledger?: ToolLedger;
  compactor?: Compactor;
  compactionState?: CompactionState | null;
  contextProvider?: ContextProvider;
  pdfAdapter?: PdfAdapter;
  /** Fetches the files a message carries and makes its user content (src/files/); default: names them only. */
  prepareInput?: InputPreparer;
  /** Turns a shared-file reference into what the active model can take, at each call (src/files/attachment-view.ts). */
  attachmentView?: AttachmentView;
  interruptHooks?: InterruptHook[];
  modelSettings?: Record<string, unknown>;
  toolStopGraceMs?: number;
  /**
   * The most characters a tool message's content may have as the model reads it, JSON escapes
   * included (default 24,000: the tools' 20,000 plus room for their JSON). Longer is trimmed,
   * with a note, by result-cap.ts.
   */
  maxResultChars?: number;
  logger?: EngineLogger;
  /**
   * Rewrites every tool result and error text before the history (so the model and the
   * transcript), the events (so the thread) and the logs see it: the app masks its secrets'
   * values here. The model's complete answers too: a secret can reach the model in a form
   * no mask knows, or typed by a person, and it must not repeat it into the thread. Tool
   * arguments are not masked: they are the model's words, shown as written so an approver
   * sees what runs.
   */
  maskOutput?: OutputMask;
  /**
   * The same masking for the model's streamed deltas, one per stream: it holds back an end
   * that could be the start of a secret, so a secret split across two deltas is masked
   * (default: each delta masked alone by `maskOutput`).
   */
  maskStream?: () => StreamMask;
  /** Called (and awaited) for every message appended: the persistence checkpoint. */
  onAppend?: (message: Message, index: number) => void | Promise<void>;
  onGrantsChanged?: (grants: GrantsSnapshot) => void | Promise<void>;
  onCompactionChanged?: (state: CompactionState | null) => void | Promise<void>;
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
  /** The turn's stop, as the model calls and tools race it. */
  stop: StopScope;
  iterations: number;
  ended: boolean;
  /** What the tool rounds of this turn share (made at its first round). */
  pass?: ToolPassContext;
}

type Opening = (this: TurnEngine, turn: ActiveTurn) => AsyncGenerator<EngineEvent, 'tools_done' | void, undefined>;

const NOTHING: AsyncIterable<EngineEvent> = { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) };

export class TurnEngine {
  readonly sessionId: string;
  private readonly history: History;
  private currentModel: string;
  private readonly resolveProvider: ProviderResolver;
  private readonly registry: ToolRegistry;
  private readonly maxIterations: number;
  private readonly maxToolCallsPerResponse: number;
  private readonly approver: Approver;
  private readonly policy: PermissionPolicy;
  private readonly grants: SessionGrants;
  private readonly interactive: InteractiveCallbacks;
  private readonly interactiveSchemas: ToolSchema[];
  private readonly inbox: InboxLookup | undefined;
  private readonly ledger: ToolLedger;
  private readonly compacting: CompactionRunner;
  private readonly contextProvider: ContextProvider | undefined;
  private readonly pdfAdapter: PdfAdapter | undefined;
  private readonly prepareInput: InputPreparer;
  private readonly attachmentView: AttachmentView | undefined;
  private readonly interruptHooks: InterruptHook[];
  private readonly modelSettings: Record<string, unknown> | undefined;
  private readonly toolStopGraceMs: number;
  private readonly maxResultChars: number;
  private readonly logger: EngineLogger;
  private readonly maskOutput: OutputMask;
  private readonly maskStream: () => StreamMask;
  private readonly onGrantsChanged: TurnEngineOptions['onGrantsChanged'];
  private readonly steering = new SteeringQueue();
  private active: ActiveTurn | null = null;

  constructor(options: TurnEngineOptions) {
    const provider = options.provider;
    this.resolveProvider = typeof provider === 'function' ? provider : () => provider;
    this.currentModel = options.model;
    this.sessionId = options.sessionId ?? randomUUID();
    this.logger = options.logger ?? silentLogger;
    this.maskOutput = options.maskOutput ?? ((text) => text);
    this.maskStream = options.maskStream ?? piecewise(this.maskOutput);
    this.history = new History(options.messages ?? [], options.onAppend);
    if (options.instructions) this.history.prependSystem(options.instructions);
    this.registry = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    this.maxToolCallsPerResponse = options.maxToolCallsPerResponse ?? DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE;
    this.approver = options.approver ?? denyAll;
    this.policy = options.policy ?? riskBasedPolicy;
    this.grants = new SessionGrants(options.grants);
    this.interactive = options.interactive ?? {};
    this.interactiveSchemas = interactiveToolSchemas(this.interactive);
    this.inbox = options.inbox;
    this.ledger = options.ledger ?? new InMemoryToolLedger();
    this.compacting = new CompactionRunner(
      options.compactor ?? noCompaction,
      options.compactionState ?? null,
      this.history,
      this.logger,
      options.onCompactionChanged,
    );
    this.contextProvider = options.contextProvider;
    this.pdfAdapter = options.pdfAdapter;
    this.prepareInput = options.prepareInput ?? contentWithoutFiles;
    this.attachmentView = options.attachmentView;
    this.interruptHooks = [...(options.interruptHooks ?? [])];
    this.modelSettings = options.modelSettings;
    this.toolStopGraceMs = options.toolStopGraceMs ?? DEFAULT_TOOL_STOP_GRACE_MS;
    this.maxResultChars = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
    if (!Number.isInteger(this.maxResultChars) || this.maxResultChars < MIN_MAX_RESULT_CHARS) {
      throw new Error(`maxResultChars must be an integer of at least ${MIN_MAX_RESULT_CHARS}, got ${this.maxResultChars}`);
    }
    this.onGrantsChanged = options.onGrantsChanged;
  }

  // ---- read-only views -------------------------------------------------------------

  /** The canonical history. Read it; never edit it (outbound caches rely on that). */
  get messages(): readonly Message[] {
    return this.history.messages;
  }

  get model(): string {
    return this.currentModel;
  }

  /** True from the moment a turn is reserved (run / retry / resume called) until its events end. */
  get isRunning(): boolean {
    return this.active !== null;
  }

  get grantsSnapshot(): GrantsSnapshot {
    return this.grants.snapshot();
  }

  get compaction(): CompactionState | null {
    return this.compacting.state;
  }

  get pendingSteeringCount(): number {
    return this.steering.size;
  }

  /** The tools this engine offers (read-only use). */
  get tools(): Pick<ToolRegistry, 'get' | 'names'> {
    return this.registry;
  }

  /** Whether the last turn was paused by a spend limit (only an admin's Continue retries it: thread-controls.ts). */
  pausedBySpendLimit(): boolean {
    return this.history.endsPausedBySpend();
  }

  /** Whether `retry()` would do anything now. */
  canRetry(): boolean {
    return this.history.endsRetryable();
  }

  /** The trailing assistant message's tool calls that have no result yet. */
  unansweredToolCalls(): ToolCall[] {
    return this.history.unansweredToolCalls();
  }

  /** The trailing assistant message's tool calls, answered or not. */
  trailingRound(): ToolRound | undefined {
    return this.history.trailingRound();
  }

  // ---- entry points ----------------------------------------------------------------

  /** Start a turn with a new user message. Throws EngineBusyError while another turn runs. */
  run(input: UserContent, options: { source?: MessageSource; display?: unknown; attachments?: IncomingFile[] } = {}): AsyncIterable<EngineEvent> {
    return this.turn('run', async function* (this: TurnEngine, turn: ActiveTurn) {
      // The files are fetched before the message is recorded: the transcript keeps references to them.
      const attachments = options.attachments ?? [];
      const prepared = attachments.length > 0 ? await this.prepareInput({ text: typeof input === 'string' ? input : textOf(input), attachments, ...(options.source ? { source: options.source } : {}) }, turn.signal) : undefined;
      if (prepared) input = prepared.content;
      const message: Message = { role: 'user', content: input, ts: Date.now() };
      if (options.source) message.source = options.source;
      if (options.display !== undefined) message._display = options.display;
      // Persisted before the model is called: a crash from here on loses no user input.
      await this.history.append(message);
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
    return this.turn('resume', async function* (this: TurnEngine, turn: ActiveTurn) {
      yield { type: 'turn_start', kind: 'resume', input: null };
      const round = this.history.trailingRound();
      if (!round || round.unanswered.length === 0) return 'tools_done' as const;
      const started = await this.ledger.started(this.sessionId, round.round);
      const pending = round.unanswered.map((call) => ({ call, args: parseToolArguments(call.function.arguments) }));
      yield* runToolCalls(this.toolPassContext(turn), round.round, pending, undefined, started);
      yield { type: 'iteration_end', iteration: 0 };
      return 'tools_done' as const;
    });
  }

  /** Whether `resume()` would do anything now. */
  canResume(): boolean {
    return this.history.unansweredToolCalls().length > 0 || this.history.awaitsModel();
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
  queueSteering(text: string, source?: MessageSource, id: string = randomUUID(), attachments?: IncomingFile[]): SteeringReceipt {
    this.steering.push({ id, text, ...(source ? { source } : {}), ...(attachments?.length ? { attachments } : {}) });
    return { id, state: this.active ? 'running' : 'idle' };
  }

  /** Whether a steering message with this id is already queued (a stored input queued once). */
  hasQueuedSteering(id: string): boolean {
    return this.steering.has(id);
  }

  /** The ids of the steering messages waiting to be taken, in order. */
  queuedSteeringIds(): string[] {
    return this.steering.ids();
  }

  /**
   * Steering no turn took: queued while idle, or arriving as a turn finished (or after it
   * was stopped). Call after every turn's event stream ends; a non-empty answer means
   * start the next turn with these messages.
   */
  takePendingSteering(): SteeringMessage[] {
    return this.steering.takeAll();
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
    if (!this.history.messages.some((m) => m.role !== 'system')) return null;
    let text = `Model switched to ${target}`;
    if (!capabilities.vision && hasImages(this.history.messages)) text += ' — earlier images cannot be seen by this model';
    await this.history.appendNotice('model_switch', text);
    return text;
  }

  /**
   * Answer the trailing unanswered tool calls without running them, and mark where with a
   * notice: a stop while a prompt waited but no turn ran (after a restart). Returns the
   * calls it answered. Refused mid-turn.
   */
  async closeUnansweredToolCalls(reason: string, notice?: { kind: NoticeKind; text: string }): Promise<ToolCall[]> {
    if (this.active) throw new EngineBusyError('cannot close tool calls');
    const calls = await this.history.answerUnanswered(reason);
    if (calls.length > 0 && notice) await this.history.appendNotice(notice.kind, notice.text);
    return calls;
  }

  /** Mark a place in the history for the user (an error a turn could not report itself). Refused mid-turn. */
  async recordNotice(kind: NoticeKind, text: string): Promise<void> {
    if (this.active) throw new EngineBusyError('cannot add a notice');
    await this.history.appendNotice(kind, text);
  }

  // ---- the turn ----------------------------------------------------------------------

  /**
   * Every runner goes through here: one turn at a time, reserved now (so a stop before the
   * first pull lands), a fresh stop signal per turn, exactly one `turn_end`, and the
   * no-orphan invariant kept even if the consumer walks away mid-turn or something throws.
   */
  private turn(kind: TurnKind, opening: Opening): AsyncIterable<EngineEvent> {
    if (this.active) throw new EngineBusyError(`cannot ${kind}`);
    const controller = new AbortController();
    // Each running tool, approval wait and stream race holds one listener on the turn
    // signal while it waits, so a wide batch of concurrent tools legitimately exceeds
    // Node's default warning threshold of 10. Leaks are still caught: every race releases
    // its listener (test/engine/stream-bridge.test.ts counts them).
    setMaxListeners(64, controller.signal);
    const turn: ActiveTurn = { kind, controller, signal: controller.signal, stop: new StopScope(controller.signal), iterations: 0, ended: false };
    this.active = turn;
    return this.drive(turn, opening);
  }

  private async *drive(turn: ActiveTurn, opening: Opening): AsyncGenerator<EngineEvent, void, undefined> {
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
      yield { type: 'turn_end', status, iterations: turn.iterations, pendingSteering: this.steering.size };
    } finally {
      if (!turn.ended) await this.abandon(turn);
      this.active = null;
    }
  }

  private async *loop(turn: ActiveTurn): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    for (;;) {
      if (turn.signal.aborted) return yield* this.endInterrupted(turn);
      if (turn.iterations >= this.maxIterations) {
        await this.history.appendNotice(
          'max_iterations',
          `Stopped after ${turn.iterations} model calls in this turn (the limit is ${this.maxIterations}). Continue to let it go on.`,
        );
        return 'max_iterations_exceeded';
      }

      let setting: ModelCallSetting;
      try {
        const provider = this.resolveProvider(this.currentModel);
        setting = { provider, capabilities: provider.capabilities(this.currentModel), model: this.currentModel, signal: turn.signal };
      } catch (error) {
        return yield* this.endFailed(turn, error, '', '');
      }

      const compaction = this.compacting.due(setting);
      if (compaction) yield* this.compacting.checkpoint(compaction);
      if (turn.signal.aborted) return yield* this.endInterrupted(turn);

      turn.iterations++;
      const outcome = yield* this.callModel(setting, turn.stop);
      if (outcome.kind === 'interrupted') {
        await this.history.appendPartial(outcome.text, outcome.reasoning);
        return yield* this.endInterrupted(turn);
      }
      if (outcome.kind === 'failed') {
        if (isContextOverflow(outcome.error) && !turn.signal.aborted) {
          if (yield* this.compacting.afterOverflow(setting)) continue;
        }
        return yield* this.endFailed(turn, outcome.error, outcome.text, outcome.reasoning);
      }

      // The answer, recorded: its tool calls are the round to run.
      const answer = outcome.turn;
      const recorded = recordableAnswer(answer, this.currentModel, this.history);
      if (answer.usage) this.compacting.noteUsage(answer.usage);
      await this.history.append(recorded.message);
      yield recorded.event;
      const pending = recorded.pending;
      if (pending.length === 0) {
        // The answer is whole even if a stop arrived as it finished: it stands.
        if (!turn.signal.aborted && this.steering.size > 0) {
          yield* this.steering.inject(this.history, this.prepareInput, turn.signal);
          continue;
        }
        return 'completed';
      }
      yield* runToolCalls(this.toolPassContext(turn), pending[0]!.call.id, pending, answer.finishReason);
      yield { type: 'iteration_end', iteration: turn.iterations };
      if (turn.signal.aborted) return yield* this.endInterrupted(turn);
      if (this.steering.size > 0) yield* this.steering.inject(this.history, this.prepareInput, turn.signal);
    }
  }

  /** The checkpoint after a tool round (a resumed one): stop, or take steering and go on. */
  private async *afterToolRound(turn: ActiveTurn): AsyncGenerator<EngineEvent, TurnEndStatus | 'continue', undefined> {
    if (turn.signal.aborted) return yield* this.endInterrupted(turn);
    yield* this.steering.inject(this.history, this.prepareInput, turn.signal);
    return 'continue';
  }

  private callModel(setting: ModelCallSetting, stop: StopScope) {
    const requester = this.history.turnRequester();
    return streamModel({
      provider: setting.provider,
      capabilities: setting.capabilities,
      model: setting.model,
      messages: this.history.messages,
      compactionState: this.compacting.state,
      contextProvider: this.contextProvider,
      sessionId: this.sessionId,
      pdfAdapter: this.pdfAdapter,
      attachmentView: this.attachmentView,
      tools: this.toolSchemas(),
      settings: this.modelSettings,
      stop,
      mask: this.maskOutput,
      maskStream: this.maskStream,
      meta: requester !== undefined ? { purpose: 'turn', requester } : TURN_META,
    });
  }

  // ---- endings -----------------------------------------------------------------------

  private async *endInterrupted(turn: ActiveTurn): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    await this.history.appendNotice('interrupted', 'Stopped by the user.');
    yield { type: 'interrupted', iterations: turn.iterations };
    return 'interrupted';
  }

  /** A failed model call: what the user watched arrive is kept, then an error notice. */
  private async *endFailed(turn: ActiveTurn, error: unknown, text: string, reasoning: string): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    await this.history.appendPartial(text, reasoning);
    if (turn.signal.aborted) return yield* this.endInterrupted(turn);
    if (error instanceof ProviderError && error.kind === 'budget') {
      // A spend limit paused the turn before the call was sent: a notice of its own, which
      // only an admin's Continue gets past (src/sessions/thread-controls.ts).
      const message = this.maskOutput(error.message);
      await this.history.appendNotice('budget', message);
      yield { type: 'error', message, errorKind: 'budget' };
      return 'error';
    }
    const described = isContextOverflow(error)
      ? { message: "The conversation no longer fits in the model's context, and compaction could not make room.", kind: 'context_overflow' }
      : describeProviderError(error);
    this.logger.warn({ err: error, kind: described.kind }, 'model call failed');
    // An SDK's error can quote a URL or a header: the notice reaches the thread.
    const message = this.maskOutput(described.message);
    await this.history.appendNotice('error', message);
    yield { type: 'error', message, errorKind: described.kind };
    return 'error';
  }

  /** A bug or a failing store must not kill the bot: report it, keep the history valid. */
  private async *failInternally(turn: ActiveTurn, error: unknown): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
    if (isWritesFenced(error)) {
      // This process may no longer write the session (the bot is shutting down): the store
      // keeps what was written before, which the next owner carries on from. Nothing to record.
      turn.controller.abort(error);
      this.logger.debug({ sessionId: this.sessionId }, 'turn left as it was: writes are fenced');
      return 'interrupted';
    }
    this.logger.error({ err: error }, 'turn failed unexpectedly');
    // A store's error can quote its connection URL, password included.
    const message = this.maskOutput(`Something went wrong inside the agent: ${error instanceof Error ? error.message : String(error)}`);
    try {
      await this.history.answerUnanswered('the turn failed before this call could run');
      await this.history.appendNotice('error', message);
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
      await this.history.answerUnanswered(INTERRUPTED_BY_USER);
      await this.history.appendNotice('interrupted', 'Stopped.');
    } catch (error) {
      if (!isWritesFenced(error)) this.logger.error({ err: error }, 'could not close an abandoned turn');
    }
  }

  // ---- wiring ------------------------------------------------------------------------

  private toolSchemas(): ToolSchema[] {
    const registered = this.registry.schemas();
    return this.interactiveSchemas.length > 0 ? [...registered, ...this.interactiveSchemas] : registered;
  }

  /** What this turn's tool rounds share, made once a turn; who asked is read again each round (steering adds people). */
  private toolPassContext(turn: ActiveTurn): ToolPassContext {
    const requesters = this.history.turnRequesters();
    if (turn.pass) {
      turn.pass.requesters = requesters;
      return turn.pass;
    }
    turn.pass = {
      sessionId: this.sessionId,
      stop: turn.stop,
      tools: this.registry,
      policy: this.policy,
      approver: this.approver,
      grants: this.grants,
      requesters,
      maxCallsPerResponse: this.maxToolCallsPerResponse,
      interactive: this.interactive,
      inbox: this.inbox,
      ledger: this.ledger,
      logger: this.logger,
      toolStopGraceMs: this.toolStopGraceMs,
      append: (message) => this.history.append(message),
      grantsChanged: () => this.onGrantsChanged?.(this.grants.snapshot()),
      mask: this.maskOutput,
      maxResultChars: this.maxResultChars,
    };
    return turn.pass;
  }
}

/** A turn's model call for no one in particular (no message named a person). */
const TURN_META: CallMeta = { purpose: 'turn' };
