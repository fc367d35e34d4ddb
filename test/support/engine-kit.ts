// Small builders shared by the engine scenarios: tools with known behaviour, an event
// collector, and an engine wired to a scripted provider.
import { z } from 'zod';
import {
  defineTool,
  TurnEngine,
  type EngineEvent,
  type EngineLogger,
  type ToolDefinition,
  type ToolMetadata,
  type TurnEngineOptions,
} from '../../src/engine/index.js';
import { ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { sessionIdOf, type SessionKey, type SessionRecord } from '../../src/store/session-store.js';

export async function collect(
  events: AsyncIterable<EngineEvent>,
  onEvent?: (event: EngineEvent) => void | Promise<void>,
): Promise<EngineEvent[]> {
  const seen: EngineEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    await onEvent?.(event);
  }
  return seen;
}

export function typesOf(events: EngineEvent[]): string[] {
  return events.map((e) => e.type);
}

export function only<T extends EngineEvent['type']>(
  events: EngineEvent[],
  type: T,
): Extract<EngineEvent, { type: T }>[] {
  return events.filter((e): e is Extract<EngineEvent, { type: T }> => e.type === type);
}

export const lowRisk: ToolMetadata = { risk: 'low', category: 'read' };
export const risky: ToolMetadata = { risk: 'high', category: 'write' };

/** A tool that records its calls and returns `{ok, args}` after an optional delay. */
export function recordingTool(
  name: string,
  metadata: ToolMetadata | undefined,
  options: {
    delayMs?: number;
    /** The call waits for this (or a stop) before it returns: a test's barrier, where a delay would be a race on a busy machine. */
    until?: Promise<unknown>;
    log?: string[];
    result?: (args: Record<string, unknown>) => unknown;
  } = {},
): ToolDefinition {
  return defineTool({
    name,
    description: `test tool ${name}`,
    schema: z.record(z.string(), z.unknown()),
    metadata,
    async execute(args, { signal }) {
      options.log?.push(`start:${name}`);
      if (options.delayMs) await abortableDelay(options.delayMs, signal);
      if (options.until) await untilOrStopped(options.until, signal);
      options.log?.push(`end:${name}`);
      return (options.result?.(args) ?? { ok: true, tool: name, args }) as Record<string, unknown>;
    },
  });
}

/** Resolves with `until`, or rejects as abortableDelay does when `signal` aborts first. */
function untilOrStopped(until: Promise<unknown>, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise((resolve, reject) => {
    const stopped = (): void => reject(new Error('aborted'));
    signal.addEventListener('abort', stopped, { once: true });
    until.then(resolve, reject).finally(() => signal.removeEventListener('abort', stopped));
  });
}

/** A shell-like tool: high risk, with a command an "always allow this command" grant remembers. */
export function shellTool(log: string[]): ToolDefinition {
  return defineTool({
    name: 'run_shell',
    description: 'run a command',
    schema: z.object({ command: z.string() }),
    metadata: { risk: 'high', category: 'exec' },
    commandOf: ({ command }) => command,
    execute: async ({ command }) => {
      log.push(command);
      return `ran ${command}`;
    },
  });
}

export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function memoryLogger(): EngineLogger & { lines: { level: string; message: string; details: object }[] } {
  const lines: { level: string; message: string; details: object }[] = [];
  const at = (level: string) => (details: object, message: string) => {
    lines.push({ level, message, details });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export function engineWith(
  steps: Step[],
  options: Partial<TurnEngineOptions> = {},
): { engine: TurnEngine; provider: ScriptedProvider } {
  const provider = options.provider instanceof ScriptedProvider ? options.provider : new ScriptedProvider(steps);
  const engine = new TurnEngine({ model: 'scripted-model', sessionId: 'session-1', ...options, provider });
  return { engine, provider };
}

/** Resolves once `predicate` holds; the default bound is generous, for a busy machine (it only lengthens a failure). */
export function waitFor(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (predicate()) return resolve();
      if (Date.now() - started > timeoutMs) return reject(new Error('waitFor timed out'));
      setTimeout(check, 2);
    };
    check();
  });
}

/** A tool that records its runs, then never returns: the process dies while it runs. */
export function hangingTool(name: string, metadata: ToolMetadata, runs: string[]): ToolDefinition {
  return defineTool({
    name,
    description: name,
    schema: z.record(z.string(), z.unknown()),
    metadata,
    execute: async () => {
      runs.push(name);
      return new Promise<string>(() => undefined);
    },
  });
}

/** A stored session record for a key, as the store would make it for a thread its starter opened (tests and benches). */
export function sessionRecordFor(key: SessionKey, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: sessionIdOf(key),
    key,
    model: 'openai:gpt-4.1',
    grants: { tools: [], commands: [] },
    compaction: null,
    startedBy: 'U1',
    steerers: [],
    directories: [],
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
  };
}
