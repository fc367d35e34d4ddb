import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  EngineBusyError,
  ProviderError,
  TurnEngine,
  UNKNOWN_MODEL_CAPABILITIES,
  type Message,
  type Provider,
} from '../../src/engine/index.js';
import { call, callTools, say, ScriptedProvider } from '../fakes/scripted-provider.js';
import { collect, engineWith, lowRisk, only, recordingTool, typesOf } from '../support/engine-kit.js';

describe('a plain turn', () => {
  it('streams the answer, records it with reasoning and usage tagged by model, and completes', async () => {
    const { engine } = engineWith([
      say('Hello there, friend', {
        reasoning: 'greet them',
        chunkSize: 5,
        usage: { input: 12, output: 4, cacheRead: 3 },
      }),
    ]);
    const events = await collect(engine.run('hi'));
    expect(typesOf(events)).toEqual([
      'turn_start',
      'reasoning_delta',
      'reasoning_delta',
      'assistant_delta',
      'assistant_delta',
      'assistant_delta',
      'assistant_delta',
      'assistant_message',
      'turn_end',
    ]);
    expect(
      only(events, 'assistant_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Hello there, friend');
    expect(only(events, 'turn_end')[0]).toEqual({
      type: 'turn_end',
      status: 'completed',
      iterations: 1,
      pendingSteering: 0,
    });
    expect(engine.messages[1]).toMatchObject({
      role: 'assistant',
      content: 'Hello there, friend',
      reasoning: 'greet them',
      usage: { model: 'scripted-model', input: 12, output: 4, cacheRead: 3 },
    });
  });

  it('surfaces deltas live while a slow stream is still arriving', async () => {
    let produced = 0;
    const slow: Provider = {
      name: 'slow',
      capabilities: () => UNKNOWN_MODEL_CAPABILITIES,
      async *stream() {
        for (const word of ['one ', 'two ', 'three ', 'four']) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          produced++;
          yield { type: 'text_delta', text: word };
        }
        yield { type: 'final', turn: { text: 'one two three four', toolCalls: [], finishReason: 'stop' } };
      },
    };
    const engine = new TurnEngine({ provider: slow, model: 'slow' });
    const producedAtEachDelta: number[] = [];
    await collect(engine.run('count'), (event) => {
      if (event.type === 'assistant_delta') producedAtEachDelta.push(produced);
    });
    // Each delta reached the consumer as soon as it was produced, not after the stream ended.
    expect(producedAtEachDelta).toEqual([1, 2, 3, 4]);
  });

  it('keeps a provider extra on the message and replays it, but never the reasoning', async () => {
    const { engine, provider } = engineWith([
      say('thinking done', { reasoning: 'secret chain', extras: { _scripted: { signature: 'abc' } } }),
      say('second'),
    ]);
    await collect(engine.run('one'));
    await collect(engine.run('two'));
    const replayed = provider.requests[1]!.messages[1]!;
    expect(replayed).toEqual({ role: 'assistant', content: 'thinking done', _scripted: { signature: 'abc' } });
    expect(JSON.stringify(provider.requests[1])).not.toContain('secret chain');
  });

  it('refuses a second runner while a turn runs', async () => {
    const { engine } = engineWith([say('slow', { stallBeforeFirstToken: true })]);
    const first = engine.run('one')[Symbol.asyncIterator]();
    await first.next();
    expect(() => engine.run('two')).toThrow(EngineBusyError);
    engine.requestInterrupt();
    while (!(await first.next()).done) {
      /* drain */
    }
  });
});

