// Who decides whether a tool call runs. A policy answers allow / deny / needs_user per call;
// `needs_user` goes to the injected approver, an async function that may wait for a human
// for as long as it takes (a button in a Slack thread). The default approver denies
// everything, so an engine built without one never lets a risky call through.
import type { ApprovalVia, ToolDefinition, ToolMetadata } from './tools.js';

/**
 * `always_tool` / `always_command` remember a grant for the turns its giver requests;
 * `…_all` for everyone's turns in the grant's scope (an admin's choice: the session layer
 * checks who may pick it).
 */
export const APPROVAL_OUTCOMES = [
  'once',
  'always_tool',
  'always_command',
  'always_tool_all',
  'always_command_all',
  'deny',
] as const;
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number];

/** @internal */
export interface PermissionRequest {
  toolName: string;
  arguments: Record<string, unknown>;
  metadata: ToolMetadata | undefined;
  reason: string;
  /** The durable key of this prompt: unique within the session, stable across restarts. */
  toolCallId: string;
  sessionId: string;
  /** What an `always_command` grant would cover (shell tools only). */
  command?: string;
  /** Aborted when the turn is stopped: close the card, resolve the prompt as interrupted. */
  signal: AbortSignal;
}

/**
 * An approver's answer: an outcome, optionally with a note the model reads in the tool
 * result (e.g. a denial because "the user replied instead of approving: use staging").
 */
export interface ApprovalDecision {
  outcome: ApprovalOutcome;
  note?: string;
  /** Who answered: an "always" answer becomes a grant that person owns. */
  by?: string;
}

export type Approver = (request: PermissionRequest) => Promise<ApprovalOutcome | ApprovalDecision>;

/** Either answer shape, normalised; anything outside the vocabulary is a denial (fail closed). */
export function normaliseApproval(answer: unknown): ApprovalDecision {
  if (typeof answer === 'string') {
    return (APPROVAL_OUTCOMES as readonly string[]).includes(answer)
      ? { outcome: answer as ApprovalOutcome }
      : { outcome: 'deny' };
  }
  if (answer !== null && typeof answer === 'object' && 'outcome' in answer) {
    const { outcome, note, by } = answer as { outcome: unknown; note?: unknown; by?: unknown };
    const decision = normaliseApproval(outcome);
    if (typeof note === 'string' && note.trim()) decision.note = note;
    if (typeof by === 'string' && by) decision.by = by;
    return decision;
  }
  return { outcome: 'deny' };
}

export const denyAll: Approver = async () => 'deny';

/**
 * Whose turns a grant covers. A grant belongs to the person who gave it and covers the turns
 * that person requests; `everyone` (an admin's grant) covers every turn in its scope. A grant
 * with no giver comes from an approver that names nobody (a library user's own approver, or a
 * store written before grants had owners): it covers only turns whose requesters are unnamed
 * too, so in a chat, where every message has an author, it covers nothing.
 */
export interface GrantOwner {
  by?: string;
  everyone?: boolean;
}
export interface ToolGrant extends GrantOwner {
  tool: string;
}
export interface CommandGrant extends GrantOwner {
  tool: string;
  command: string;
}

/** "Always" decisions remembered for the session; serialisable so a store can keep them. */
export interface GrantsSnapshot {
  tools: ToolGrant[];
  commands: CommandGrant[];
}

/**
 * Who asked for the turn a call belongs to: the author of every user message in it (the one
 * that started it and any steering since). `undefined` is a message with no known author.
 */
export type Requesters = readonly (string | undefined)[];

/** Whether a grant covers a turn: everyone's, or one only its giver asked for. */
function grantCovers(owner: GrantOwner, requesters: Requesters): boolean {
  if (owner.everyone) return true;
  return requesters.length > 0 && requesters.every((requester) => requester === owner.by);
}

export class SessionGrants {
  private tools: ToolGrant[] = [];
  private commands: CommandGrant[] = [];

  constructor(snapshot?: GrantsSnapshot) {
    for (const grant of snapshot?.tools ?? []) this.allowTool(grant.tool, grant);
    for (const grant of snapshot?.commands ?? []) this.allowCommand(grant.tool, grant.command, grant);
  }

  allowTool(tool: string, owner: GrantOwner = {}): void {
    const grant = withOwner({ tool }, owner);
    if (!this.tools.some((known) => known.tool === tool && sameOwner(known, grant))) this.tools.push(grant);
  }

  allowCommand(tool: string, command: string, owner: GrantOwner = {}): void {
    const grant = withOwner({ tool, command }, owner);
    if (!this.commands.some((known) => known.tool === tool && known.command === command && sameOwner(known, grant)))
      this.commands.push(grant);
  }

  /** The grant that lets this turn's requesters use the tool, if one does. */
  coversTool(tool: string, requesters: Requesters = [undefined]): ToolGrant | undefined {
    return this.tools.find((grant) => grant.tool === tool && grantCovers(grant, requesters));
  }

  coversCommand(
    tool: string,
    command: string | undefined,
    requesters: Requesters = [undefined],
  ): CommandGrant | undefined {
    if (command === undefined) return undefined;
    return this.commands.find(
      (grant) => grant.tool === tool && grant.command === command && grantCovers(grant, requesters),
    );
  }

  snapshot(): GrantsSnapshot {
    return { tools: this.tools.map((grant) => ({ ...grant })), commands: this.commands.map((grant) => ({ ...grant })) };
  }
}

function withOwner<T extends object>(grant: T, owner: GrantOwner): T & GrantOwner {
  return {
    ...grant,
    ...(owner.by !== undefined ? { by: owner.by } : {}),
    ...(owner.everyone ? { everyone: true } : {}),
  };
}

function sameOwner(a: GrantOwner, b: GrantOwner): boolean {
  return a.by === b.by && Boolean(a.everyone) === Boolean(b.everyone);
}

export type PolicyDecision =
  /** `via` defaults to `policy`. */
  | { decision: 'allow'; reason?: string; via?: Exclude<ApprovalVia, 'human'> }
  | { decision: 'deny'; reason: string }
  | { decision: 'needs_user'; reason: string };

export interface PolicyInput {
  tool: ToolDefinition;
  arguments: Record<string, unknown>;
  command: string | undefined;
  grants: SessionGrants;
  /** Who asked for this turn: a grant covers it only if it belongs to them (or everyone). */
  requesters: Requesters;
}

export interface PermissionPolicy {
  evaluate(input: PolicyInput): PolicyDecision | Promise<PolicyDecision>;
}

/**
 * The simple policy the engine ships with: low-risk tools that do not insist on approval
 * run; everything else asks, unless an "always" grant for the session covers it. The real
 * policy (modes, allow-lists, workspace confinement) comes with the permissions layer.
 */
export const riskBasedPolicy: PermissionPolicy = {
  evaluate({ tool, command, grants, requesters }) {
    const metadata = tool.metadata;
    if (metadata?.risk === 'low' && metadata.requiresApproval !== true) return { decision: 'allow' };
    if (grants.coversTool(tool.name, requesters)) return { decision: 'allow', reason: `always allowed: ${tool.name}` };
    if (grants.coversCommand(tool.name, command, requesters))
      return { decision: 'allow', reason: `always allowed: ${command}` };
    if (!metadata) return { decision: 'needs_user', reason: `${tool.name} declares no risk level` };
    if (metadata.requiresApproval) return { decision: 'needs_user', reason: `${tool.name} always asks` };
    return { decision: 'needs_user', reason: `${tool.name} is ${metadata.risk}-risk` };
  },
};
