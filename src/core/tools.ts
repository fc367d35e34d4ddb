// The tools beyond the bot's own: the MCP servers of MCP_CONFIG (a failing one is reported,
// not fatal), and the names DISABLED_TOOLS keeps from the model. The manager exists from the
// start, so the operations sinks can ask which tool names are real; its servers connect later,
// once the secrets they may print are known to the masker.
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { disabledToolNames } from '../config-checks.js';
import type { EngineLogger } from '../engine/index.js';
import { loadMcpConfig, McpManager, type McpConfig, type McpStartReport } from '../mcp/index.js';
import { botToolNames } from '../profiles/known-names.js';
import { mcpSecretValues, type SecretMasker } from '../secrets/index.js';

export interface CoreTools {
  mcp: McpManager;
  /** Whether a tool of this name is registered: the bot's own, or an MCP server's. */
  knownTools: (name: string) => boolean;
  /** DISABLED_TOOLS: never offered to the model (loadConfig refused unknown names). */
  disabledTools: ReadonlySet<string>;
}

export function toolsFrom(config: Config, logger: EngineLogger): CoreTools {
  const mcp = new McpManager({ logger });
  const botTools = botToolNames();
  return {
    mcp,
    knownTools: (name) => botTools.has(name) || mcp.hasTool(name),
    disabledTools: new Set(disabledToolNames(config.DISABLED_TOOLS)),
  };
}

/** Connects the MCP servers; a server whose `${VAR}` is unset is skipped with a warning, a malformed file stops the start. */
export async function connectMcp(
  config: Config,
  mcp: McpManager,
  secrets: SecretMasker,
): Promise<{ mcpConfig: McpConfig; report: McpStartReport }> {
  const mcpConfig = await loadMcpConfig(resolve(config.MCP_CONFIG), process.env, { unsetVariables: 'skip' });
  // Known before the servers start: their stderr is logged, and may quote their tokens.
  secrets.add(mcpSecretValues(mcpConfig));
  const report = await mcp.start(mcpConfig);
  return { mcpConfig, report };
}