describe('the iteration rail', () => {
  it('counts every model call and ends with a max_iterations notice', async () => {
    const loop = () => callTools(call('look', {}));
    const { engine, provider } = engineWith([loop(), loop(), loop(), loop()], {
      tools: [recordingTool('look', lowRisk)],
      limits: { maxIterations: 3 },
    });
    const events = await collect(engine.run('go'));
    expect(provider.requests).toHaveLength(3);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'max_iterations_exceeded', iterations: 3 });
    expect(engine.messages.at(-1)).toMatchObject({ role: 'notice', kind: 'max_iterations' });
  });

  it('lets retry() continue for another round after the limit', async () => {
    const { engine, provider } = engineWith([callTools(call('look')), say('finished')], {
      tools: [recordingTool('look', lowRisk)],
      limits: { maxIterations: 1 },
    });
    await collect(engine.run('go'));
    expect(engine.canRetry()).toBe(true);
    const events = await collect(engine.retry());
    expect(only(events, 'turn_start')[0]).toMatchObject({ kind: 'retry', input: null });
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
    expect(provider.requests).toHaveLength(2);
    expect(engine.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'finished' });
  });
});

describe('provider errors', () => {
  it('keeps the text streamed before a failure, appends an error notice and emits error', async () => {
    const { engine } = engineWith([
      say('partial answer here', {
        chunkSize: 8,
        failAfterChunks: 2,
        error: new ProviderError('server', 'The model provider had a server error (500).'),
      }),
    ]);
    const events = await collect(engine.run('q'));
    expect(only(events, 'error')[0]).toEqual({
      type: 'error',
      message: 'The model provider had a server error (500).',
      errorKind: 'server',
    });
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'error' });
    expect(engine.messages.slice(1)).toMatchObject([
      { role: 'assistant', content: 'partial answer h' },
      { role: 'notice', kind: 'error', text: 'The model provider had a server error (500).' },
    ]);
    expect(engine.messages[1]).not.toHaveProperty('tool_calls');
  });

  it('never keeps half-formed tool calls from a failed stream', async () => {
    const { engine } = engineWith(
      [{ text: 'let me look', toolCalls: [call('look')], error: new Error('socket hang up') }],
      {
        tools: [recordingTool('look', lowRisk)],
      },
    );
    const events = await collect(engine.run('q'));
    expect(only(events, 'error')[0]!.message).toContain('socket hang up');
    expect(engine.messages[1]).toEqual(expect.objectContaining({ role: 'assistant', content: 'let me look' }));
    expect(engine.messages[1]).not.toHaveProperty('tool_calls');
  });

  it('treats a stream that ends without its final chunk as a failure, not a silent success', async () => {
    const { engine } = engineWith([say('cut', { omitFinal: true })]);
    const events = await collect(engine.run('q'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'error' });
    expect(engine.messages.at(-1)).toMatchObject({ role: 'notice', kind: 'error' });
  });

  it('retry() re-runs the failed turn without a new user message', async () => {
    const { engine, provider } = engineWith([
      { error: new ProviderError('rate_limited', 'Rate limited.') },
      say('ok now'),
    ]);
    await collect(engine.run('question'));
    const events = await collect(engine.retry());
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
    expect(engine.messages.filter((m) => m.role === 'user')).toHaveLength(1);
    // The error notice is never sent; the second call sees just the question.
    expect(provider.requests[1]!.messages).toEqual([{ role: 'user', content: 'question' }]);
  });

  it('retry() does nothing unless the tail is an error (or limit) notice', async () => {
    const { engine, provider } = engineWith([say('fine')]);
    expect(await collect(engine.retry())).toEqual([]);
    await collect(engine.run('q'));
    expect(await collect(engine.retry())).toEqual([]);
    expect(provider.requests).toHaveLength(1);
  });

  it('retry() looks through model switches after the error: switch, then retry', async () => {
    const first = new ScriptedProvider([{ error: new ProviderError('quota', 'Out of quota.') }], { name: 'a' });
    const second = new ScriptedProvider([say('from b')], { name: 'b' });
    const engine = new TurnEngine({ provider: (model) => (model.startsWith('b:') ? second : first), model: 'a:one' });
    await collect(engine.run('q'));
    expect(await engine.switchModel('b:two')).toBe('Model switched to b:two');
    await engine.switchModel('b:three');
    expect(engine.canRetry()).toBe(true);
    const events = await collect(engine.retry());
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
    expect(second.requests[0]!.model).toBe('b:three');
  });

  it('turns an unknown model (no provider) into an error notice, not a crash', async () => {
    const engine = new TurnEngine({
      provider: () => {
        throw new Error('no provider for model "nope"');
      },
      model: 'nope',
    });
    const events = await collect(engine.run('q'));
    expect(only(events, 'error')[0]!.message).toContain('nope');
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'error' });
  });
});

