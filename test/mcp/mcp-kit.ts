// Small helpers shared by the MCP suites: run an engine tool directly, and wait for
// something only the server can tell us.
import type { ToolDefinition, ToolResult } from '../../src/engine/index.js';

/** Call an engine tool by name the way the engine would, outside a turn. */
export function runTool(
  tools: ToolDefinition[],
  name: string,
  args: Record<string, unknown> = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolResult> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}; have ${tools.map((candidate) => candidate.name).join(', ')}`);
  return tool.execute(tool.schema.parse(args), { signal, toolCallId: 'call-1', sessionId: 'session-1' });
}

/** Ask until `check` holds: for facts that arrive by notification, with no answer to await. */
export async function eventually(check: () => Promise<boolean>, attempts = 250): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the condition never held');
}

/** The labels of the notes server's slow calls that it saw cancelled (asked over MCP). */
export async function cancelledOnServer(tools: ToolDefinition[], toolName: string): Promise<string[]> {
  return JSON.parse((await runTool(tools, toolName)) as string) as string[];
}
