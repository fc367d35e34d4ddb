// A session as it lives in memory: its stored record, its engine rebuilt from the stored
// transcript, and the state of its running turn. Building one is the only place that
// wires the engine's persistence hooks to the store, so every append is a checkpoint:
// the user message before the model is called, each assistant message and each tool
// result as they come, and each tool start in the ledger before the tool runs.
import {
  INTERACTIVE_TOOLS,
  approverFromInbox,
  interactiveFromInbox,
  SessionGrants,
  TurnEngine,
  type Compactor,
  type ContextProvider,
  type DirectoryDecision,
  type EngineLogger,
  type GrantsSnapshot,
  type InteractiveCallbacks,
  type InterruptHook,
  type OutputMask,
  type StreamMask,
  type PermissionPolicy,
  type Provider,
  type ProviderResolver,
  type ToolDefinition,
  type ToolLedger,
  type InputPreparer,
  type AttachmentView,
  type InboxPort,
} from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { SessionRecord, SessionStore } from '../store/session-store.js';
import type { CountedStart } from './fair-use.js';

/** What the application supplies for each session's engine. */
export interface EngineSetup {
  provider: Provider | ProviderResolver;
  tools: ToolDefinition[];
  policy?: PermissionPolicy;
  compactor?: Compactor;
  instructions?: string;
  maxIterations?: number;
  maxToolCallsPerResponse?: number;
  interruptHooks?: InterruptHook[];
  contextProvider?: ContextProvider;
  logger?: EngineLogger;
  /** Masks the configured secrets in tool results and answers before history, events and logs see them. */
  maskOutput?: OutputMask;
  /** The same for the model's streamed deltas (a secret split across two is still masked). */
  maskStream?: () => StreamMask;
  /** Fetches the files a message carries into the conversation's folder (src/files/). */
  prepareInput?: InputPreparer;
  /** Makes shared-file references into model input at each call (src/files/attachment-view.ts). */
  attachmentView?: AttachmentView;
  /**
   * The tools a profile offers here (src/profiles/), by name: the engine's own interactive
   * tools (ask_user, propose_plan, request_directory) are offered only when listed. Undefined:
   * all of them. (Registered tools are filtered by whoever builds `tools`.)
   */
  offeredTools?: ReadonlySet<string>;
  /** Release per-session resources (a shell) when the session is evicted. */
  dispose?: () => Promise<void>;
  /**
   * Let the tools work in a directory a person granted (request_directory); returns its
   * real path. Without it, request_directory is not offered: a grant must mean something.
   */
  grantDirectory?: (dir: string) => string | Promise<string>;
  /** Why a folder would be refused (the bot's own files, home, `/`), checked before anyone is asked. */
  grantRefusal?: (dir: string) => string | null;
  /** What the card shows for a grantable folder: its real path and what becomes writable. */
  grantPreview?: (dir: string) => { path: string; accessText: string };
}

export type EngineSetupFactory = (session: SessionRecord) => EngineSetup | Promise<EngineSetup>;

/** Where "always" grants are kept: this thread only (default) or the whole channel. */
export type GrantScope = 'thread' | 'channel';

export interface LiveSession {
  record: SessionRecord;
  engine: TurnEngine;
  setup: EngineSetup;
  /** The running turn's driver, while one runs. */
  turn: Promise<void> | null;
  /** The pending input a `run()` was started with (removed from the store at turn_start). */
  startedWith: string | undefined;
  /**
   * Set when a stop lands: the replies queued at that instant, which are not run after the
   * stop (running them would undo it). A reply that arrives after the stop, while the
   * stopped turn winds down, is not in it: it starts the next turn. Cleared when a turn starts.
   */
  stoppedWith: ReadonlySet<string> | undefined;
  /**
   * Who stopped the running turn (a person's id, or BOT_ITSELF): the prompts the stop closes
   * are recorded as closed by them, so a later click on such a card is told who stopped it.
   * Cleared when a turn starts.
   */
  stoppedBy?: string;
  /**
   * The running turn has done its work (its last note, with any Retry or Continue button, is
   * out) and only winds down: a button click or command waits for it (turn-wind-down.ts).
   * Cleared when a turn starts.
   */
  windingDown?: boolean;
  lastUsed: number;
  /**
   * The start fair use counted for the running turn (fair-use.ts): whose thread this is while
   * it works. Handed back when the session goes idle (session-manager.ts).
   */
  countedStart?: CountedStart;
  /**
   * This instance lost the session (cluster mode: another instance owns it now). A turn still
   * running here records nothing (its writes are fenced) and shows nothing.
   */
  fenced?: boolean;
  /** The profiles' version its setup was built from (live-sessions.ts rebuilds an idle one that is out of date). */
  setupVersion?: number;
}

