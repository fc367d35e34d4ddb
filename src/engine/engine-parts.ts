// What a turn engine is made of once its options are resolved, and what one running turn
// holds: the loop (turn-loop.ts) and the endings (turn-endings.ts) both work on these.
import type { StopScope } from './abort.js';
import type { CompactionRunner } from './compaction-runner.js';
import type { ContextProvider } from './engine-options.js';
import type { TurnKind } from './events.js';
import type { History } from './history.js';
import type { InboxLookup } from './inbox.js';
import type { InteractiveCallbacks } from './interactive.js';
import type { EngineLogger } from './logger.js';
import type { OutputMask, StreamMask } from './output-masks.js';
import type { AttachmentView, PdfAdapter } from './outbound.js';
import type { Approver, GrantsSnapshot, PermissionPolicy, SessionGrants } from './permissions.js';
import type { ProviderResolver, ToolSchema } from './provider.js';
import type { InputPreparer, SteeringQueue } from './steering.js';
import type { ToolPassContext } from './tool-pass.js';
import type { ToolLedger } from './tool-ledger.js';
import type { ToolRegistry } from './tools.js';

/** One engine's collaborators and state, resolved from its options (defaults filled in). */
export interface EngineParts {
  readonly sessionId: string;
  readonly history: History;
  /** The model the next call uses: `switchModel` rebinds it between turns. */
  model: string;
  readonly resolveProvider: ProviderResolver;
  readonly registry: ToolRegistry;
  readonly interactiveSchemas: ToolSchema[];
  readonly steering: SteeringQueue;
  readonly compacting: CompactionRunner;
  readonly grants: SessionGrants;
  readonly modelSettings: Record<string, unknown> | undefined;
  readonly maxIterations: number;
  readonly maxToolCallsPerResponse: number;
  readonly maxResultChars: number;
  readonly toolStopGraceMs: number;
  readonly policy: PermissionPolicy;
  readonly approver: Approver;
  readonly interactive: InteractiveCallbacks;
  readonly inbox: InboxLookup | undefined;
  readonly ledger: ToolLedger;
  readonly contextProvider: ContextProvider | undefined;
  readonly pdfAdapter: PdfAdapter | undefined;
  readonly prepareInput: InputPreparer;
  readonly attachmentView: AttachmentView | undefined;
  readonly maskOutput: OutputMask;
  readonly maskStream: () => StreamMask;
  readonly logger: EngineLogger;
  readonly onGrantsChanged: ((grants: GrantsSnapshot) => void | Promise<void>) | undefined;
}

export interface ActiveTurn {
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