describe('bad model output never throws out of the loop', () => {
  const strict = defineTool({
    name: 'write_note',
    description: 'write a note',
    schema: z.object({ title: z.string(), body: z.string() }),
    metadata: lowRisk,
    execute: async ({ title }) => `saved ${title}`,
  });
  const boom = defineTool({
    name: 'explode',
    description: 'always throws',
    schema: z.object({}),
    metadata: lowRisk,
    execute: async () => {
      throw new TypeError('kaboom');
    },
  });

  async function resultsFor(steps: Parameters<typeof engineWith>[0]) {
    const { engine, provider } = engineWith([...steps, say('recovered')], { tools: [strict, boom] });
    const events = await collect(engine.run('go'));
    const tools = engine.messages.filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
    return { engine, provider, events, tools };
  }

  it('answers an unknown tool with an error the model can read', async () => {
    const { tools, events } = await resultsFor([callTools(call('teleport', { to: 'mars' }))]);
    expect(JSON.parse(tools[0]!.content)).toMatchObject({
      reason: 'unknown tool: teleport',
      available_tools: ['write_note', 'explode'],
    });
    expect(only(events, 'tool_finished')[0]).toMatchObject({ status: 'error', name: 'teleport' });
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
  });

  it('sends the schema validation message back to the model', async () => {
    const { tools } = await resultsFor([callTools(call('write_note', { title: 3 }))]);
    const reason = (JSON.parse(tools[0]!.content) as { reason: string }).reason;
    expect(reason).toContain('invalid arguments for write_note');
    expect(reason).toContain('title');
    expect(reason).toContain('body');
  });

  it('diagnoses arguments cut off by the output limit', async () => {
    const { tools } = await resultsFor([
      { toolCalls: [call('write_note', '{"title": "a", "body": "lon')], finishReason: 'length' },
    ]);
    expect(tools[0]!.content).toContain('cut off by the output limit');
  });

  it('diagnoses arguments that are not a JSON object, and shrinks long junk in history', async () => {
    const junk = `<tool>${'x'.repeat(5000)}</tool>`;
    const { tools, engine, provider } = await resultsFor([callTools(call('write_note', junk))]);
    expect(tools[0]!.content).toContain('not a JSON object');
    const stored = engine.messages.find((m) => m.role === 'assistant' && m.tool_calls)!;
    const args = (stored as Extract<Message, { role: 'assistant' }>).tool_calls![0]!.function.arguments;
    expect(args.length).toBeLessThan(400);
    expect(JSON.parse(args)).toEqual({
      _raw: expect.stringContaining('[unparsed tool-call text, 5013 chars, truncated in history]'),
    });
    expect(JSON.stringify(provider.requests[1])).not.toContain('x'.repeat(300));
  });

  it('keeps short junk whole, and treats a JSON array as not an object', async () => {
    const { tools, engine } = await resultsFor([callTools(call('write_note', '[1,2]'))]);
    expect(tools[0]!.content).toContain('not a JSON object');
    const stored = engine.messages.find((m) => m.role === 'assistant' && m.tool_calls) as Extract<
      Message,
      { role: 'assistant' }
    >;
    expect(JSON.parse(stored.tool_calls![0]!.function.arguments)).toEqual({ _raw: '[1,2]' });
  });

  it('turns a tool that throws into an error result', async () => {
    const { tools, events } = await resultsFor([callTools(call('explode'))]);
    expect(JSON.parse(tools[0]!.content)).toEqual({ error: 'kaboom', error_type: 'TypeError' });
    expect(only(events, 'tool_finished')[0]).toMatchObject({ status: 'error' });
  });

  it('treats empty argument text as an empty object', async () => {
    const { tools } = await resultsFor([callTools(call('explode', ''))]);
    expect(tools[0]!.content).toContain('kaboom');
  });
});