export async function buildLiveSession(input: {
  record: SessionRecord;
  store: SessionStore;
  inbox: PersistentInbox;
  ledger: ToolLedger;
  setup: EngineSetup;
  grantScope: GrantScope;
}): Promise<LiveSession> {
  const { record, store, inbox, ledger, setup, grantScope } = input;
  const messages = await store.loadTranscript(record.id);
  for (const dir of record.directories) {
    try {
      await setup.grantDirectory?.(dir);
    } catch {
      // The directory is gone since it was granted: the tools simply cannot reach it.
    }
  }
  const channelGrants = await store.getChannelGrants(record.key);
  const live: LiveSession = {
    record,
    setup,
    turn: null,
    startedWith: undefined,
    stoppedWith: undefined,
    lastUsed: Date.now(),
    engine: undefined as unknown as TurnEngine,
  };
  live.engine = new TurnEngine({
    provider: setup.provider,
    model: record.model,
    sessionId: record.id,
    // The system prompt is not stored with the transcript: it always comes from the current
    // configuration, inserted first on every rebuild (so indices, e.g. the compaction
    // boundary, stay stable while the configuration keeps a prompt).
    instructions: setup.instructions,
    messages,
    tools: setup.tools,
    compactionState: record.compaction,
    grants: mergeGrants(record.grants, channelGrants),
    limits: { maxIterations: setup.maxIterations, maxToolCallsPerResponse: setup.maxToolCallsPerResponse },
    ports: {
      policy: setup.policy,
      compactor: setup.compactor,
      contextProvider: setup.contextProvider,
      logger: setup.logger,
      maskOutput: setup.maskOutput,
      maskStream: setup.maskStream,
      ...(setup.prepareInput ? { prepareInput: setup.prepareInput } : {}),
      ...(setup.attachmentView ? { attachmentView: setup.attachmentView } : {}),
      inbox,
      ledger,
      approver: approverFromInbox(closedByStopper(inbox, live)),
      interactive: interactiveCallbacks(
        offeredInteractive(interactiveFromInbox(closedByStopper(inbox, live)), setup.offeredTools),
        setup,
        async (dir) => {
          live.record = { ...live.record, directories: [...new Set([...live.record.directories, dir])] };
          await store.saveSession(live.record);
        },
      ),
    },
    hooks: {
      onInterrupt: setup.interruptHooks,
      onAppend: async (message) => {
        await store.appendMessage(record.id, message);
      },
      onGrantsChanged: async (grants) => {
        if (grantScope === 'channel') {
          await store.setChannelGrants(record.key, grants);
        } else {
          live.record = { ...live.record, grants };
          await store.saveSession(live.record);
        }
      },
      onCompactionChanged: async (compaction) => {
        live.record = { ...live.record, compaction };
        await store.saveSession(live.record);
      },
    },
  });
  return live;
}

/** The thread's grants and the channel's, as one snapshot (SessionGrants drops repeats). */
function mergeGrants(a: GrantsSnapshot, b: GrantsSnapshot): GrantsSnapshot {
  return new SessionGrants({ tools: [...a.tools, ...b.tools], commands: [...a.commands, ...b.commands] }).snapshot();
}

