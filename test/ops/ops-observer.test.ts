// The engine's events as the operations side hears them: facts only (no text a person or the
// model wrote), the tool's arguments as a short masked summary, a stop's latency from the
// request, the error that ended a turn, and nothing kept once the turn ends.
import { describe, expect, it } from 'vitest';
import type { EngineEvent, InboxItem } from '../../src/engine/index.js';
import { OpsBus, type OpsEvent } from '../../src/ops/ops-events.js';
import { ARGS_SUMMARY_CHARS, OpsObserver } from '../../src/ops/ops-observer.js';
import { decisionOf, sessionOps } from '../../src/ops/session-ops.js';
import type { SessionRecord } from '../../src/store/session-store.js';
import { sessionRecordFor } from '../support/engine-kit.js';

const SESSION: SessionRecord = sessionRecordFor({ platform: 'slack', workspace: 'T1', channel: 'C1', thread: '1.0' });
const PLACE = { sessionId: SESSION.id, platform: 'slack', workspace: 'T1', channel: 'C1' };

function setup() {
  const bus = new OpsBus();
  const heard: OpsEvent[] = [];
  bus.add({ handle: (event) => heard.push(event) });
  let clock = 0;
  const now = () => (clock += 5);
  const observer = new OpsObserver(bus, { mask: (text) => text.replaceAll('hunter2', '[secret]'), now });
  return {
    heard,
    observer,
    play: (...events: EngineEvent[]) => events.forEach((event) => observer.onEvent(SESSION, event)),
    ops: sessionOps(bus, observer, now),
  };
}

