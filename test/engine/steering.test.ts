import { describe, expect, it } from 'vitest';
import { textOf, type EngineEvent } from '../../src/engine/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, lowRisk, only, recordingTool } from '../support/engine-kit.js';

describe('steering a running turn', () => {
  it('a reply queued during a tool round is injected after the tool results, as a user message', async () => {
    const { engine, provider } = engineWith([callTools(call('read')), say('ok, using staging')], {
      tools: [recordingTool('read', lowRisk)],
    });
    let receipt: ReturnType<typeof engine.queueSteering> | undefined;
    const events = await collect(engine.run('deploy'), (event) => {
      if (event.type === 'tool_started') {
        receipt = engine.queueSteering('no, use staging', { platform: 'slack', userId: 'U2', messageId: '171.2' });
      }
    });
    expect(receipt?.state).toBe('running');
    const injected = only(events, 'steering_injected');
    expect(injected).toEqual([
      {
        type: 'steering_injected',
        id: receipt!.id,
        text: 'no, use staging',
        source: { platform: 'slack', userId: 'U2', messageId: '171.2' },
      },
    ]);
    expect(events.findIndex((e) => e.type === 'steering_injected')).toBeGreaterThan(
      events.findIndex((e) => e.type === 'iteration_end'),
    );
    expect(provider.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(provider.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'no, use staging' });
    expect(engine.messages[3]).toMatchObject({ role: 'user', source: { userId: 'U2' } });
  });

  it('a reply queued while the model answers without tools makes the turn continue instead of ending', async () => {
    const { engine, provider } = engineWith([say('Here is the summary', { chunkSize: 4 }), say('Shorter: done.')]);
    const events = await collect(engine.run('summarise'), (event) => {
      if (event.type === 'assistant_delta' && event.text === 'Here') engine.queueSteering('make it shorter');
    });
    expect(provider.requests).toHaveLength(2);
    expect(only(events, 'turn_end')).toMatchObject([{ status: 'completed', iterations: 2 }]);
    expect(engine.messages.map((m) => (m.role === 'user' ? textOf(m.content) : m.role))).toEqual([
      'summarise',
      'assistant',
      'make it shorter',
      'assistant',
    ]);
  });

  it('each queued reply gets its own injection event, in order', async () => {
    const { engine } = engineWith([callTools(call('read')), say('done')], { tools: [recordingTool('read', lowRisk)] });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'tool_started') {
        engine.queueSteering('first');
        engine.queueSteering('second');
      }
    });
    expect(only(events, 'steering_injected').map((e) => e.text)).toEqual(['first', 'second']);
  });

  it('a reply while no turn runs is held for the caller to start the next turn with', async () => {
    const { engine } = engineWith([say('a')]);
    const receipt = engine.queueSteering('are you there?');
    expect(receipt.state).toBe('idle');
    expect(engine.pendingSteeringCount).toBe(1);
    expect(engine.takePendingSteering()).toEqual([{ id: receipt.id, text: 'are you there?' }]);
    expect(engine.takePendingSteering()).toEqual([]);
  });

  it('a reply queued before a stop is not injected into the stopped turn; it is left pending', async () => {
    const { engine, provider } = engineWith([callTools(call('read')), say('unused')], {
      tools: [recordingTool('read', lowRisk)],
    });
    const events = await collect(engine.run('go'), (event) => {
      if (event.type === 'tool_started') {
        engine.queueSteering('actually, also check prod');
        engine.requestInterrupt();
      }
    });
    expect(only(events, 'steering_injected')).toEqual([]);
    expect(only(events, 'turn_end')).toMatchObject([{ status: 'interrupted', pendingSteering: 1 }]);
    expect(provider.requests).toHaveLength(1);
    expect(engine.takePendingSteering().map((s) => s.text)).toEqual(['actually, also check prod']);
  });

  it('a reply arriving as a turn finishes is never lost: the turn takes it or it is left pending', async () => {
    // Queue the steer at every point of a finishing turn, including after its last event.
    const probe = engineWith([say('answer', { chunkSize: 2 })]).engine;
    const eventCount = (await collect(probe.run('q'))).length;
    for (let at = 0; at <= eventCount; at++) {
      for (const microtaskDelay of [0, 1, 3]) {
        const { engine } = engineWith([say('answer', { chunkSize: 2 }), say('took the steer')]);
        let index = 0;
        const queueLater = () => {
          let hops = microtaskDelay;
          const hop = (): void => {
            if (hops-- > 0) queueMicrotask(hop);
            else engine.queueSteering('late steer');
          };
          hop();
        };
        const events: EngineEvent[] = [];
        for await (const event of engine.run('q')) {
          events.push(event);
          if (index++ === at) queueLater();
        }
        if (at >= eventCount) queueLater();
        await new Promise((resolve) => setImmediate(resolve));
        const injected = engine.messages.some((m) => m.role === 'user' && m.content === 'late steer');
        const pending = engine.takePendingSteering().filter((s) => s.text === 'late steer');
        expect(Number(injected) + pending.length, `queued after event ${at} (+${microtaskDelay} microtasks)`).toBe(1);
        if (injected) expect(engine.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'took the steer' });
      }
    }
  });

  it("files are prepared knowing who shared them, in a turn's first message and in a steering reply", async () => {
    const seen: { text: string; source?: unknown }[] = [];
    const file = { platform: 'slack', id: 'F1', name: 'q3.pdf', url: 'https://files.slack.com/q3.pdf' };
    const { engine } = engineWith([callTools(call('read')), say('done')], {
      tools: [recordingTool('read', lowRisk)],
      ports: {
        prepareInput: async ({ text, source }) => {
          seen.push({ text, source });
          return { content: text, problems: [] };
        },
      },
    });
    await collect(
      engine.run('summarise', { source: { platform: 'slack', workspace: 'T1', userId: 'U1' }, attachments: [file] }),
      (event) => {
        if (event.type === 'tool_started')
          engine.queueSteering('and this one', { platform: 'slack', workspace: 'T1', userId: 'U2' }, undefined, [file]);
      },
    );
    expect(seen).toEqual([
      { text: 'summarise', source: { platform: 'slack', workspace: 'T1', userId: 'U1' } },
      { text: 'and this one', source: { platform: 'slack', workspace: 'T1', userId: 'U2' } },
    ]);
  });
});
