// What a TurnEngine is built from, and the defaults it falls back on.
//
// The essentials sit at the top level: the provider and model, the session's id, its prompt,
// tools and what it restores (history, grants, compaction). The rest is grouped by what a field
// is, so a caller reads at a glance what it hands over:
//   limits: numeric bounds and budgets the loop holds a turn to;
//   ports:  collaborators the engine asks and awaits an answer from (permission gate,
//           approver, inbox, ledger, compactor, input and output transforms, logger);
//   hooks:  callbacks it tells what happened (a message appended, grants or compaction
//           changed, a stop requested) and whose answer it does not use.
import type { CompactionState, Compactor } from './compaction.js';
import type { InboxLookup } from './inbox.js';
import type { InteractiveCallbacks } from './interactive.js';
import type { EngineLogger } from './logger.js';
import type { Message } from './messages.js';
import type { AttachmentView, PdfAdapter } from './outbound.js';
import type { Approver, GrantsSnapshot, PermissionPolicy } from './permissions.js';
import type { Provider, ProviderResolver } from './provider.js';
import type { InputPreparer } from './steering.js';
import type { OutputMask, StreamMask } from './output-masks.js';
import type { ToolLedger } from './tool-ledger.js';
import type { ToolDefinition, ToolRegistry } from './tools.js';

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
  /** Passed to the provider with every model call (temperature and the like). */
  modelSettings?: Record<string, unknown>;
  /** The session's standing grants, restored. */
  grants?: GrantsSnapshot;
  /** The session's compaction, restored. */
  compactionState?: CompactionState | null;
  limits?: TurnLimits;
  ports?: TurnPorts;
  hooks?: TurnHooks;
}

/** The numeric bounds a turn is held to. */
interface TurnLimits {
  /** Model calls allowed per user turn (default 12). */
  maxIterations?: number;
  /** At most this many tool calls of one model response run (default 20); the rest get an error result. */
  maxToolCallsPerResponse?: number;
  /**
   * The most characters a tool message's content may have as the model reads it, JSON escapes
   * included (default 24,000: the tools' 20,000 plus room for their JSON). Longer is trimmed,
   * with a note, by result-cap.ts.
   */
  maxResultChars?: number;
  /** How long a stopped tool may take to wind down before the turn stops waiting (default 50 ms). */
  toolStopGraceMs?: number;
}

/** The collaborators the engine asks, each with a default that keeps a bare engine safe. */
interface TurnPorts {
  /** Decides whether a tool call runs, asks, or is refused (default: by the tool's risk). */
  policy?: PermissionPolicy;
  /** Asks a person to approve a call the policy will not allow alone (default: refuses). */
  approver?: Approver;
  interactive?: InteractiveCallbacks;
  /** Answers given before a restart, keyed by (session, tool_call_id). */
  inbox?: InboxLookup;
  /**
   * Where tool starts are recorded before tools run. Default: in memory, which a crash takes
   * with it; a session that must survive restarts passes a durable one.
   */
  ledger?: ToolLedger;
  compactor?: Compactor;
  contextProvider?: ContextProvider;
  pdfAdapter?: PdfAdapter;
  /** Fetches the files a message carries and makes its user content (src/files/); default: names them only. */
  prepareInput?: InputPreparer;
  /** Turns a shared-file reference into what the active model can take, at each call (src/files/attachment-view.ts). */
  attachmentView?: AttachmentView;
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
  logger?: EngineLogger;
}

/** What the engine reports as it happens. */
interface TurnHooks {
  /** Called (and awaited) for every message appended: the persistence checkpoint. */
  onAppend?: (message: Message, index: number) => void | Promise<void>;
  onGrantsChanged?: (grants: GrantsSnapshot) => void | Promise<void>;
  onCompactionChanged?: (state: CompactionState | null) => void | Promise<void>;
  /** Called at each stop request, best effort (more are added with `addInterruptHook`). */
  onInterrupt?: InterruptHook[];
}
