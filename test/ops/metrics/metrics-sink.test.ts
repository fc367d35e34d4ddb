// The metrics sink on its own: events in, the Prometheus page out (parsed with a real
// parser). What the scripted session through the bot does not reach: a turn paused by a spend
// limit, spend by scope, unpriced tokens, refusals, and the caps that keep every label bounded.
import { describe, expect, it } from 'vitest';
import { cleanLabelValue, OTHER } from '../../../src/ops/metrics/bounded-labels.js';
import { LABEL_CAPS, MetricsSink, type LoadReading } from '../../../src/ops/metrics/index.js';
import { OpsBus, type OpsEvent, type Place, type TokenCounts } from '../../../src/ops/ops-events.js';
import { parseMetrics } from './scrape.js';

const place: Place = { sessionId: 'sess-7f3a9c', platform: 'slack', workspace: 'T0SECRET01', channel: 'C0SECRET02' };
const tokens: TokenCounts = { input: 1200, cachedInput: 800, cacheWrite: 0, output: 300, reasoning: 50 };

/** The registry's names, as core.ts gives them: the built-ins here, and the cap test's MCP tools. */
const knownTools = (name: string): boolean =>
  ['run_shell', 'write_file', 'fetch_url'].includes(name) || name.startsWith('mcp__server__tool_');

function sinkOnBus(load?: () => LoadReading) {
  const sink = new MetricsSink({ knownTools, ...(load ? { load } : {}) });
  const bus = new OpsBus();
  bus.add(sink);
  return { sink, emit: (event: OpsEvent) => bus.emit(event), read: async () => parseMetrics(await sink.render()) };
}

function modelCall(
  emit: (event: OpsEvent) => void,
  callId: string,
  model: string,
  options: { error?: string; firstTokenAfterMs?: number; durationMs?: number } = {},
) {
  emit({ type: 'model_call_started', at: 1_000, place, callId, provider: 'openai', model, purpose: 'turn' });
  if (options.firstTokenAfterMs !== undefined)
    emit({ type: 'model_call_first_token', at: 1_000 + options.firstTokenAfterMs, place, callId });
  emit({
    type: 'model_call_ended',
    at: 1_000 + (options.durationMs ?? 2_000),
    place,
    callId,
    provider: 'openai',
    model,
    purpose: 'turn',
    requester: 'U0SECRET03',
    durationMs: options.durationMs ?? 2_000,
    ...(options.error ? { error: options.error } : { tokens, finishReason: 'stop' }),
  });
}