describe('the operations observer', () => {
  it('reports a turn with an approved tool call as facts, with a masked short summary of the arguments and no text', () => {
    const { heard, observer, play, ops } = setup();
    const args = { command: `deploy --token hunter2 ${'x'.repeat(400)}` };
    play(
      {
        type: 'turn_start',
        kind: 'run',
        input: 'please deploy the thing',
        source: { platform: 'slack', userId: 'U2' },
      },
      { type: 'assistant_delta', text: 'On it' },
      { type: 'tool_proposed', toolCallId: 'c1', name: 'run_shell', arguments: args },
      { type: 'permission_required', toolCallId: 'c1', name: 'run_shell', arguments: args, reason: 'runs a command' },
    );
    const item: InboxItem = {
      id: 'i1',
      sessionId: SESSION.id,
      toolCallId: 'c1',
      kind: 'approval',
      choices: ['once', 'always_tool', 'deny'],
      state: 'resolved',
      createdAt: 0,
      command: 'deploy',
    };
    ops.decided(SESSION, item, { kind: 'approval', outcome: 'always_tool', by: 'A1' }, 'A1');
    play(
      { type: 'tool_started', toolCallId: 'c1', name: 'run_shell' },
      {
        type: 'tool_finished',
        toolCallId: 'c1',
        name: 'run_shell',
        status: 'ok',
        resultPreview: 'deployed',
        durationMs: 42,
      },
      { type: 'turn_end', status: 'completed', iterations: 2, pendingSteering: 0 },
    );
    expect(heard.map((event) => event.type)).toEqual([
      'turn_started',
      'wait_started',
      'wait_ended',
      'grant_changed',
      'tool_started',
      'tool_ended',
      'turn_ended',
    ]);
    expect(heard[0]).toEqual({
      type: 'turn_started',
      at: expect.any(Number),
      place: PLACE,
      kind: 'run',
      by: 'U2',
      model: 'openai:gpt-4.1',
    });
    expect(heard[2]).toMatchObject({ tool: 'run_shell', kind: 'approval', decision: 'always_tool', by: 'A1' });
    expect(heard[3]).toMatchObject({ change: 'given', what: 'run_shell', by: 'A1', scope: 'giver' });
    const ended = heard[5] as Extract<OpsEvent, { type: 'tool_ended' }>;
    expect(ended).toMatchObject({ tool: 'run_shell', outcome: 'ok', durationMs: 42 });
    expect(ended.args).toContain('[secret]');
    expect(ended.args).not.toContain('hunter2');
    expect(ended.args!.length).toBe(ARGS_SUMMARY_CHARS);
    const everything = JSON.stringify(heard);
    for (const text of ['please deploy', 'On it', 'deployed', 'runs a command']) expect(everything).not.toContain(text);
    expect(observer.toolOf(SESSION.id, 'c1')).toBeUndefined();
  });

  it("a stop's latency runs from the request to the interruption; a turn's error kind comes with its end", () => {
    const { heard, observer, play } = setup();
    play({ type: 'turn_start', kind: 'run', input: 'x' });
    observer.stopRequested(SESSION, 'U3');
    play(
      { type: 'interrupted', iterations: 1 },
      { type: 'turn_end', status: 'interrupted', iterations: 1, pendingSteering: 0 },
    );
    expect(heard.filter((event) => event.type === 'stop_requested' || event.type === 'stopped')).toEqual([
      { type: 'stop_requested', at: 10, place: PLACE, by: 'U3' },
      { type: 'stopped', at: 15, place: PLACE, by: 'U3', latencyMs: 5 },
    ]);
    play(
      { type: 'turn_start', kind: 'retry', input: null },
      { type: 'error', message: 'Paused', errorKind: 'budget' },
      { type: 'turn_end', status: 'error', iterations: 0, pendingSteering: 0 },
    );
    expect(heard.at(-2)).toMatchObject({ type: 'turn_started', kind: 'retry', by: 'U1' });
    expect(heard.at(-1)).toMatchObject({ type: 'turn_ended', status: 'error', errorKind: 'budget' });
  });

  it('a stop while a call waits on a person ends that wait (no click: interrupted), once; a clicked one is not ended again', () => {
    const { heard, observer, play, ops } = setup();
    const args = { path: 'a.txt' };
    play(
      { type: 'turn_start', kind: 'run', input: 'x' },
      { type: 'tool_proposed', toolCallId: 'c1', name: 'write_file', arguments: args },
      { type: 'permission_required', toolCallId: 'c1', name: 'write_file', arguments: args, reason: 'writes' },
    );
    observer.stopRequested(SESSION, 'U3');
    // The engine closes the prompt itself: neither a click nor the session layer reports it.
    play(
      { type: 'tool_finished', toolCallId: 'c1', name: 'write_file', status: 'interrupted', resultPreview: '' },
      { type: 'interrupted', iterations: 1 },
    );
    expect(heard.filter((event) => event.type === 'wait_ended')).toEqual([
      {
        type: 'wait_ended',
        at: 25,
        place: PLACE,
        toolCallId: 'c1',
        tool: 'write_file',
        kind: 'approval',
        decision: 'interrupted',
        waitedMs: 10,
      },
    ]);
    // Approved by a click, then stopped before it ran: its wait ended with the click.
    play(
      { type: 'tool_proposed', toolCallId: 'c2', name: 'write_file', arguments: args },
      { type: 'permission_required', toolCallId: 'c2', name: 'write_file', arguments: args, reason: 'writes' },
    );
    const item: InboxItem = {
      id: 'i2',
      sessionId: SESSION.id,
      toolCallId: 'c2',
      kind: 'approval',
      choices: ['once', 'deny'],
      state: 'resolved',
      createdAt: 0,
    };
    ops.decided(SESSION, item, { kind: 'approval', outcome: 'once', by: 'A1' }, 'A1');
    play({ type: 'tool_finished', toolCallId: 'c2', name: 'write_file', status: 'interrupted', resultPreview: '' });
    expect(
      heard.filter((event) => event.type === 'wait_ended').map((event) => (event as { decision: string }).decision),
    ).toEqual(['interrupted', 'once']);
  });

  it('says a decision in a word, never the answer a person typed', () => {
    expect(decisionOf({ kind: 'question', answer: 'my password is hunter2' })).toBe('answered');
    expect(decisionOf({ kind: 'plan', approved: false, feedback: 'no' })).toBe('rejected');
    expect(decisionOf({ kind: 'directory', granted: true, path: '/srv' })).toBe('granted');
  });
});
