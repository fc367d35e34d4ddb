// The permission policy the engine consults before every tool call: allow, deny, or ask
// a human (`needs_user`).
//
// One idea: the mode sets the ceiling, the risk class sets the default, and only then do
// remembered grants and the shell allow-list lift a call from "ask" to "allow". Nothing
// lifts a call past the ceiling: in read-only mode a grant from earlier in the session does
// not let a write through. Reasons are written for the person reading the approval card.
// A call the allow-list lets through is marked `via: 'allowlist'`: nobody looked at it, so
// the shell runs it with a hardened git (src/tools/hardened-git.ts).
import type { GrantOwner, PermissionPolicy, PolicyDecision, PolicyInput } from '../engine/index.js';
import { parsePermissionMode, type PermissionMode, DEFAULT_PERMISSION_MODE } from './permission-mode.js';
import { classifyTool, describeRisk, type ClassifiedTool } from './risk-class.js';
import { createShellAllowList, type ShellAllowList } from './shell-allowlist.js';

export interface PermissionPolicyOptions {
  /** Default `interactive`. Parsed again here, so a raw config string cannot slip through. */
  mode?: PermissionMode;
  /**
   * Shell commands that run without asking in interactive mode: exact argv, or an entry
   * ending in ` *` for plain extra arguments (shell-allowlist.ts).
   */
  shellAllowList?: readonly string[];
  /** The shell's workspace: absolute paths inside it may be extra arguments of ` *` entries. */
  workspaceDir?: string;
  /**
   * GRANT_SCOPE: where an "always" answer applies (default the thread). The reasons say it in
   * the words of the card's buttons ("… for me in this thread"): a card that said "for this
   * session" above a button saying "in this thread" left the reader guessing which it was.
   */
  grantScope?: 'thread' | 'channel';
}

export interface ConfiguredPermissionPolicy extends PermissionPolicy {
  readonly mode: PermissionMode;
  readonly shellAllowList: ShellAllowList;
  evaluate(input: PolicyInput): PolicyDecision;
}

export function createPermissionPolicy(options: PermissionPolicyOptions = {}): ConfiguredPermissionPolicy {
  const mode = parsePermissionMode(options.mode ?? DEFAULT_PERMISSION_MODE);
  const shellAllowList = createShellAllowList(options.shellAllowList ?? [], { workspaceRoot: options.workspaceDir });
  const where = options.grantScope === 'channel' ? 'in this channel' : 'in this thread';
  return {
    mode,
    shellAllowList,
    evaluate(input) {
      const classified = classifyTool(input.tool.metadata);
      switch (mode) {
        case 'auto':
          // Even a tool that requires approval: whoever chose auto chose not to be asked.
          // File tools stay confined to the workspace by themselves; the mode only stops asking.
          return { decision: 'allow', reason: `auto mode: ${input.tool.name} runs without asking` };
        case 'read-only':
          if (classified.riskClass !== 'read') {
            return {
              decision: 'deny',
              reason: `read-only mode: ${input.tool.name} is not allowed: it ${describeRisk(classified)}, and only tools that read run in this mode`,
            };
          }
          // A read is judged as in interactive mode: a tool that insists on approval still asks.
          return decideInteractively(input, classified, shellAllowList, where);
        case 'interactive':
          return decideInteractively(input, classified, shellAllowList, where);
      }
    },
  };
}

function decideInteractively(
  { tool, command, grants, requesters }: PolicyInput,
  classified: ClassifiedTool,
  shellAllowList: ShellAllowList,
  /** Where a grant applies, as the card's buttons say it: `in this thread` or `in this channel`. */
  where: string,
): PolicyDecision {
  const insists = tool.metadata?.requiresApproval === true;
  if (classified.riskClass === 'read' && !insists) return { decision: 'allow', reason: `${tool.name} only reads` };

  // A grant is a human's own "always", so it also covers a tool that insists on approval:
  // the person it would ask has already answered. It covers only the turns its giver asked
  // for (or everyone's, when an admin said so): never a turn someone else steered.
  const toolGrant = grants.coversTool(tool.name, requesters);
  if (toolGrant) return { decision: 'allow', reason: `always allowed ${grantedBy(toolGrant, where)}: ${tool.name}` };
  const commandGrant = grants.coversCommand(tool.name, command, requesters);
  if (commandGrant)
    return {
      decision: 'allow',
      reason: `always allowed ${grantedBy(commandGrant, where)}: ${tool.name} \`${command}\``,
    };

  if (insists) {
    return { decision: 'needs_user', reason: `${tool.name} asks before every call: the tool requires approval` };
  }
  const risk = `${tool.name} ${describeRisk(classified)}`;
  if (classified.riskClass !== 'exec') {
    return { decision: 'needs_user', reason: `${risk}: asks unless always allowed ${where}` };
  }
  if (command === undefined) {
    return { decision: 'needs_user', reason: `${risk}: asks (it names no command the allow-list could match)` };
  }
  const verdict = shellAllowList.check(command);
  if (verdict.allowed)
    return { decision: 'allow', reason: `allow-listed: \`${command}\` matches \`${verdict.entry}\``, via: 'allowlist' };
  return { decision: 'needs_user', reason: `${risk}: asks unless allow-listed — ${verdict.reason}` };
}

function grantedBy(grant: GrantOwner, where: string): string {
  if (grant.everyone) return grant.by ? `for everyone by ${grant.by}` : 'for everyone';
  return grant.by ? `by ${grant.by}` : where;
}
