// What one round of tool calls is given (tool-calls.ts runs it; tool-approval.ts and
// tool-invocation.ts each take one pass): the turn's collaborators and bounds, and the calls.
import type { StopScope } from './abort.js';
import type { InboxLookup } from './inbox.js';
import type { InteractiveCallbacks } from './interactive.js';
import type { EngineLogger } from './logger.js';
import type { ToolCall, ToolMessage } from './messages.js';
import type { OutputMask } from './output-masks.js';
import type { Approver, PermissionPolicy, Requesters, SessionGrants } from './permissions.js';
import type { ParsedArguments } from './tool-arguments.js';
import type { ToolLedger } from './tool-ledger.js';
import type { ToolDefinition } from './tools.js';

export interface ToolPassContext {
  sessionId: string;
  /** The turn's stop. */
  stop: StopScope;
  tools: { get(name: string): ToolDefinition | undefined; names(): string[] };
  policy: PermissionPolicy;
  approver: Approver;
  grants: SessionGrants;
  /** Who asked for this turn (history.turnRequesters): whose grants may cover its calls. */
  requesters: Requesters;
  /** At most this many calls of one model response run; the rest are answered with an error. */
  maxCallsPerResponse?: number;
  interactive: InteractiveCallbacks;
  inbox: InboxLookup | undefined;
  logger: EngineLogger;
  /** How long a stopped tool may take to wind down before the turn stops waiting. */
  toolStopGraceMs: number;
  /** Where starts are recorded before tools run. */
  ledger: ToolLedger;
  append(message: ToolMessage): Promise<void>;
  grantsChanged(): void | Promise<void>;
  /** Applied to every result (content and display) before anything else sees it. */
  mask: OutputMask;
  /** The most characters a tool message's content may have, as sent (default 24,000). */
  maxResultChars?: number;
}

export interface PendingToolCall {
  call: ToolCall;
  args: ParsedArguments;
}