describe('the metrics sink', () => {
  it('counts a turn paused by a spend limit as budget_paused, and the refusal by limit and what', async () => {
    const { emit, read } = sinkOnBus();
    emit({ type: 'budget_refused', at: 1, place, limit: 'channel_daily', what: 'model_call' });
    emit({ type: 'turn_ended', at: 2, place, status: 'error', errorKind: 'budget', iterations: 1 });
    emit({ type: 'turn_ended', at: 3, place, status: 'error', errorKind: 'server', iterations: 1 });
    emit({ type: 'budget_refused', at: 4, place, limit: 'user_daily', what: 'new_request' });
    emit({ type: 'budget_continued', at: 5, place, by: 'U0ADMIN', limit: 'channel_daily' });
    const m = await read();
    expect(m.value('chat_agent_turns_total', { platform: 'slack', outcome: 'budget_paused' })).toBe(1);
    expect(m.value('chat_agent_turns_total', { platform: 'slack', outcome: 'error' })).toBe(1);
    expect(m.value('chat_agent_budget_refusals_total', { limit: 'channel_daily', what: 'model_call' })).toBe(1);
    expect(m.value('chat_agent_budget_refusals_total', { limit: 'user_daily', what: 'new_request' })).toBe(1);
    expect(m.value('chat_agent_budget_continues_total')).toBe(1);
  });

  it('model calls: duration with error_type only on failures, time to first token from the call start, tokens by type', async () => {
    const { emit, read } = sinkOnBus();
    modelCall(emit, 'a', 'openai:gpt-4.1', { firstTokenAfterMs: 250, durationMs: 2_000 });
    modelCall(emit, 'b', 'openai:gpt-4.1', { error: 'rate_limit', durationMs: 100 });
    const m = await read();
    const chat = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'openai', gen_ai_request_model: 'gpt-4.1' };
    const ok = m
      .samples('gen_ai_client_operation_duration_seconds', chat)
      .find((s) => s.labels.error_type === undefined)!;
    expect(ok).toMatchObject({ count: 1, sum: 2 });
    expect(
      m.samples('gen_ai_client_operation_duration_seconds', { ...chat, error_type: 'rate_limit' })[0],
    ).toMatchObject({ count: 1, sum: 0.1 });
    expect(m.samples('gen_ai_client_operation_time_to_first_chunk_seconds', chat)[0]).toMatchObject({
      count: 1,
      sum: 0.25,
    });
    expect(m.samples('gen_ai_client_token_usage', { ...chat, gen_ai_token_type: 'input' })[0]).toMatchObject({
      count: 1,
      sum: 1200,
    });
    expect(m.samples('gen_ai_client_token_usage', { ...chat, gen_ai_token_type: 'output' })[0]).toMatchObject({
      count: 1,
      sum: 300,
    });
    // The conventions' two token types only; the rest in a counter of the bot's own.
    expect(new Set(m.samples('gen_ai_client_token_usage').map((s) => s.labels.gen_ai_token_type))).toEqual(
      new Set(['input', 'output']),
    );
    expect(m.value('chat_agent_model_tokens_total', { token_type: 'cached_input' })).toBe(800);
    expect(m.value('chat_agent_model_tokens_total', { token_type: 'reasoning' })).toBe(50);
    expect(m.samples('chat_agent_model_tokens_total', { token_type: 'cache_write' })).toEqual([]);
  });

  it('spend counts once in each scope the call has (a kind, never an id); a call with no price counts its tokens apart', async () => {
    const { emit, read } = sinkOnBus();
    emit({ type: 'spend', at: 1, place, requester: 'U0SECRET03', model: 'openai:gpt-4.1', usd: 0.25, tokens });
    emit({ type: 'spend', at: 2, place, model: 'openai:gpt-4.1', usd: 0.5, tokens });
    emit({ type: 'spend', at: 3, place, requester: 'U0SECRET03', model: 'openai:mystery', tokens });
    const m = await read();
    expect(m.value('chat_agent_spend_usd_total', { scope: 'workspace' })).toBe(0.75);
    expect(m.value('chat_agent_spend_usd_total', { scope: 'channel' })).toBe(0.75);
    expect(m.value('chat_agent_spend_usd_total', { scope: 'user' })).toBe(0.25);
    expect(m.value('chat_agent_spend_unpriced_tokens_total', { token_type: 'input' })).toBe(1200);
    expect(m.value('chat_agent_spend_unpriced_tokens_total', { token_type: 'output' })).toBe(300);
  });

  it('caps every open-ended label: tools, models and methods past their cap count as `other`', async () => {
    const { emit, read } = sinkOnBus();
    const tools = LABEL_CAPS.tool + 10;
    for (let i = 0; i < tools; i++)
      emit({
        type: 'tool_ended',
        at: i,
        place,
        toolCallId: `call-${i}`,
        tool: `mcp__server__tool_${i}`,
        outcome: 'ok',
      });
    for (let i = 0; i < LABEL_CAPS.model + 5; i++) modelCall(emit, `m${i}`, `openai:model-${i}`);
    for (let i = 0; i < LABEL_CAPS.method + 5; i++)
      emit({ type: 'platform_call', at: i, platform: 'discord', method: `GET /route-${i}/:id`, outcome: 'ok' });
    const m = await read();
    const toolValues = m.samples('chat_agent_tool_calls_total').map((s) => s.labels.tool);
    expect(toolValues).toHaveLength(LABEL_CAPS.tool + 1);
    expect(m.value('chat_agent_tool_calls_total', { tool: 'other' })).toBe(10);
    expect(m.value('chat_agent_tool_calls_total')).toBe(tools);
    expect(m.samples('chat_agent_model_tokens_total', { token_type: 'input' })).toHaveLength(LABEL_CAPS.model + 1);
    expect(m.value('chat_agent_platform_calls_total', { method: 'other' })).toBe(5);
    expect(m.value('chat_agent_platform_calls_total', { method: 'GET /route-0/:id' })).toBe(1);
  });

  it('a tool name the model made up is `unknown`, never a label of its own, however many it makes up', async () => {
    const { emit, read, sink } = sinkOnBus();
    const madeUp = [
      'Q3 layoffs list: alice@corp.com',
      'write_file ',
      'WRITE_FILE',
      ...Array.from({ length: 300 }, (_unused, i) => `leak ${i}`),
    ];
    for (const [i, tool] of madeUp.entries())
      emit({ type: 'tool_ended', at: i, place, toolCallId: `call-${i}`, tool, outcome: 'error' });
    emit({ type: 'tool_ended', at: 999, place, toolCallId: 'call-ok', tool: 'write_file', outcome: 'ok' });
    const page = await sink.render();
    expect(page).not.toMatch(/layoffs|alice|leak|WRITE_FILE/);
    const m = await read();
    expect(m.value('chat_agent_tool_calls_total', { tool: 'unknown', outcome: 'error' })).toBe(madeUp.length);
    expect(m.value('chat_agent_tool_calls_total', { tool: 'write_file', outcome: 'ok' })).toBe(1);
    expect(new Set(m.samples('chat_agent_tool_calls_total').map((s) => s.labels.tool))).toEqual(
      new Set(['unknown', 'write_file']),
    );
  });

  it('keeps no id and no text of an event: the place, the requester, a tool call id, argument summaries', async () => {
    const { sink, emit } = sinkOnBus();
    emit({ type: 'turn_started', at: 1, place, kind: 'run', by: 'U0SECRET03', model: 'openai:gpt-4.1' });
    emit({ type: 'wait_started', at: 2, place, toolCallId: 'call_SECRET04', tool: 'run_shell', kind: 'approval' });
    emit({
      type: 'wait_ended',
      at: 3,
      place,
      toolCallId: 'call_SECRET04',
      tool: 'run_shell',
      kind: 'approval',
      decision: 'deny',
      by: 'U0SECRET03',
      waitedMs: 4_000,
    });
    emit({
      type: 'tool_ended',
      at: 4,
      place,
      toolCallId: 'call_SECRET04',
      tool: 'run_shell',
      outcome: 'denied',
      args: 'rm -rf SECRET05',
    });
    emit({ type: 'stop_requested', at: 5, place, by: 'U0SECRET03' });
    emit({ type: 'stopped', at: 6, place, by: 'U0SECRET03', latencyMs: 120 });
    emit({ type: 'grant_changed', at: 7, place, by: 'U0SECRET03', change: 'given', what: 'SECRET06', scope: 'thread' });
    emit({ type: 'model_switched', at: 8, place, by: 'U0SECRET03', from: 'openai:gpt-4.1', to: 'openai:SECRET07' });
    const text = await sink.render();
    expect(text).not.toMatch(/SECRET|sess-7f3a9c/);
    const m = await parseMetrics(text);
    expect(m.value('chat_agent_approvals_total', { kind: 'approval', decision: 'deny' })).toBe(1);
    expect(m.samples('chat_agent_approval_wait_seconds', { kind: 'approval', decision: 'deny' })[0]).toMatchObject({
      count: 1,
      sum: 4,
    });
    expect(m.value('chat_agent_tool_calls_total', { tool: 'run_shell', outcome: 'denied' })).toBe(1);
    expect(m.samples('chat_agent_stop_latency_seconds', { platform: 'slack' })[0]).toMatchObject({
      count: 1,
      sum: 0.12,
    });
  });

  it('reads the gauges once per scrape from the load callback', async () => {
    let reads = 0;
    const { read } = sinkOnBus(() => {
      reads++;
      return { liveSessions: 3, workingSessions: 2, queuedSteering: 4, modelCallsRunning: 2, modelCallsWaiting: 5 };
    });
    const m = await read();
    expect(reads).toBe(1);
    expect(m.value('chat_agent_live_sessions')).toBe(3);
    expect(m.value('chat_agent_working_sessions')).toBe(2);
    expect(m.value('chat_agent_queued_steering_inputs')).toBe(4);
    expect(m.value('chat_agent_model_calls_running')).toBe(2);
    expect(m.value('chat_agent_model_calls_waiting')).toBe(5);
    await read();
    expect(reads).toBe(2);
  });

  it('two sinks in one process keep their own counts (no global registry)', async () => {
    const one = sinkOnBus();
    const two = sinkOnBus();
    one.emit({ type: 'steered', at: 1, place });
    expect((await one.read()).value('chat_agent_steering_inputs_total')).toBe(1);
    expect((await two.read()).value('chat_agent_steering_inputs_total')).toBe(0);
  });

  it('a label value is clipped and reduced to a plain alphabet: never a sentence, never empty', () => {
    expect(cleanLabelValue('mcp__github__create_issue')).toBe('mcp__github__create_issue');
    expect(cleanLabelValue('POST /channels/:id/messages')).toBe('POST /channels/:id/messages');
    expect(cleanLabelValue('tool"}\nfake_series{x="1')).toBe('tool___fake_series_x__1');
    expect(cleanLabelValue('x'.repeat(500))).toHaveLength(80);
    expect(cleanLabelValue('')).toBe(OTHER);
    expect(cleanLabelValue(undefined)).toBe(OTHER);
  });
});
