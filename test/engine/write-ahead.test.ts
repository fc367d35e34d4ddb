// A tool call that started never runs twice: the engine records each start in the ledger
// before invoking the tool, and a resumed turn decides each unanswered call on its own.
// A "crash" here is an engine abandoned mid-turn; what survives is what was persisted:
// the appended messages, the inbox and the ledger.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  approverFromInbox,
  defineTool,
  InMemoryToolLedger,
  INTERRUPTED_BY_RESTART,
  TurnEngine,
  type EngineEvent,
  type Message,
  type ToolDefinition,
  type ToolLedger,
  type ToolMetadata,
} from '../../src/engine/index.js';
import { InMemoryInbox } from '../support/in-memory-inbox.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { collect, hangingTool, lowRisk, only, recordingTool, risky, waitFor } from '../support/engine-kit.js';

interface World {
  store: Message[];
  inbox: InMemoryInbox;
  ledger: InMemoryToolLedger;
}

function world(): World {
  return { store: [], inbox: new InMemoryInbox(), ledger: new InMemoryToolLedger() };
}

function engineIn(
  w: World,
  steps: Step[],
  tools: ToolDefinition[],
  options: { messages?: Message[]; ledger?: ToolLedger } = {},
) {
  const provider = new ScriptedProvider(steps);
  const engine = new TurnEngine({
    provider,
    model: 'm',
    sessionId: 's1',
    tools,
    ...(options.messages ? { messages: structuredClone(options.messages) } : {}),
    ports: { inbox: w.inbox, ledger: options.ledger ?? w.ledger, approver: approverFromInbox(w.inbox) },
    hooks: {
      onAppend: (message) => {
        w.store.push(structuredClone(message));
      },
    },
  });
  return { engine, provider };
}

/** Run a turn until `until` holds for an event, then abandon it (the process dies). */
async function runUntil(
  engine: TurnEngine,
  text: string,
  until: (event: EngineEvent) => boolean,
): Promise<EngineEvent[]> {
  const events = engine.run(text)[Symbol.asyncIterator]();
  const seen: EngineEvent[] = [];
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error('the turn ended first');
    seen.push(next.value);
    if (until(next.value)) break;
  }
  void events.next(); // the pull that would have gone on; it never completes
  return seen;
}

function toolResults(messages: readonly { role: string; tool_call_id?: string; content?: unknown }[]) {
  return messages.filter((m) => m.role === 'tool').map((m) => ({ id: m.tool_call_id, content: String(m.content) }));
}

describe('write-ahead start', () => {
  it('the ledger records a call as started before the tool runs', async () => {
    const w = world();
    const seenInTool: boolean[] = [];
    const tool = defineTool({
      name: 'write',
      description: 'write',
      schema: z.object({}),
      metadata: lowRisk,
      execute: async (_args, { toolCallId }) => {
        seenInTool.push((await w.ledger.started('s1', toolCallId)).has(toolCallId));
        return 'ok';
      },
    });
    const { engine } = engineIn(w, [callTools(call('write')), say('done')], [tool]);
    await collect(engine.run('go'));
    expect(seenInTool).toEqual([true]);
  });

  it('a concurrent batch is recorded with one write, before any of its tools runs', async () => {
    const w = world();
    const writes: string[][] = [];
    const ledger: ToolLedger = {
      markStarted: async (sessionId, round, ids) => {
        writes.push([...ids]);
        await w.ledger.markStarted(sessionId, round, ids);
      },
      started: (sessionId, round) => w.ledger.started(sessionId, round),
    };
    const log: string[] = [];
    const tools = ['a', 'b', 'c'].map((name) => recordingTool(name, lowRisk, { log, delayMs: 5 }));
    const { engine } = engineIn(w, [callTools(call('a'), call('b'), call('c')), say('done')], tools, { ledger });
    await collect(engine.run('go'));
    expect(writes).toHaveLength(1);
    expect(writes[0]).toHaveLength(3);
    expect(log.filter((l) => l.startsWith('end:'))).toHaveLength(3);
  });

  it('when the start cannot be recorded, the tool does not run and the model is told why', async () => {
    const w = world();
    const log: string[] = [];
    const ledger: ToolLedger = {
      markStarted: async () => Promise.reject(new Error('disk full')),
      started: async () => new Set(),
    };
    const { engine, provider } = engineIn(
      w,
      [callTools(call('write')), say('I could not run it')],
      [recordingTool('write', lowRisk, { log })],
      { ledger },
    );
    const events = await collect(engine.run('go'));
    expect(log).toEqual([]);
    expect(only(events, 'tool_finished')).toMatchObject([
      { status: 'error', resultPreview: expect.stringContaining('could not record') },
    ]);
    expect(provider.requests).toHaveLength(2);
  });
});