describe('tool-call ids are unique within a session', () => {
  it('replaces ids a provider numbers per turn, and invents ids it leaves out', async () => {
    const { engine, provider } = engineWith(
      [
        callTools(call('look', {}, 'call_0'), call('look', {}, null)),
        say('one'),
        callTools(call('look', {}, 'call_0')),
        say('two'),
      ],
      { tools: [recordingTool('look', lowRisk)] },
    );
    await collect(engine.run('first'));
    await collect(engine.run('second'));
    const ids = engine.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe('call_0');
    expect(ids[2]).not.toBe('call_0');
    // Every result answers its own call, and the provider sees consistent pairs.
    const resultIds = engine.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
    expect(resultIds.sort()).toEqual([...ids].sort());
    const last = provider.requests[3]!.messages;
    expect(
      last
        .filter((m) => m.role === 'tool')
        .map((m) => (m as { tool_call_id: string }).tool_call_id)
        .sort(),
    ).toEqual([...ids].sort());
  });

  it('knows the ids already used by a reloaded history', async () => {
    const history: Message[] = [
      { role: 'user', content: 'old' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'look', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_0', content: 'ok' },
      { role: 'assistant', content: 'done' },
    ];
    const { engine } = engineWith([callTools(call('look', {}, 'call_0')), say('fine')], {
      messages: history,
      tools: [recordingTool('look', lowRisk)],
    });
    await collect(engine.run('again'));
    const newCall = engine.messages.slice(4).find((m) => m.role === 'assistant' && m.tool_calls) as Extract<
      Message,
      { role: 'assistant' }
    >;
    expect(newCall.tool_calls![0]!.id).not.toBe('call_0');
  });
});

describe('switching model', () => {
  it('is a field write plus a notice, and no notice on the first bind of an empty session', async () => {
    const { engine, provider } = engineWith([say('a'), say('b')]);
    expect(await engine.switchModel('other-model')).toBeNull();
    expect(engine.messages).toEqual([]);
    await collect(engine.run('q'));
    expect(await engine.switchModel('third-model')).toBe('Model switched to third-model');
    expect(await engine.switchModel('third-model')).toBeNull();
    expect(engine.messages.at(-1)).toMatchObject({ role: 'notice', kind: 'model_switch' });
    await collect(engine.run('q2'));
    expect(provider.requests.map((r) => r.model)).toEqual(['other-model', 'third-model']);
  });

  it('warns when history holds images the new model cannot see', async () => {
    const seeing = new ScriptedProvider([say('nice picture')], { capabilities: { vision: true } });
    const blind = new ScriptedProvider([say('what picture?')], { capabilities: { vision: false } });
    const engine = new TurnEngine({ provider: (m) => (m === 'blind' ? blind : seeing), model: 'seeing' });
    await collect(
      engine.run([
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
      ]),
    );
    expect(await engine.switchModel('blind')).toBe(
      'Model switched to blind — earlier images cannot be seen by this model',
    );
    await collect(engine.run('and now?'));
    expect(JSON.stringify(blind.requests[0])).not.toContain('data:image/png');
    expect(JSON.stringify(blind.requests[0])).toContain('not viewable by this model');
    // The original image is still in history: switching back would see it again.
    expect(JSON.stringify(engine.messages)).toContain('data:image/png');
  });

  it('is refused while a turn runs', async () => {
    const { engine } = engineWith([say('x', { stallBeforeFirstToken: true })]);
    const iterator = engine.run('q')[Symbol.asyncIterator]();
    await iterator.next();
    await expect(engine.switchModel('other')).rejects.toBeInstanceOf(EngineBusyError);
    engine.requestInterrupt();
    while (!(await iterator.next()).done) {
      /* drain */
    }
  });
});
