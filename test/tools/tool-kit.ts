// Shared arrangements for the built-in tool suites: a throwaway workspace (with a sibling
// "outside" folder for escape attempts), a way to call a tool as the engine would, and a
// check that a process is really gone.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ToolDefinition, ToolResult } from '../../src/engine/index.js';
import { createBuiltinTools, type BuiltinTools, type BuiltinToolsOptions } from '../../src/tools/index.js';

export interface Sandbox {
  /** The workspace root (real path). */
  workspace: string;
  /** A sibling folder outside the workspace, for escape attempts. */
  outside: string;
  builtin: BuiltinTools;
  /** Run a tool as the engine does: arguments through its schema, then execute. */
  run(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult>;
  tool(name: string): ToolDefinition;
  cleanup(): Promise<void>;
}

export async function createSandbox(options: Partial<BuiltinToolsOptions> = {}): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'chat-agent-tools-')));
  const workspace = path.join(base, 'workspace');
  const outside = path.join(base, 'outside');
  await mkdir(outside);
  const builtin = createBuiltinTools({ workspaceDir: workspace, ...options });
  const tool = (name: string): ToolDefinition => {
    const found = builtin.tools.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  };
  let calls = 0;
  return {
    workspace,
    outside,
    builtin,
    tool,
    async run(name, args, signal = new AbortController().signal) {
      const definition = tool(name);
      const parsed: unknown = definition.schema.parse(args);
      return definition.execute(parsed, { signal, toolCallId: `call_${++calls}`, sessionId: 'session-tools' });
    },
    async cleanup() {
      await builtin.dispose();
      await rm(base, { recursive: true, force: true });
    },
  };
}

/**
 * Whether a process no longer runs. A zombie counts as gone: where PID 1 does not reap
 * orphans (some containers), a killed orphan stays a zombie forever.
 */
export function processGone(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (existsSync('/proc/self/stat')) {
    try {
      const fields = readFileSync(stat, 'utf8');
      return fields.slice(fields.lastIndexOf(')') + 2).startsWith('Z');
    } catch {
      return true;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

export function asRecord(result: ToolResult): Record<string, unknown> {
  if (result === null || typeof result !== 'object' || Array.isArray(result))
    throw new Error(`not an object: ${JSON.stringify(result)}`);
  return result;
}

export function asText(result: ToolResult): string {
  if (typeof result !== 'string') throw new Error(`not text: ${JSON.stringify(result)}`);
  return result;
}
