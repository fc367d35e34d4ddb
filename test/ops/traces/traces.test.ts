// Traces through the real core: a turn with a tool call that needs approval and then the
// answer, against the fake OpenAI (and Anthropic) server, exported over OTLP/HTTP to a local
// receiver that decodes what arrives (JSON as JSON, protobuf with the OTLP .proto files).
// What must hold: the span names and kinds of the GenAI conventions, the parent links (the
// model calls, the tool call and the wait are children of the turn's span, all in one
// trace), the gen_ai.* attributes, no message content by default, and with content capture
// on the messages arrive with the configured secrets masked.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { startCore, type Core } from '../../../src/core.js';
import type { InboxItem } from '../../../src/engine/index.js';
import { SECRET_MASK } from '../../../src/secrets/spans.js';
import { FakeAnthropic } from '../../fakes/anthropic-server.js';
import { FakeOpenAI } from '../../fakes/openai-server.js';
import { FakeCollector, type ReceivedSpan } from '../../fakes/otlp-receiver.js';
import { coreTestEnv } from '../../support/core-env.js';
import { memoryLogger, waitFor } from '../../support/engine-kit.js';
import { freePort } from '../../support/loopback-port.js';
import { tempDir } from '../../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.unstubAllEnvs();
});

/** A header value the exporter sends the collector: a key, so the masker must know it. */
const COLLECTOR_KEY = 'otlp-key-5f3a9c77d1';

/** `env` may be built from the collector's address (the default: it as OTEL_EXPORTER_OTLP_ENDPOINT). */
async function boot(
  env: Record<string, string> | ((endpoint: string) => Record<string, string>),
  model: 'openai' | 'anthropic' = 'openai',
) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const collector = await new FakeCollector().start();
  cleanups.push(() => collector.stop());
  const openai = await new FakeOpenAI().start();
  cleanups.push(() => openai.stop());
  let anthropic: FakeAnthropic | undefined;
  const vendor: Record<string, string> = {};
  if (model === 'anthropic') {
    anthropic = await new FakeAnthropic().start();
    cleanups.push(() => anthropic!.stop());
    Object.assign(vendor, {
      MODEL: 'anthropic:claude-sonnet-4-6',
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.baseURL,
    });
  }
  const settings =
    typeof env === 'function' ? env(collector.endpoint) : { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, ...env };
  const config = loadConfig({ ...coreTestEnv(dir.path, openai), ...vendor, ...settings });
  const logger = memoryLogger();
  const core: Core = await startCore(config, { logger });
  cleanups.push(() => core.close());
  const prompts: InboxItem[] = [];
  core.observers.add('test', { onEvent: (_s, _event, prompt) => void (prompt ? prompts.push(prompt) : undefined) });
  await core.recover();
  return { core, collector, openai, anthropic, prompts, logger };
}

const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };

/** One turn: the model asks to write a file, the starter approves once, the model answers. Then the bot shuts down (which flushes). */
async function approvedTurn(booted: Awaited<ReturnType<typeof boot>>, text = 'save a todo'): Promise<ReceivedSpan[]> {
  const { core, prompts } = booted;
  await core.manager.deliver(key, { text, userId: 'U1', eventId: 'e1' });
  await waitFor(() => prompts.length > 0, 20_000);
  expect(await core.manager.resolve(prompts[0]!.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
  await core.manager.idle();
  await core.close();
  return booted.collector.spans;
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((span) => span.name === name);
}

function expectOneTrace(spans: ReceivedSpan[]): ReceivedSpan {
  const turns = spans.filter((span) => span.name.startsWith('invoke_agent'));
  expect(turns).toHaveLength(1);
  const turn = turns[0]!;
  expect(turn.parentSpanId).toBe('');
  expect(turn.traceId).toMatch(/^[0-9a-f]{32}$/);
  for (const span of spans) {
    expect(span.traceId, span.name).toBe(turn.traceId);
    if (span !== turn) expect(span.parentSpanId, span.name).toBe(turn.spanId);
  }
  return turn;
}

describe('traces over OTLP/HTTP', () => {
  it.each(['http/protobuf', 'http/json'] as const)(
    'a turn with an approved tool call, in %s: the GenAI spans, one trace, parented to the turn, no content',
    { timeout: 60_000 },
    async (protocol) => {
      const booted = await boot({ OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: 'team-bot' });
      booted.openai.replyToolCalls(
        [{ name: 'write_file', arguments: { path: 'notes/todo.md', content: '- ship it\n' }, id: 'call_write_1' }],
        {
          model: 'gpt-4.1-2025-04-14',
          usage: { prompt_tokens: 120, completion_tokens: 15, cached_tokens: 100 },
        },
      );
      booted.openai.replyText('Saved notes/todo.md.', {
        model: 'gpt-4.1-2025-04-14',
        usage: { prompt_tokens: 160, completion_tokens: 6 },
      });
      const spans = await approvedTurn(booted);

      // The encoding asked for, at the standard path.
      expect(booted.collector.exports.length).toBeGreaterThan(0);
      for (const received of booted.collector.exports) {
        expect(received.path).toBe('/v1/traces');
        expect(received.contentType).toBe(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
      }
      expect(spans.map((span) => span.name).sort()).toEqual([
        'await_approval write_file',
        'chat gpt-4.1',
        'chat gpt-4.1',
        'execute_tool write_file',
        'invoke_agent team-bot',
      ]);
      const turn = expectOneTrace(spans);
      expect(turn.resource['service.name']).toBe('team-bot');
      expect(turn.kind).toBe(1);
      expect(turn.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'team-bot',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4.1',
        'gen_ai.conversation.id': expect.any(String),
        'chat_agent.turn.status': 'completed',
      });

      const [first, second] = byName(spans, 'chat gpt-4.1').sort((a, b) => a.startMs - b.startMs);
      for (const call of [first!, second!]) {
        expect(call.kind).toBe(3); // CLIENT: the model runs in another process
        expect(call.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4.1',
          'gen_ai.response.model': 'gpt-4.1-2025-04-14',
          'gen_ai.request.max_tokens': 32_768,
          'gen_ai.conversation.id': turn.attributes['gen_ai.conversation.id'],
        });
        expect(call.statusCode).toBe(0);
        expect(call.attributes['gen_ai.response.time_to_first_chunk']).toEqual(expect.any(Number));
      }
      // Input tokens as the conventions count them: the cached ones included, and also apart.
      expect(first!.attributes).toMatchObject({
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 15,
        'gen_ai.usage.cache_read.input_tokens': 100,
        'gen_ai.response.finish_reasons': ['tool_calls'],
      });
      expect(second!.attributes).toMatchObject({
        'gen_ai.usage.input_tokens': 160,
        'gen_ai.usage.output_tokens': 6,
        'gen_ai.response.finish_reasons': ['stop'],
      });

      const [tool] = byName(spans, 'execute_tool write_file');
      expect(tool!.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'write_file',
        'gen_ai.tool.call.id': expect.stringMatching(/call_write_1/),
        'chat_agent.tool.outcome': 'ok',
      });
      const [wait] = byName(spans, 'await_approval write_file');
      expect(wait!.attributes).toMatchObject({
        'chat_agent.wait.kind': 'approval',
        'chat_agent.wait.decision': 'once',
        'chat_agent.wait.answered': true,
        'gen_ai.tool.call.id': tool!.attributes['gen_ai.tool.call.id'],
      });
      // In order: the first call, the wait, the tool, the second call, all inside the turn.
      expect(first!.endMs).toBeLessThanOrEqual(wait!.startMs);
      expect(wait!.endMs).toBeLessThanOrEqual(tool!.startMs);
      expect(tool!.endMs).toBeLessThanOrEqual(second!.startMs);
      expect(turn.startMs).toBeLessThanOrEqual(first!.startMs);
      expect(turn.endMs).toBeGreaterThanOrEqual(second!.endMs);

      // No content unless asked for: neither the attributes nor any text of the thread.
      const everything = JSON.stringify(spans);
      for (const name of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions'])
        expect(everything).not.toContain(name);
      expect(everything).not.toContain('save a todo');
      expect(everything).not.toContain('ship it');
      expect(everything).not.toContain('Saved notes');
    },
  );

  it(
    'with content capture on, the messages and answers arrive masked; the collector gets its headers, and the key in them is a secret',
    { timeout: 60_000 },
    async () => {
      const booted = await boot({
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        OTEL_EXPORTER_OTLP_HEADERS: `x-team-key=${COLLECTOR_KEY},x-tenant=ops%20team`,
      });
      booted.openai.replyToolCalls([
        { name: 'write_file', arguments: { path: 'key.txt', content: `the key is ${COLLECTOR_KEY}` } },
      ]);
      booted.openai.replyText(`Saved it: ${COLLECTOR_KEY}.`);
      const spans = await approvedTurn(booted, `please save ${COLLECTOR_KEY} in key.txt`);

      expect(booted.collector.exports[0]!.headers).toMatchObject({
        'x-team-key': COLLECTOR_KEY,
        'x-tenant': 'ops team',
      });
      expectOneTrace(spans);
      const [first, second] = byName(spans, 'chat gpt-4.1').sort((a, b) => a.startMs - b.startMs);
      const input = JSON.parse(String(first!.attributes['gen_ai.input.messages'])) as {
        role: string;
        parts: { type: string; content?: string }[];
      }[];
      expect(input[0]!.role).toBe('system');
      const user = input.find((message) => message.role === 'user')!;
      expect(user.parts[0]!.content).toContain(`please save ${SECRET_MASK} in key.txt`);
      const output = JSON.parse(String(first!.attributes['gen_ai.output.messages'])) as {
        role: string;
        finish_reason: string;
        parts: { type: string; name?: string; arguments?: { content?: string } }[];
      }[];
      expect(output).toEqual([
        {
          role: 'assistant',
          finish_reason: 'tool_calls',
          parts: [
            {
              type: 'tool_call',
              id: expect.any(String),
              name: 'write_file',
              arguments: { path: 'key.txt', content: `the key is ${SECRET_MASK}` },
            },
          ],
        },
      ]);
      // The second call carries the tool's result back, and its answer.
      const secondInput = JSON.parse(String(second!.attributes['gen_ai.input.messages'])) as {
        role: string;
        parts: { type: string }[];
      }[];
      expect(secondInput.at(-1)).toMatchObject({ role: 'tool', parts: [{ type: 'tool_call_response' }] });
      expect(JSON.parse(String(second!.attributes['gen_ai.output.messages']))).toEqual([
        { role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: `Saved it: ${SECRET_MASK}.` }] },
      ]);
      // Nowhere in any span, and nowhere in the log.
      expect(JSON.stringify(spans)).not.toContain(COLLECTOR_KEY);
      expect(JSON.stringify(booted.logger.lines)).not.toContain(COLLECTOR_KEY);
    },
  );

  it(
    'Anthropic, to a traces endpoint used as given: the provider named as the conventions name it, the model by its own id, the answering model from message_start',
    { timeout: 60_000 },
    async () => {
      const booted = await boot(
        (endpoint) => ({
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/otlp/traces`,
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/unused',
        }),
        'anthropic',
      );
      booted.anthropic!.replyToolUse([{ id: 'toolu_01', name: 'write_file', input: { path: 'a.txt', content: 'a' } }], {
        model: 'claude-sonnet-4-6-20260101',
        usage: { input: 40, output: 12, cacheRead: 900, cacheWrite: 60 },
      });
      booted.anthropic!.replyText('Done.', { model: 'claude-sonnet-4-6-20260101' });
      const spans = await approvedTurn(booted);

      expect(booted.collector.exports.map((received) => received.path)).toEqual(
        booted.collector.exports.map(() => '/otlp/traces'),
      );
      expect(spans.map((span) => span.name).sort()).toEqual([
        'await_approval write_file',
        'chat claude-sonnet-4-6',
        'chat claude-sonnet-4-6',
        'execute_tool write_file',
        'invoke_agent chat-agent',
      ]);
      expectOneTrace(spans);
      const [first] = byName(spans, 'chat claude-sonnet-4-6').sort((a, b) => a.startMs - b.startMs);
      expect(first!.attributes).toMatchObject({
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4-6',
        'gen_ai.response.model': 'claude-sonnet-4-6-20260101',
        'gen_ai.request.max_tokens': 8192,
        // 40 fresh + 900 read from the cache + 60 written to it.
        'gen_ai.usage.input_tokens': 1000,
        'gen_ai.usage.cache_read.input_tokens': 900,
        'gen_ai.usage.cache_creation.input_tokens': 60,
        'gen_ai.usage.output_tokens': 12,
        'gen_ai.response.finish_reasons': ['tool_calls'],
      });
    },
  );

  it(
    'a model call that fails: error.type and an error status on the chat span and on the turn',
    { timeout: 60_000 },
    async () => {
      const booted = await boot({});
      booted.openai.replyError(401);
      await booted.core.manager.deliver(key, { text: 'hello', userId: 'U1', eventId: 'e1' });
      await booted.core.manager.idle();
      await booted.core.close();
      const spans = booted.collector.spans;
      expect(spans.map((span) => span.name).sort()).toEqual(['chat gpt-4.1', 'invoke_agent chat-agent']);
      const turn = expectOneTrace(spans);
      const [call] = byName(spans, 'chat gpt-4.1');
      expect(call!.attributes['error.type']).toBe('auth');
      expect(call!.statusCode).toBe(2);
      expect(call!.attributes).not.toHaveProperty('gen_ai.response.finish_reasons');
      expect(turn.attributes).toMatchObject({ 'chat_agent.turn.status': 'error', 'error.type': 'auth' });
      expect(turn.statusCode).toBe(2);
    },
  );

  it(
    'a bot that shuts down while a turn waits on a person still exports the turn, its call and the wait, all ended',
    { timeout: 60_000 },
    async () => {
      const booted = await boot({});
      booted.openai.replyToolCalls([{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }]);
      await booted.core.manager.deliver(key, { text: 'write x', userId: 'U1', eventId: 'e1' });
      await waitFor(() => booted.prompts.length > 0, 20_000);
      await booted.core.close();
      const spans = booted.collector.spans;
      // The call never ran: its span is the instant the shutdown settled it.
      expect(spans.map((span) => span.name).sort()).toEqual([
        'await_approval write_file',
        'chat gpt-4.1',
        'execute_tool write_file',
        'invoke_agent chat-agent',
      ]);
      const turn = expectOneTrace(spans);
      for (const span of spans) expect(span.endMs, span.name).toBeGreaterThanOrEqual(span.startMs);
      expect(turn.attributes['chat_agent.turn.status']).toBe('interrupted');
      expect(turn.statusCode).toBe(0);
      expect(byName(spans, 'execute_tool write_file')[0]!.attributes['chat_agent.tool.outcome']).toBe('interrupted');
      // The shutdown stopped the turn, which closed the prompt: the wait ends as interrupted, with nobody's decision.
      const [wait] = byName(spans, 'await_approval write_file');
      expect(wait!.attributes['chat_agent.wait.decision']).toBe('interrupted');
      expect(wait!.attributes['chat_agent.wait.answered']).toBe(false);
    },
  );

  it(
    'a collector that cannot be reached costs the bot nothing but a warning in the log (without the key in the headers)',
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      // The exporter reads its timeout from the environment, as a deployment would set it: a short one keeps the test short.
      vi.stubEnv('OTEL_EXPORTER_OTLP_TIMEOUT', '500');
      const booted = await boot({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_HEADERS: `x-team-key=${COLLECTOR_KEY}`,
      });
      booted.openai.replyText('Hello back.');
      const answered: string[] = [];
      booted.core.observers.add('test', {
        onEvent: (_s, event) =>
          void (event.type === 'assistant_message' && event.text ? answered.push(event.text) : undefined),
      });
      await booted.core.manager.deliver(key, { text: 'hello', userId: 'U1', eventId: 'e1' });
      await booted.core.manager.idle();
      expect(answered).toEqual(['Hello back.']);
      await booted.core.close();
      expect(booted.logger.lines.some((line) => line.level === 'warn' && line.message.startsWith('traces:'))).toBe(
        true,
      );
      expect(JSON.stringify(booted.logger.lines)).not.toContain(COLLECTOR_KEY);
    },
  );
});
