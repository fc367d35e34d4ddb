import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type Message, type TurnEngine } from '../../src/engine/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import {
  abortableDelay,
  collect,
  engineWith,
  lowRisk,
  memoryLogger,
  only,
  recordingTool,
  risky,
  waitFor,
} from '../support/engine-kit.js';

/** The invariant: every tool call in history has exactly one tool result. */
function expectNoOrphans(engine: TurnEngine): void {
  const calls = engine.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
  const results = engine.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
  expect([...results].sort()).toEqual([...calls].sort());
}

function toolResults(engine: TurnEngine): Extract<Message, { role: 'tool' }>[] {
  return engine.messages.filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
}

describe('a stop ends the turn from every state', () => {
  it('while awaiting an approval: the wait ends as interrupted and the tool never runs', async () => {
    const log: string[] = [];
    const holder: { engine?: TurnEngine } = {};
    let approverSignal: AbortSignal | undefined;
    const { engine, provider } = engineWith([callTools(call('write'), call('write')), say('never reached')], {
      tools: [recordingTool('write', risky, { log })],
      ports: {
        approver: ({ signal }) => {
          approverSignal = signal;
          setTimeout(() => holder.engine!.requestInterrupt(), 2);
          return new Promise(() => undefined); // a human who never clicks
        },
      },
    });
    holder.engine = engine;
    const events = await collect(engine.run('go'));
    expect(log).toEqual([]);
    expect(approverSignal?.aborted).toBe(true);
    expect(only(events, 'tool_finished').map((e) => e.status)).toEqual(['interrupted', 'interrupted']);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });
    expect(toolResults(engine).every((m) => m.content.includes('interrupted by user'))).toBe(true);
    expect(engine.messages.at(-1)).toMatchObject({ role: 'notice', kind: 'interrupted' });
    expect(provider.requests).toHaveLength(1);
    expectNoOrphans(engine);
  });

  it('during the authorization pass: the rest of the batch is answered, nothing executes', async () => {
    const log: string[] = [];
    const holder: { engine?: TurnEngine } = {};
    const { engine } = engineWith(
      [callTools(call('write', { n: 1 }), call('write', { n: 2 }), call('read')), say('x')],
      {
        tools: [recordingTool('write', risky, { log }), recordingTool('read', lowRisk, { log })],
        ports: {
          approver: async () => {
            holder.engine!.requestInterrupt();
            return 'once';
          },
        },
      },
    );
    holder.engine = engine;
    const events = await collect(engine.run('go'));
    expect(log).toEqual([]);
    expect(only(events, 'tool_finished')).toHaveLength(3);
    expect(only(events, 'tool_finished').every((e) => e.status === 'interrupted')).toBe(true);
    expectNoOrphans(engine);
  });

  it('while a question waits for an answer: the callback is told, a late answer is a no-op', async () => {
    let lateAnswer: ((answer: { answer: string }) => void) | undefined;
    let questionSignal: AbortSignal | undefined;
    const { engine } = engineWith([callTools(call('ask_user', { question: 'staging or prod?' })), say('x')], {
      ports: {
        interactive: {
          askUser: ({ signal }) =>
            new Promise((resolve) => {
              questionSignal = signal;
              lateAnswer = resolve;
            }),
        },
      },
    });
    const events = await collect(engine.run('deploy'), (event) => {
      if (event.type === 'interaction_required') setTimeout(() => engine.requestInterrupt(), 2);
    });
    expect(questionSignal?.aborted).toBe(true);
    expect(only(events, 'tool_finished')[0]).toMatchObject({ status: 'interrupted' });
    const before = structuredClone(engine.messages);
    lateAnswer!({ answer: 'prod' });
    // Barrier: the next turn runs to its end; the late answer, had it done anything, would show before it.
    await collect(engine.run('and now?'));
    expect(engine.messages.slice(0, before.length)).toEqual(before);
    expect(engine.messages.slice(before.length)).toMatchObject([
      { role: 'user', content: 'and now?' },
      { role: 'assistant', content: 'x' },
    ]);
    expectNoOrphans(engine);
  });

  it('mid-tool: the tool gets its abort, interrupt hooks run (a failing one does not block), output kept', async () => {
    const hooks: string[] = [];
    const shell = defineTool({
      name: 'run_shell',
      description: 'long command',
      schema: z.object({}),
      metadata: lowRisk,
      execute: async (_args, { signal }) => {
        try {
          await abortableDelay(10_000, signal);
          return 'finished';
        } catch {
          return 'partial output before SIGINT';
        }
      },
    });
    const { engine, provider } = engineWith([callTools(call('run_shell'), call('run_shell')), say('x')], {
      tools: [shell],
      hooks: {
        onInterrupt: [
          () => {
            hooks.push('throwing hook');
            throw new Error('executor gone');
          },
          async () => {
            hooks.push('async failing hook');
            throw new Error('also gone');
          },
          () => {
            hooks.push('kill the process group');
          },
        ],
      },
    });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'tool_started') setTimeout(() => engine.requestInterrupt(), 5);
    });
    expect(hooks).toEqual(['throwing hook', 'async failing hook', 'kill the process group']);
    const finished = only(events, 'tool_finished');
    expect(finished.map((e) => e.status)).toEqual(['interrupted', 'interrupted']);
    expect(toolResults(engine)[0]!.content).toContain('partial output before SIGINT');
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });
    expect(provider.requests).toHaveLength(1);
    expectNoOrphans(engine);
  });

  it('a tool that ignores its signal is not waited for; its late outcome is only logged', async () => {
    const logger = memoryLogger();
    let finishedLate = false;
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'ignores aborts',
      schema: z.object({}),
      metadata: risky,
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        finishedLate = true;
        return 'late result';
      },
    });
    const { engine } = engineWith([callTools(call('stubborn')), say('x')], {
      tools: [stubborn],
      limits: { toolStopGraceMs: 20 },
      ports: { approver: async () => 'once', logger },
    });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'tool_started') setTimeout(() => engine.requestInterrupt(), 2);
    });
    // The turn is over while the tool still runs.
    expect(finishedLate).toBe(false);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });
    const result = toolResults(engine)[0]!.content;
    expect(result).toContain('interrupted by user');
    expect(result).toContain('may still finish in the background');
    const historyAtStop = structuredClone(engine.messages);
    await waitFor(() => logger.lines.some((line) => line.message.includes('finished late')));
    expect(finishedLate).toBe(true);
    expect(engine.messages).toEqual(historyAtStop);
    expectNoOrphans(engine);
  });

  it('a stop that lands while a card is being shown posts no approval and starts no tool', async () => {
    let approverCalls = 0;
    const log: string[] = [];
    const { engine } = engineWith([callTools(call('write'), call('read')), say('x')], {
      tools: [recordingTool('write', risky, { log }), recordingTool('read', lowRisk, { log })],
      ports: {
        approver: async () => {
          approverCalls++;
          return 'once';
        },
      },
    });
    await collect(engine.run('go'), (event) => {
      if (event.type === 'permission_required') engine.requestInterrupt();
    });
    expect(approverCalls).toBe(0);
    expect(log).toEqual([]);
    expectNoOrphans(engine);
  });

  it('a stop that lands while a tool card is being shown never starts the tool', async () => {
    const log: string[] = [];
    const { engine } = engineWith([callTools(call('read')), say('x')], {
      tools: [recordingTool('read', lowRisk, { log, delayMs: 1000 })],
    });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'tool_started') engine.requestInterrupt();
    });
    expect(log).toEqual([]);
    expect(only(events, 'tool_finished')).toMatchObject([{ status: 'interrupted' }]);
  });

  it('a concurrent batch is stopped as a whole', async () => {
    const tools = ['a', 'b', 'c'].map((name) =>
      defineTool({
        name,
        description: name,
        schema: z.object({}),
        metadata: lowRisk,
        execute: async (_args, { signal }) => {
          await abortableDelay(10_000, signal);
          return 'done';
        },
      }),
    );
    const { engine } = engineWith([callTools(call('a'), call('b'), call('c')), say('x')], { tools });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'tool_started' && event.name === 'c') setTimeout(() => engine.requestInterrupt(), 5);
    });
    expect(only(events, 'tool_finished').map((e) => e.status)).toEqual(['interrupted', 'interrupted', 'interrupted']);
    expectNoOrphans(engine);
  });

  it('between iterations: no further model call', async () => {
    const { engine, provider } = engineWith([callTools(call('read')), say('should not happen')], {
      tools: [recordingTool('read', lowRisk)],
    });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'iteration_end') engine.requestInterrupt();
    });
    expect(provider.requests).toHaveLength(1);
    expect(only(events, 'interrupted')).toHaveLength(1);
    expect(engine.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'notice']);
  });

  it('a stop that lands once the answer is recorded answers its calls as interrupted instead of running them', async () => {
    const log: string[] = [];
    const { engine } = engineWith([callTools(call('read'), call('write'))], {
      tools: [recordingTool('read', lowRisk, { log }), recordingTool('write', risky, { log })],
      ports: { approver: async () => 'once' },
    });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'assistant_message') engine.requestInterrupt();
    });
    expect(log).toEqual([]);
    expect(engine.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'notice']);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });
    expectNoOrphans(engine);
  });

  it('a stop before the first chunk records nothing but the notice', async () => {
    const { engine } = engineWith([callTools(call('read'))], { tools: [recordingTool('read', lowRisk)] });
    await collect(engine.run('go'), (event) => {
      if (event.type === 'turn_start') engine.requestInterrupt();
    });
    expect(engine.messages.map((m) => m.role)).toEqual(['user', 'notice']);
  });

  it('a stop requested while no turn runs does not leak into the next turn', async () => {
    const { engine } = engineWith([say('answered normally')]);
    expect(engine.requestInterrupt()).toBe(false);
    const events = await collect(engine.run('hello'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
  });

  it('a consumer that walks away mid-turn leaves no orphan tool call', async () => {
    const { engine } = engineWith([callTools(call('write'), call('write')), say('x')], {
      tools: [recordingTool('write', risky)],
      ports: { approver: () => new Promise(() => undefined) },
    });
    for await (const event of engine.run('go')) {
      if (event.type === 'permission_required') break;
    }
    expect(engine.isRunning).toBe(false);
    expectNoOrphans(engine);
    expect(engine.messages.at(-1)).toMatchObject({ role: 'notice', kind: 'interrupted' });
  });
});
