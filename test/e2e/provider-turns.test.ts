// End to end through each real SDK: the engine, a real provider, and a fake server that
// speaks the vendor's wire format. One scenario per provider, as a user would live it: a
// turn with two tool rounds, an approval and a steering reply, then a later turn whose
// model call overflows the context, is compacted by a summary, and completes.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  SUMMARY_SYSTEM_PROMPT,
  SummarizingCompactor,
  TurnEngine,
  type EngineEvent,
  type PermissionRequest,
  type Provider,
} from '../../src/engine/index.js';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { collect, only } from '../support/engine-kit.js';

/** What the scenario needs from each vendor's fake, in that vendor's own terms. */
interface Harness {
  name: string;
  model: string;
  start(): Promise<Provider>;
  stop(): Promise<void>;
  scriptToolCall(id: string, name: string, args: Record<string, unknown>): void;
  scriptText(text: string): void;
  scriptOverflow(): void;
  /** The request bodies the fake received, in order. */
  bodies(): Record<string, unknown>[];
  /** The tool-result ids and the user texts of a body, in order of appearance. */
  transcriptOf(body: Record<string, unknown>): string[];
  isSummaryRequest(body: Record<string, unknown>): boolean;
  toolNames(body: Record<string, unknown>): string[];
}

function openaiHarness(): Harness {
  const fake = new FakeOpenAI();
  return {
    name: 'OpenAI',
    model: 'openai:gpt-4.1',
    start: async () => {
      await fake.start();
      return new OpenAIProvider({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0 });
    },
    stop: () => fake.stop(),
    scriptToolCall: (id, name, args) => void fake.replyToolCalls([{ id, name, arguments: args }]),
    scriptText: (text) => void fake.replyText(text),
    scriptOverflow: () => void fake.replyError(400),
    bodies: () => fake.requests.map((r) => r.body as Record<string, unknown>),
    transcriptOf: (body) =>
      (body.messages as { role: string; content?: unknown; tool_call_id?: string }[]).map((m) =>
        m.role === 'tool'
          ? `tool:${m.tool_call_id}`
          : `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
      ),
    isSummaryRequest: (body) => {
      const messages = body.messages as { role: string; content: unknown }[];
      return messages[0]?.content === SUMMARY_SYSTEM_PROMPT && body.tools === undefined;
    },
    toolNames: (body) =>
      ((body.tools as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name),
  };
}

function anthropicHarness(): Harness {
  const fake = new FakeAnthropic();
  type Block = { type: string; text?: string; tool_use_id?: string };
  return {
    name: 'Anthropic',
    model: 'anthropic:claude-sonnet-4-6',
    start: async () => {
      await fake.start();
      return new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL: fake.baseURL, maxRetries: 0 });
    },
    stop: () => fake.stop(),
    scriptToolCall: (id, name, args) => void fake.replyToolUse([{ id, name, input: args }]),
    scriptText: (text) => void fake.replyText(text),
    scriptOverflow: () => void fake.replyError('overflow'),
    bodies: () => fake.requests.map((r) => r.body as Record<string, unknown>),
    transcriptOf: (body) =>
      (body.messages as { role: string; content: string | Block[] }[]).flatMap((m) =>
        typeof m.content === 'string'
          ? [`${m.role}:${m.content}`]
          : m.content.flatMap((b) =>
              b.type === 'tool_result' ? [`tool:${b.tool_use_id}`] : b.type === 'text' ? [`${m.role}:${b.text}`] : [],
            ),
      ),
    isSummaryRequest: (body) => {
      const system = body.system as { text: string }[] | string | undefined;
      const text = typeof system === 'string' ? system : system?.map((b) => b.text).join('');
      return text === SUMMARY_SYSTEM_PROMPT && body.tools === undefined;
    },
    toolNames: (body) => ((body.tools as { name: string }[] | undefined) ?? []).map((t) => t.name),
  };
}

describe.each([openaiHarness, anthropicHarness])('a working session through %o', (makeHarness) => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stop();
  });

  it('two tool rounds with an approval and a steer, then an overflow compacted by summary', async () => {
    harness = makeHarness();
    const provider = await harness.start();
    const ran: string[] = [];
    const approvals: PermissionRequest[] = [];
    const engine = new TurnEngine({
      provider,
      model: harness.model,
      instructions: 'You deploy apps.',
      tools: [
        defineTool({
          name: 'read_config',
          description: 'Read the deploy configuration',
          schema: z.object({ app: z.string() }),
          metadata: { risk: 'low', category: 'read' },
          execute: async ({ app }) => {
            ran.push(`read:${app}`);
            return { app, targets: ['staging', 'prod'] };
          },
        }),
        defineTool({
          name: 'deploy',
          description: 'Deploy the app',
          schema: z.object({ app: z.string(), target: z.string() }),
          metadata: { risk: 'high', category: 'external' },
          execute: async ({ app, target }) => {
            ran.push(`deploy:${app}:${target}`);
            return `deployed ${app} to ${target}`;
          },
        }),
      ],
      ports: {
        approver: async (request) => {
          approvals.push(request);
          return 'once';
        },
        compactor: new SummarizingCompactor(),
        contextProvider: () => 'Now: 2026-11-29 20:00 UTC',
      },
    });

    // Turn 1: read, steer, deploy (approved), answer.
    harness.scriptToolCall('call_read_1', 'read_config', { app: 'api' });
    harness.scriptToolCall('call_deploy_1', 'deploy', { app: 'api', target: 'staging' });
    harness.scriptText('Deployed api to staging.');
    const first = await collect(
      engine.run('Deploy the api', { source: { platform: 'test', userId: 'U1' } }),
      (event: EngineEvent) => {
        if (event.type === 'tool_started' && event.name === 'read_config')
          engine.queueSteering('use staging, not prod');
      },
    );
    expect(only(first, 'turn_end')).toMatchObject([{ status: 'completed', iterations: 3 }]);
    expect(ran).toEqual(['read:api', 'deploy:api:staging']);
    expect(approvals.map((a) => a.toolName)).toEqual(['deploy']);
    expect(only(first, 'steering_injected').map((e) => e.text)).toEqual(['use staging, not prod']);

    const bodies = harness.bodies();
    expect(bodies).toHaveLength(3);
    expect(harness.toolNames(bodies[0]!)).toEqual(['read_config', 'deploy']);
    // The steer reached the model right after the first tool result, as a user message.
    const second = harness.transcriptOf(bodies[1]!);
    expect(second.at(-2)).toBe('tool:call_read_1');
    expect(second.at(-1)).toMatch(
      /^user:use staging, not prod\n\n<system-context>\nNow: 2026-11-29 20:00 UTC\n<\/system-context>$/,
    );
    expect(harness.transcriptOf(bodies[2]!).at(-1)).toBe('tool:call_deploy_1');
    // Sidecars never leave the engine.
    for (const body of bodies) {
      expect(JSON.stringify(body)).not.toMatch(/"(ts|source|_display|reasoning|usage)"/);
    }

    // Turn 2: the model call overflows; a summary is written; the call is retried.
    harness.scriptOverflow();
    harness.scriptText('## Goals and constraints\nDeploy api to staging (done).');
    harness.scriptText('Next: run the smoke tests.');
    const later = await collect(engine.run('What next?'));
    expect(only(later, 'error')).toEqual([]);
    expect(later.map((e) => e.type)).toEqual(expect.arrayContaining(['compacting', 'compacted']));
    expect(only(later, 'turn_end')).toMatchObject([{ status: 'completed' }]);
    const all = harness.bodies();
    expect(all).toHaveLength(6);
    expect(harness.isSummaryRequest(all[4]!)).toBe(true);
    const retried = harness.transcriptOf(all[5]!);
    expect(
      retried.some((line) => line.includes('<compacted-history>') && line.includes('Deploy api to staging (done).')),
    ).toBe(true);
    expect(retried.at(-1)).toContain('What next?');
    expect(engine.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Next: run the smoke tests.' });
  });
});
