// The names a profile may use, as the bot knows them: every tool it can offer besides MCP's,
// the MCP servers of MCP_CONFIG, the model providers, the shell allow-list's grammar. One
// place for the start (core.ts) and `npm run doctor` (src/app/doctor.ts), so the doctor
// refuses exactly what a start would.
import { FILE_TOOL_NAMES, modelNameProblem } from '../config-checks.js';
import { INTERACTIVE_TOOLS } from '../engine/interactive.js';
import { createPermissionPolicy, type PermissionMode } from '../permissions/index.js';
import { SCHEDULE_TOOL_NAMES } from '../schedules/schedule-tool.js';
import { BUILTIN_TOOL_NAMES } from '../tools/index.js';
import type { KnownNames } from './profile-checks.js';

/** Every tool name the bot offers besides MCP's: built-ins, files, schedules, and the engine's interactive tools. */
export function botToolNames(extra: Iterable<string> = []): ReadonlySet<string> {
  return new Set([
    ...BUILTIN_TOOL_NAMES,
    ...FILE_TOOL_NAMES,
    ...SCHEDULE_TOOL_NAMES,
    ...Object.keys(INTERACTIVE_TOOLS),
    ...extra,
  ]);
}

type ModelSettings = Partial<
  Record<'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL', string>
>;

export interface KnownNamesInput {
  /** The MCP servers MCP_CONFIG names (skipped ones too: a server down now may be up later). */
  mcpServers: Iterable<string>;
  /** The permission settings an allow-list entry is checked under (core.ts's policyOptions). */
  policy: { mode: PermissionMode; shellAllowList: readonly string[]; grantScope?: 'thread' | 'channel' };
  /** WORKSPACE_DIR, resolved: an entry naming a path is checked against it. */
  workspaceRoot: string;
  /** The settings a model is judged under: its provider's key or base URL (the Config). */
  settings: ModelSettings;
  /** Tools only some setups have (the schedules' tool, …). */
  extraTools?: Iterable<string>;
}

export function knownNames(input: KnownNamesInput): KnownNames {
  return {
    tools: botToolNames(input.extraTools),
    mcpServers: new Set(input.mcpServers),
    modelProblem: (name) => modelNameProblem(name, input.settings),
    allowlistProblem: (entries) => {
      try {
        createPermissionPolicy({ ...input.policy, shellAllowList: [...entries], workspaceDir: input.workspaceRoot });
        return undefined;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    },
  };
}
