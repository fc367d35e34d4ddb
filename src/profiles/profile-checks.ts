// What a profile names must exist: each tool (a built-in, one of the engine's interactive
// tools, a files-room or schedules tool, or an MCP server's `server__tool`), each MCP server,
// each model's provider, each shell allow-list entry. Checked at start-up, by `npm run doctor`
// and at every reload, with every problem reported at once (profile-file.ts).
import type { CheckedParts, ProfileChecks } from './profile-file.js';

export interface KnownNames {
  /** Every tool name the bot can offer besides MCP's: built-ins, interactive, files, schedules. */
  tools: ReadonlySet<string>;
  /** The MCP servers the MCP config names (running or not: a server down now may be up later). */
  mcpServers: ReadonlySet<string>;
  /** Why a model name is not one the bot can call (an unknown provider), or undefined. */
  modelProblem: (name: string) => string | undefined;
  /** Why shell allow-list entries are refused, or undefined. */
  allowlistProblem: (entries: readonly string[]) => string | undefined;
}

export function profileChecks(known: KnownNames): ProfileChecks {
  return (profile: CheckedParts) => {
    const problems: string[] = [];
    for (const tool of profile.tools ?? []) {
      const split = tool.indexOf('__');
      if (split > 0) {
        const server = tool.slice(0, split);
        if (!known.mcpServers.has(server))
          problems.push(
            `tools: "${tool}" names the MCP server "${server}", which the MCP config (MCP_CONFIG) does not have${serversList(known)}`,
          );
      } else if (!known.tools.has(tool) && !known.mcpServers.has(tool)) {
        problems.push(
          `tools: "${tool}" is neither a tool nor an MCP server (tools: ${[...known.tools].sort().join(', ')}${known.mcpServers.size > 0 ? `; MCP servers: ${[...known.mcpServers].join(', ')}` : ''})`,
        );
      }
    }
    for (const [key, name] of [
      ['model', profile.model],
      ...(profile.models ?? []).map((one) => ['models', one] as const),
    ] as const) {
      if (name === undefined) continue;
      const problem = known.modelProblem(name);
      if (problem) problems.push(`${key}: "${name}": ${problem}`);
    }
    if (profile.shellAllowlist) {
      const problem = known.allowlistProblem(profile.shellAllowlist);
      if (problem) problems.push(`shellAllowlist: ${problem}`);
    }
    return problems;
  };
}

function serversList(known: KnownNames): string {
  return known.mcpServers.size > 0 ? ` (it has: ${[...known.mcpServers].join(', ')})` : ' (it has none)';
}
