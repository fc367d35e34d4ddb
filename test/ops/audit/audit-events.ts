// Operations events for the audit tests: one of every kind the trail records (and a few it
// does not), at a given moment, in a given channel.
import type { OpsEvent, Place } from '../../../src/ops/ops-events.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

export function place(channel = 'C1', sessionId = `test:W1:${channel}:T1`): Place {
  return { sessionId, platform: 'test', workspace: 'W1', channel };
}

/** One event of each audited kind (11 records, in this order), then three the trail leaves out. */
export function everyKind(at: number, where: Place = place()): OpsEvent[] {
  return [
    { type: 'turn_started', at, place: where, kind: 'run', by: 'U1', model: 'openai:gpt-4.1' },
    {
      type: 'tool_ended',
      at: at + 1,
      place: where,
      toolCallId: `call_${at}_1`,
      tool: 'run_shell',
      outcome: 'ok',
      durationMs: 40,
      args: '{"command":"git branch -D old"}',
    },
    {
      type: 'wait_ended',
      at: at + 2,
      place: where,
      toolCallId: `call_${at}_1`,
      tool: 'run_shell',
      kind: 'approval',
      decision: 'once',
      by: 'U9',
      waitedMs: 1200,
    },
    {
      type: 'wait_ended',
      at: at + 3,
      place: where,
      toolCallId: `call_${at}_2`,
      tool: 'ask_user',
      kind: 'question',
      decision: 'closed',
      waitedMs: 50,
    },
    {
      type: 'grant_changed',
      at: at + 4,
      place: where,
      by: 'U9',
      change: 'given',
      what: 'run_shell: git status',
      scope: 'giver',
    },
    { type: 'stop_requested', at: at + 5, place: where, by: 'U2' },
    { type: 'stopped', at: at + 6, place: where, by: 'U2', latencyMs: 30 },
    { type: 'model_switched', at: at + 7, place: where, by: 'U1', from: 'openai:gpt-4.1', to: 'openai:gpt-4.1-mini' },
    { type: 'budget_refused', at: at + 8, place: where, limit: 'user_daily', what: 'model_call' },
    { type: 'budget_continued', at: at + 9, place: where, by: 'U9', limit: 'user_daily' },
    { type: 'forgotten', at: at + 10, place: where, by: 'U1' },
    // Not records: the metrics and the spend ledger hold these.
    {
      type: 'spend',
      at: at + 11,
      place: where,
      model: 'openai:gpt-4.1',
      usd: 0.01,
      tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 },
    },
    { type: 'steered', at: at + 12, place: where },
    { type: 'platform_call', at: at + 13, platform: 'test', method: 'chat.postMessage', outcome: 'ok' },
  ];
}

export const RECORDED_PER_BATCH = 11;