describe('resume decides each unanswered call on its own', () => {
  it('a call that started is answered "interrupted by a restart", never run again, and the turn goes on', async () => {
    const w = world();
    const runs: string[] = [];
    const first = engineIn(
      w,
      [callTools(call('migrate'))],
      [hangingTool('migrate', { risk: 'low', category: 'write' }, runs)],
    );
    await runUntil(first.engine, 'migrate', (e) => e.type === 'tool_started');
    await waitFor(() => runs.length === 1);

    const second = engineIn(
      w,
      [say('It was interrupted; shall I check?')],
      [hangingTool('migrate', { risk: 'low', category: 'write' }, runs)],
      { messages: w.store },
    );
    const events = await collect(second.engine.resume());
    expect(runs).toEqual(['migrate']);
    expect(only(events, 'tool_started')).toEqual([]);
    expect(only(events, 'tool_finished')).toMatchObject([
      {
        name: 'migrate',
        status: 'interrupted',
        restart: 'not_rerun',
        resultPreview: expect.stringContaining(INTERRUPTED_BY_RESTART),
      },
    ]);
    expect(only(events, 'turn_end')).toMatchObject([{ status: 'completed' }]);
    const sent = second.provider.requests[0]!.messages;
    expect(toolResults(sent)).toEqual([
      { id: expect.any(String), content: expect.stringContaining(INTERRUPTED_BY_RESTART) },
    ]);
  });

  it('a call that started runs again when its tool is idempotent, and its card is told so', async () => {
    const w = world();
    const runs: string[] = [];
    const read: ToolMetadata = { risk: 'low', category: 'read', idempotent: true };
    const first = engineIn(w, [callTools(call('read_file'))], [hangingTool('read_file', read, runs)]);
    await runUntil(first.engine, 'read', (e) => e.type === 'tool_started');
    const second = engineIn(w, [say('Here it is.')], [recordingTool('read_file', read, { log: runs })], {
      messages: w.store,
    });
    const events = await collect(second.engine.resume());
    expect(runs).toEqual(['read_file', 'start:read_file', 'end:read_file']);
    expect(only(events, 'tool_started')).toMatchObject([{ name: 'read_file', restart: 'rerun' }]);
    expect(only(events, 'tool_finished')).toMatchObject([{ status: 'ok' }]);
  });

  it('a call whose approval was clicked but that never started runs, without asking again', async () => {
    const w = world();
    const log: string[] = [];
    const first = engineIn(w, [callTools(call('deploy'))], [recordingTool('deploy', risky, { log })]);
    const seen = await runUntil(first.engine, 'deploy', (e) => e.type === 'permission_required');
    await waitFor(() => w.inbox.pending('s1').length === 1);
    const toolCallId = only(seen, 'permission_required')[0]!.toolCallId;
    w.inbox.resolve(w.inbox.findByCall('s1', toolCallId)!.id, { kind: 'approval', outcome: 'once' });

    const second = engineIn(w, [say('Deployed.')], [recordingTool('deploy', risky, { log })], { messages: w.store });
    const events = await collect(second.engine.resume());
    expect(log).toEqual(['start:deploy', 'end:deploy']);
    expect(only(events, 'permission_required')).toEqual([]);
  });

  it('a call that needs no approval and never started simply runs', async () => {
    const w = world();
    const log: string[] = [];
    // The crash came after the assistant message was stored, before any tool started.
    w.store.push(
      { role: 'user', content: 'look' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{}' } }],
      },
    );
    const { engine } = engineIn(w, [say('seen')], [recordingTool('look', lowRisk, { log })], { messages: w.store });
    await collect(engine.resume());
    expect(log).toEqual(['start:look', 'end:look']);
  });

  it('a call whose approval is still pending asks with the same prompt (its buttons keep working)', async () => {
    const w = world();
    const first = engineIn(w, [callTools(call('deploy'))], [recordingTool('deploy', risky)]);
    await runUntil(first.engine, 'deploy', (e) => e.type === 'permission_required');
    await waitFor(() => w.inbox.pending('s1').length === 1);
    const item = w.inbox.pending('s1')[0]!;
    const second = engineIn(w, [say('ok')], [recordingTool('deploy', risky)], { messages: w.store });
    const events = await collect(second.engine.resume(), (event) => {
      if (event.type === 'permission_required')
        setTimeout(() => w.inbox.resolve(item.id, { kind: 'approval', outcome: 'deny' }), 1);
    });
    expect(only(events, 'permission_required')).toHaveLength(1);
    expect(w.inbox.pending('s1')).toEqual([]);
    expect(only(events, 'tool_finished')).toMatchObject([{ status: 'denied' }]);
  });

  it('a mixed batch is handled call by call; the model gets one result per call, in call order', async () => {
    const w = world();
    const runs: string[] = [];
    const store = (): Message[] => w.store;
    // One round of four: a was done, b was running (started), c was approved but never
    // started, d needs no approval and never started.
    const calls = ['a', 'b', 'c', 'd'].map((id) => ({
      id,
      type: 'function' as const,
      function: { name: `t_${id}`, arguments: '{}' },
    }));
    store().push(
      { role: 'user', content: 'four things' },
      { role: 'assistant', content: null, tool_calls: calls },
      { role: 'tool', tool_call_id: 'a', content: 'a done' },
    );
    await w.ledger.markStarted('s1', 'a', ['a', 'b']);
    const approval = w.inbox.open({
      sessionId: 's1',
      toolCallId: 'c',
      kind: 'approval',
      choices: ['once', 'always_tool', 'deny'],
    });
    w.inbox.resolve(approval.id, { kind: 'approval', outcome: 'once' });
    const tools = [
      recordingTool('t_a', lowRisk, { log: runs }),
      recordingTool('t_b', { risk: 'medium', category: 'write' }, { log: runs }),
      recordingTool('t_c', risky, { log: runs }),
      recordingTool('t_d', lowRisk, { log: runs }),
    ];
    const { engine, provider } = engineIn(w, [say('Three of four done; b was interrupted.')], tools, {
      messages: store(),
    });
    const events = await collect(engine.resume());
    expect(runs).toEqual(['start:t_c', 'end:t_c', 'start:t_d', 'end:t_d']);
    expect(only(events, 'tool_finished').map((e) => [e.toolCallId, e.status])).toEqual([
      ['b', 'interrupted'],
      ['c', 'ok'],
      ['d', 'ok'],
    ]);
    const sent = provider.requests[0]!.messages;
    expect(toolResults(sent).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(toolResults(sent)[1]!.content).toContain(INTERRUPTED_BY_RESTART);
  });

  it('the ledger keeps one round per session: a new round forgets the old one', async () => {
    const ledger = new InMemoryToolLedger();
    await ledger.markStarted('s1', 'r1', ['x']);
    await ledger.markStarted('s1', 'r1', ['y']);
    expect([...(await ledger.started('s1', 'r1'))]).toEqual(['x', 'y']);
    await ledger.markStarted('s1', 'r2', ['z']);
    expect([...(await ledger.started('s1', 'r1'))]).toEqual([]);
    expect([...(await ledger.started('s1', 'r2'))]).toEqual(['z']);
  });
});

describe('a stop always lands', () => {
  it('between run() and the first step: the message is kept, the model is never called', async () => {
    const w = world();
    const { engine, provider } = engineIn(w, [say('never')], []);
    const events = engine.run('hello');
    expect(engine.requestInterrupt()).toBe(true);
    const seen = await collect(events);
    expect(provider.requests).toEqual([]);
    expect(only(seen, 'turn_end')).toMatchObject([{ status: 'interrupted' }]);
    expect(w.store.map((m) => m.role)).toEqual(['user', 'notice']);
    expect(engine.isRunning).toBe(false);
  });

  it('while a resumed turn starts: nothing runs; a started call still says it was cut by the restart', async () => {
    const w = world();
    const log: string[] = [];
    const calls = ['a', 'b'].map((id) => ({
      id,
      type: 'function' as const,
      function: { name: 'write', arguments: '{}' },
    }));
    w.store.push({ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: calls });
    await w.ledger.markStarted('s1', 'a', ['a']);
    const { engine, provider } = engineIn(w, [say('never')], [recordingTool('write', lowRisk, { log })], {
      messages: w.store,
    });
    const events = engine.resume();
    expect(engine.requestInterrupt()).toBe(true);
    const seen = await collect(events);
    expect(log).toEqual([]);
    expect(provider.requests).toEqual([]);
    expect(only(seen, 'tool_finished').map((e) => [e.toolCallId, e.status, e.restart])).toEqual([
      ['a', 'interrupted', 'not_rerun'],
      ['b', 'interrupted', undefined],
    ]);
    expect(only(seen, 'turn_end')).toMatchObject([{ status: 'interrupted' }]);
  });

  it('between retry() and its first step', async () => {
    const w = world();
    const { engine, provider } = engineIn(w, [{ failAfterChunks: 0, error: new Error('boom') }, say('never')], []);
    await collect(engine.run('hi'));
    expect(engine.canRetry()).toBe(true);
    const events = engine.retry();
    expect(engine.requestInterrupt()).toBe(true);
    expect(only(await collect(events), 'turn_end')).toMatchObject([{ status: 'interrupted' }]);
    expect(provider.requests).toHaveLength(1);
  });

  it('a stop when nothing is reserved still does nothing (no stale stop leaks into the next turn)', async () => {
    const w = world();
    const { engine } = engineIn(w, [say('answer')], []);
    expect(engine.requestInterrupt()).toBe(false);
    expect(only(await collect(engine.run('hi')), 'turn_end')).toMatchObject([{ status: 'completed' }]);
  });
});
