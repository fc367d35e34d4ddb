// The trace sink on its own, fed ops events by hand, over the real SDK with an in-memory
// exporter: the cases a scripted turn through the core does not reach. A question's wait
// span, a wait asked before a restart and answered after it (drawn from how long it waited),
// a call refused before it ran, a stop and a steer as events of the turn, a compaction
// call's purpose, and a person's answer that never becomes an attribute.
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { OpsEvent } from '../../../src/ops/ops-events.js';
import { TraceSink } from '../../../src/ops/traces/trace-sink.js';

const place = { sessionId: 'slack:T1:C1:1.0', platform: 'slack', workspace: 'T1', channel: 'C1' };

function sink(captureContent = false) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const knownTools = (name: string): boolean => ['ask_user', 'run_shell', 'fetch_url', 'write_file'].includes(name);
  const traces = new TraceSink(provider.getTracer('test'), {
    agentName: 'chat-agent',
    captureContent,
    mask: (text) => text.replaceAll('hunter2-secret', '[secret]'),
    knownTools,
    now: () => 9_000,
  });
  const feed = (...events: OpsEvent[]) => events.forEach((event) => traces.handle(event));
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string): ReadableSpan => {
    const found = spans().filter((span) => span.name === name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  return { traces, feed, spans, named };
}

const ms = (span: ReadableSpan, which: 'startTime' | 'endTime') => span[which][0] * 1000 + span[which][1] / 1e6;

describe('the trace sink', () => {
  it("a question's wait, a stop and a steer: the wait is a child of the turn, its decision a word, and the answer nowhere", () => {
    const { feed, named } = sink();
    feed(
      { type: 'turn_started', at: 1_000, place, kind: 'run', by: 'U1', model: 'anthropic:claude-sonnet-4-6' },
      { type: 'wait_started', at: 1_100, place, toolCallId: 'toolu_1', tool: 'ask_user', kind: 'question' },
      {
        type: 'wait_ended',
        at: 1_600,
        place,
        toolCallId: 'toolu_1',
        tool: 'ask_user',
        kind: 'question',
        decision: 'answered',
        by: 'U1',
        waitedMs: 500,
      },
      { type: 'steered', at: 1_700, place },
      { type: 'stop_requested', at: 1_800, place, by: 'U1' },
      { type: 'stopped', at: 1_850, place, by: 'U1', latencyMs: 50 },
      { type: 'turn_ended', at: 1_900, place, status: 'interrupted', iterations: 2 },
    );
    const turn = named('invoke_agent chat-agent');
    const wait = named('await_question');
    expect(wait.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(wait.spanContext().traceId).toBe(turn.spanContext().traceId);
    expect(wait.attributes).toEqual({
      'chat_agent.wait.kind': 'question',
      'gen_ai.tool.name': 'ask_user',
      'gen_ai.tool.call.id': 'toolu_1',
      'chat_agent.wait.decision': 'answered',
      'chat_agent.wait.answered': true,
    });
    expect([ms(wait, 'startTime'), ms(wait, 'endTime')]).toEqual([1_100, 1_600]);
    expect(turn.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-6',
      'chat_agent.turn.status': 'interrupted',
    });
    expect(turn.status.code).toBe(0);
    expect(turn.events.map((event) => [event.name, event.attributes])).toEqual([
      ['chat_agent.steered', {}],
      ['chat_agent.stop_requested', {}],
      ['chat_agent.stopped', { 'chat_agent.stop.latency_ms': 50 }],
    ]);
  });

  it('a wait asked before a restart and answered after it is drawn from how long it waited; a call refused before it ran is an instant', () => {
    const { feed, named, spans } = sink();
    feed(
      { type: 'turn_started', at: 5_000, place, kind: 'resume', model: 'openai:gpt-4.1' },
      {
        type: 'wait_ended',
        at: 6_000,
        place,
        toolCallId: 'call_9',
        tool: 'run_shell',
        kind: 'approval',
        decision: 'deny',
        by: 'U2',
        waitedMs: 4_000,
      },
      { type: 'tool_ended', at: 6_001, place, toolCallId: 'call_9', tool: 'run_shell', outcome: 'denied' },
      // A wait whose start is unknown and whose length is too: nothing to draw.
      {
        type: 'wait_ended',
        at: 6_002,
        place,
        toolCallId: 'call_10',
        tool: 'run_shell',
        kind: 'approval',
        decision: 'closed',
      },
      { type: 'turn_ended', at: 6_100, place, status: 'completed', iterations: 1 },
    );
    const wait = named('await_approval run_shell');
    expect([ms(wait, 'startTime'), ms(wait, 'endTime')]).toEqual([2_000, 6_000]);
    expect(wait.attributes['chat_agent.wait.decision']).toBe('deny');
    const tool = named('execute_tool run_shell');
    expect([ms(tool, 'startTime'), ms(tool, 'endTime')]).toEqual([6_001, 6_001]);
    expect(tool.attributes['chat_agent.tool.outcome']).toBe('denied');
    expect(tool.status.code).toBe(0);
    expect(spans()).toHaveLength(3);
  });

  it('a compaction call says so; a tool that failed is an error; spans left open end at shutdown and say so', () => {
    const { traces, feed, named } = sink();
    feed(
      { type: 'turn_started', at: 1_000, place, kind: 'run', model: 'openai:gpt-4.1' },
      {
        type: 'model_call_started',
        at: 1_010,
        place,
        callId: 'c1',
        provider: 'openai',
        model: 'openai:gpt-4.1-mini',
        purpose: 'compaction',
        maxOutputTokens: 4_096,
      },
      {
        type: 'model_call_ended',
        at: 1_200,
        place,
        callId: 'c1',
        provider: 'openai',
        model: 'openai:gpt-4.1-mini',
        purpose: 'compaction',
        durationMs: 190,
        finishReason: 'stop',
        tokens: { input: 900, cachedInput: 0, cacheWrite: 0, output: 80, reasoning: 20 },
      },
      { type: 'tool_started', at: 1_300, place, toolCallId: 'call_1', tool: 'fetch_url' },
      {
        type: 'tool_ended',
        at: 1_400,
        place,
        toolCallId: 'call_1',
        tool: 'fetch_url',
        outcome: 'error',
        durationMs: 100,
      },
      {
        type: 'model_call_started',
        at: 1_500,
        place,
        callId: 'c2',
        provider: 'openai',
        model: 'openai:gpt-4.1',
        purpose: 'turn',
      },
    );
    traces.endOpen();
    const compaction = named('chat gpt-4.1-mini');
    expect(compaction.attributes).toMatchObject({
      'chat_agent.call.purpose': 'compaction',
      'gen_ai.request.max_tokens': 4_096,
      'gen_ai.usage.input_tokens': 900,
      'gen_ai.usage.reasoning.output_tokens': 20,
    });
    expect(compaction.attributes).not.toHaveProperty('gen_ai.usage.cache_read.input_tokens');
    const tool = named('execute_tool fetch_url');
    expect(tool.attributes['error.type']).toBe('tool_error');
    expect(tool.status.code).toBe(2);
    for (const name of ['chat gpt-4.1', 'invoke_agent chat-agent']) {
      expect(named(name).attributes['chat_agent.open_at_shutdown'], name).toBe(true);
      expect(ms(named(name), 'endTime'), name).toBe(9_000);
    }
  });

  it('content: recorded only when capture is on, masked field by field, tool arguments as the object the model meant', () => {
    const content = {
      input: [
        { role: 'system' as const, content: 'Be brief.' },
        {
          role: 'user' as const,
          content: [
            { type: 'text' as const, text: 'my password is hunter2-secret' },
            { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
      output: {
        text: null,
        toolCalls: [
          { id: 'call_1', name: 'write_file', arguments: '{"path":"p.txt","content":"hunter2-secret \\"quoted\\""}' },
        ],
        finishReason: 'tool_calls' as const,
      },
    };
    const ended = {
      type: 'model_call_ended' as const,
      at: 2_000,
      place,
      callId: 'c1',
      provider: 'openai',
      model: 'openai:gpt-4.1',
      purpose: 'turn' as const,
      durationMs: 1_000,
      finishReason: 'tool_calls',
      content,
    };
    const started = {
      type: 'model_call_started' as const,
      at: 1_000,
      place,
      callId: 'c1',
      provider: 'openai',
      model: 'openai:gpt-4.1',
      purpose: 'turn' as const,
    };

    const off = sink(false);
    off.feed(started, ended);
    expect(off.named('chat gpt-4.1').attributes).not.toHaveProperty('gen_ai.input.messages');

    const on = sink(true);
    on.feed(started, ended);
    const attributes = on.named('chat gpt-4.1').attributes;
    expect(JSON.parse(String(attributes['gen_ai.input.messages']))).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'my password is [secret]' }, { type: 'image' }] },
    ]);
    expect(JSON.parse(String(attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        finish_reason: 'tool_calls',
        parts: [
          {
            type: 'tool_call',
            id: 'call_1',
            name: 'write_file',
            arguments: { path: 'p.txt', content: '[secret] "quoted"' },
          },
        ],
      },
    ]);
    expect(JSON.stringify(attributes)).not.toContain('hunter2');
    expect(JSON.stringify(attributes)).not.toContain('AAAA');
  });
  it('an event time is taken as epoch milliseconds however small, never as time since the process started', () => {
    // The SDK reads a bare number at or below performance.now() as process-relative: times of a
    // few milliseconds are below it in any process, so this fails if a number is handed over.
    const { feed, named } = sink();
    feed(
      { type: 'turn_started', at: 2, place, kind: 'run', by: 'U1', model: 'openai:gpt-4.1' },
      { type: 'turn_ended', at: 7, place, status: 'completed', iterations: 1 },
    );
    const turn = named('invoke_agent chat-agent');
    expect([ms(turn, 'startTime'), ms(turn, 'endTime')]).toEqual([2, 7]);
  });
});
