// The permission policy the engine consults before every tool call: allow, deny, or ask
// a human (`needs_user`).
//
// One idea: the mode sets the ceiling, the risk class sets the default, and only then do
// remembered grants and the shell allow-list lift a call from "ask" to "allow". Nothing
// lifts a call past the ceiling: in read-only mode a grant from earlier in the session does
// not let a write through. Reasons are written for the person reading the approval card.
import type { PermissionPolicy, PolicyDecision, PolicyInput } from '../engine/index.js';
import { parsePermissionMode, type PermissionMode, DEFAULT_PERMISSION_MODE } from './permission-mode.js';
import { classifyTool, describeRisk, type ClassifiedTool } from './risk-class.js';
import { createShellAllowList, type ShellAllowList } from './shell-allowlist.js';

export interface PermissionPolicyOptions {
  /** Default `interactive`. Parsed again here, so a raw config string cannot slip through. */
  mode?: PermissionMode;
  /** Shell commands that run without asking in interactive mode (argv-prefix match). */
  shellAllowList?: readonly string[];
}

export interface ConfiguredPermissionPolicy extends PermissionPolicy {
  readonly mode: PermissionMode;
  readonly shellAllowList: ShellAllowList;
  evaluate(input: PolicyInput): PolicyDecision;
}

export function createPermissionPolicy(options: PermissionPolicyOptions = {}): ConfiguredPermissionPolicy {
  const mode = parsePermissionMode(options.mode ?? DEFAULT_PERMISSION_MODE);
  const shellAllowList = createShellAllowList(options.shellAllowList ?? []);
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
          return decideInteractively(input, classified, shellAllowList);
        case 'interactive':
          return decideInteractively(input, classified, shellAllowList);
      }
    },
  };
}

function decideInteractively(
  { tool, command, grants }: PolicyInput,
  classified: ClassifiedTool,
  shellAllowList: ShellAllowList,
): PolicyDecision {
  const insists = tool.metadata?.requiresApproval === true;
  if (classified.riskClass === 'read' && !insists) return { decision: 'allow', reason: `${tool.name} only reads` };

  // A grant is a human's own "always" for this session, so it also covers a tool that
  // insists on approval: the person it would ask has already answered.
  if (grants.coversTool(tool.name)) return { decision: 'allow', reason: `always allowed for this session: ${tool.name}` };
  if (grants.coversCommand(tool.name, command)) {
    return { decision: 'allow', reason: `always allowed for this session: ${tool.name} \`${command}\`` };
  }

  if (insists) {
    return { decision: 'needs_user', reason: `${tool.name} asks before every call: the tool requires approval` };
  }
  const risk = `${tool.name} ${describeRisk(classified)}`;
  if (classified.riskClass !== 'exec') {
    return { decision: 'needs_user', reason: `${risk}: asks unless always allowed for this session` };
  }
  if (command === undefined) {
    return { decision: 'needs_user', reason: `${risk}: asks (it names no command the allow-list could match)` };
  }
  const verdict = shellAllowList.check(command);
  if (verdict.allowed) return { decision: 'allow', reason: `allow-listed: \`${command}\` matches \`${verdict.entry}\`` };
  return { decision: 'needs_user', reason: `${risk}: asks unless allow-listed — ${verdict.reason}` };
}
