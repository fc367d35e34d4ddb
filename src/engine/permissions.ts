// Who decides whether a tool call runs. A policy answers allow / deny / needs_user per call;
// `needs_user` goes to the injected approver, an async function that may wait for a human
// for as long as it takes (a button in a Slack thread). The default approver denies
// everything, so an engine built without one never lets a risky call through.
import type { ToolDefinition, ToolMetadata } from './tools.js';

export const APPROVAL_OUTCOMES = ['once', 'always_tool', 'always_command', 'deny'] as const;
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number];

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
}

export type Approver = (request: PermissionRequest) => Promise<ApprovalOutcome | ApprovalDecision>;

/** Either answer shape, normalised; anything outside the vocabulary is a denial (fail closed). */
export function normaliseApproval(answer: unknown): ApprovalDecision {
  if (typeof answer === 'string') {
    return (APPROVAL_OUTCOMES as readonly string[]).includes(answer) ? { outcome: answer as ApprovalOutcome } : { outcome: 'deny' };
  }
  if (answer !== null && typeof answer === 'object' && 'outcome' in answer) {
    const { outcome, note } = answer as { outcome: unknown; note?: unknown };
    const decision = normaliseApproval(outcome);
    if (typeof note === 'string' && note.trim()) decision.note = note;
    return decision;
  }
  return { outcome: 'deny' };
}

export const denyAll: Approver = async () => 'deny';

/** "Always" decisions remembered for the session; serialisable so a store can keep them. */
export interface GrantsSnapshot {
  tools: string[];
  commands: { tool: string; command: string }[];
}

export class SessionGrants {
  private readonly tools = new Set<string>();
  private readonly commands = new Set<string>();

  constructor(snapshot?: GrantsSnapshot) {
    for (const tool of snapshot?.tools ?? []) this.tools.add(tool);
    for (const { tool, command } of snapshot?.commands ?? []) this.commands.add(commandKey(tool, command));
  }

  allowTool(tool: string): void {
    this.tools.add(tool);
  }

  allowCommand(tool: string, command: string): void {
    this.commands.add(commandKey(tool, command));
  }

  coversTool(tool: string): boolean {
    return this.tools.has(tool);
  }

  coversCommand(tool: string, command: string | undefined): boolean {
    return command !== undefined && this.commands.has(commandKey(tool, command));
  }

  revokeTool(tool: string): boolean {
    return this.tools.delete(tool);
  }

  revokeCommand(tool: string, command: string): boolean {
    return this.commands.delete(commandKey(tool, command));
  }

  snapshot(): GrantsSnapshot {
    return {
      tools: [...this.tools],
      commands: [...this.commands].map((key) => {
        const [tool, command] = JSON.parse(key) as [string, string];
        return { tool, command };
      }),
    };
  }
}

function commandKey(tool: string, command: string): string {
  return JSON.stringify([tool, command]);
}

export type PolicyDecision =
  | { decision: 'allow'; reason?: string }
  | { decision: 'deny'; reason: string }
  | { decision: 'needs_user'; reason: string };

export interface PolicyInput {
  tool: ToolDefinition;
  arguments: Record<string, unknown>;
  command: string | undefined;
  grants: SessionGrants;
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
  evaluate({ tool, command, grants }) {
    const metadata = tool.metadata;
    if (metadata?.risk === 'low' && metadata.requiresApproval !== true) return { decision: 'allow' };
    if (grants.coversTool(tool.name)) return { decision: 'allow', reason: `always allowed: ${tool.name}` };
    if (grants.coversCommand(tool.name, command)) return { decision: 'allow', reason: `always allowed: ${command}` };
    if (!metadata) return { decision: 'needs_user', reason: `${tool.name} declares no risk level` };
    if (metadata.requiresApproval) return { decision: 'needs_user', reason: `${tool.name} always asks` };
    return { decision: 'needs_user', reason: `${tool.name} is ${metadata.risk}-risk` };
  },
};