/** Without its callback an interactive tool is neither offered nor answered: a profile that leaves it out removes it. */
function offeredInteractive(
  base: InteractiveCallbacks,
  offered: ReadonlySet<string> | undefined,
): InteractiveCallbacks {
  if (!offered) return base;
  const { askUser, proposePlan, requestDirectory, ...rest } = base;
  return {
    ...rest,
    ...(askUser && offered.has('ask_user') ? { askUser } : {}),
    ...(proposePlan && offered.has('propose_plan') ? { proposePlan } : {}),
    ...(requestDirectory && offered.has('request_directory') ? { requestDirectory } : {}),
  };
}

/** request_directory is offered only when a grant takes effect, and a grant is remembered. */
function interactiveCallbacks(
  base: InteractiveCallbacks,
  setup: EngineSetup,
  remember: (dir: string) => Promise<void>,
): InteractiveCallbacks {
  const { requestDirectory, ...rest } = base;
  const grant = setup.grantDirectory;
  if (!requestDirectory || !grant) return rest;
  /** Grant the folder the card showed (`shown`: its real path when a preview was shown). */
  const grantShown = async (shown: string): Promise<DirectoryDecision> => {
    try {
      // grant() checks again: the folder may have changed (a symlink swapped) since the question.
      const real = await grant(shown);
      // The card showed the real path: a folder that resolves elsewhere now is not the one granted.
      if (setup.grantPreview && real !== shown)
        throw new Error(`it now leads to ${real}, not the folder that was shown`);
      await remember(real);
      return { granted: true, path: real };
    } catch (error) {
      return { granted: false, path: `${shown} (${error instanceof Error ? error.message : String(error)})` };
    }
  };
  return {
    ...rest,
    ...(setup.grantRefusal ? { directoryRefusal: setup.grantRefusal } : {}),
    ...(setup.grantPreview ? { directoryPreview: directoryPreviewOf(setup.grantPreview) } : {}),
    requestDirectory: async (request) => {
      const decision = await requestDirectory(request);
      return decision.granted ? grantShown(request.path) : decision;
    },
    grantAnswered: grantShown,
  };
}

/**
 * The arguments of an interactive call as its card shows them (a directory request: the real
 * path and its access), for a prompt redrawn after a restart as the engine first drew it.
 */
export function shownInteraction(setup: EngineSetup, tool: string, args: unknown): unknown {
  const spec = Object.hasOwn(INTERACTIVE_TOOLS, tool) ? INTERACTIVE_TOOLS[tool] : undefined;
  if (!spec?.shown || !setup.grantPreview || typeof args !== 'object' || args === null || Array.isArray(args))
    return args;
  const parsed = spec.schema.safeParse(args);
  return parsed.success ? spec.shown({ directoryPreview: directoryPreviewOf(setup.grantPreview) }, parsed.data) : args;
}

/** The preview for the card; a folder that vanished since the refusal check is shown as the model wrote it. */
function directoryPreviewOf(
  preview: NonNullable<EngineSetup['grantPreview']>,
): (dir: string) => { path: string; access: string } | undefined {
  return (dir) => {
    try {
      const shown = preview(dir);
      return { path: shown.path, access: shown.accessText };
    } catch {
      return undefined;
    }
  };
}

/**
 * A stop landed on this session (by `by`): what is queued now is dropped with the stopped
 * turn, what comes later is not; the prompts it closes are closed by `by`.
 */
export function markStopped(live: LiveSession, by: string): void {
  live.stoppedWith = new Set([...(live.stoppedWith ?? []), ...live.engine.queuedSteeringIds()]);
  live.stoppedBy = by;
}

/**
 * The inbox as the engine's prompts use it, with one difference: a prompt a stop closes
 * (the engine resolves it as interrupted, knowing no person) is recorded as closed by whoever
 * stopped the turn, so a click on its card later is told who that was.
 */
function closedByStopper(inbox: PersistentInbox, live: LiveSession): InboxPort {
  return {
    open: (input) => inbox.open(input),
    lookup: (sessionId, toolCallId) => inbox.lookup(sessionId, toolCallId),
    wait: (itemId, signal) => inbox.wait(itemId, signal),
    resolve: (itemId, resolution, resolvedBy) =>
      inbox.resolve(itemId, resolution, resolvedBy ?? (resolution.kind === 'interrupted' ? live.stoppedBy : undefined)),
  };
}
