// Fixtures for the benches: a zero-latency provider, tools with known timing, and a session layer.
//
// The provider is written here rather than reusing test/fakes/ScriptedProvider for the
// overhead figure because ScriptedProvider deep-copies every request (structuredClone of
// the whole, growing history) to let tests inspect it: that cost would land on both the
// engine and the bare loop and dilute the very ratio being measured. This one does no
// bookkeeping at all, yet still streams like a real provider: one text delta, then `final`.
import { z } from 'zod';
import {
  defineTool,
  type AssistantTurn,
  type ModelCapabilities,
  type PermissionPolicy,
  type Provider,
  type ProviderChunk,
  type ProviderRequest,
  type ToolDefinition,
  type ToolMetadata,
} from '../src/engine/index.js';
import { AccessPolicy, parseAccessConfig } from '../src/sessions/access-policy.js';
import { InProcessCoordinator } from '../src/sessions/coordination.js';
import { SessionManager } from '../src/sessions/session-manager.js';
import { PersistentInbox } from '../src/store/persistent-inbox.js';
import type { SessionStore } from '../src/store/session-store.js';

const CAPABILITIES: ModelCapabilities = { tools: true, vision: true, pdf: true, contextWindow: 1_000_000 };
const USAGE = { input: 12, output: 3 };

/**
 * Asks for `callsPerRound` calls of `toolName` on each of its first `toolRounds` calls, then
 * answers. It reports usage, as OpenAI and Anthropic do: a call without it would be charged an
 * estimate read off the whole request (src/ops/metered-provider.ts), which is not what a loop
 * against a real provider pays.
 */
export class ZeroLatencyProvider implements Provider {
  readonly name = 'zero-latency';
  private calls = 0;

  constructor(
    private readonly toolRounds: number,
    private readonly toolName: string,
    private readonly callsPerRound = 1,
  ) {}

  capabilities(): ModelCapabilities {
    return CAPABILITIES;
  }

  stream(_request: ProviderRequest, _signal: AbortSignal): AsyncIterable<ProviderChunk> {
    const n = this.calls++;
    const turn: AssistantTurn =
      n < this.toolRounds
        ? {
            text: 'working',
            toolCalls: Array.from({ length: this.callsPerRound }, (_, j) => ({
              id: `call_${n}_${j}`,
              name: this.toolName,
              arguments: '{}',
            })),
            finishReason: 'tool_calls',
            usage: USAGE,
          }
        : { text: 'done', toolCalls: [], finishReason: 'stop', usage: USAGE };
    return streamOf(turn);
  }
}

async function* streamOf(turn: AssistantTurn): AsyncGenerator<ProviderChunk, void, undefined> {
  yield { type: 'text_delta', text: turn.text ?? '' };
  yield { type: 'final', turn };
}

export const lowRisk: ToolMetadata = { risk: 'low', category: 'read' };
export const mediumRisk: ToolMetadata = { risk: 'medium', category: 'write' };
export const highRisk: ToolMetadata = { risk: 'high', category: 'write' };

/** Allows every call: lets medium-risk tools run without an approver (and not in parallel). */
export const allowEverything: PermissionPolicy = { evaluate: () => ({ decision: 'allow' }) };

const anyArguments = z.record(z.string(), z.unknown());

export function noopTool(name: string): ToolDefinition {
  return defineTool({
    name,
    description: 'does nothing',
    schema: anyArguments,
    metadata: lowRisk,
    async execute() {
      return 'ok';
    },
  });
}

/** Sleeps `ms`, or rejects as soon as its signal fires (including one already fired). */
export function sleepingTool(name: string, metadata: ToolMetadata, ms: number): ToolDefinition {
  return defineTool({
    name,
    description: `sleeps ${ms} ms, honours its signal`,
    schema: anyArguments,
    metadata,
    execute: (_args, { signal }) =>
      new Promise((resolve, reject) => {
        if (signal.aborted) return reject(new Error('aborted'));
        const onAbort = (): void => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        };
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve('slept');
        }, ms);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
  });
}

/** Sleeps `ms` and ignores its signal; the timer is unref'd so it never holds the process. */
export function stubbornTool(name: string, ms: number): ToolDefinition {
  return defineTool({
    name,
    description: `sleeps ${ms} ms, ignores its signal`,
    schema: anyArguments,
    metadata: lowRisk,
    execute: () => new Promise((resolve) => setTimeout(() => resolve('slept anyway'), ms).unref()),
  });
}

/** A session layer on `store` for the session benches: everyone allowed, one tool, a zero-latency model. */
export function benchSessionManager(
  store: SessionStore,
  provider: () => Provider,
  tool: ToolDefinition,
): SessionManager {
  return new SessionManager({
    store,
    inbox: new PersistentInbox(store),
    coordinator: new InProcessCoordinator(store),
    access: new AccessPolicy(parseAccessConfig('*', '')),
    defaultModel: 'bench',
    engineSetup: () => ({ provider: provider(), tools: [tool] }),
  });
}
