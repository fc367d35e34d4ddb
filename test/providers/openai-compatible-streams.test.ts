// OpenAIProvider against the shapes OpenAI-compatible servers really stream, through the
// real openai SDK and FakeOpenAI: a body that ends cleanly before the answer is finished
// (no finish_reason, no [DONE]), a finish_reason followed by a close without [DONE], usage
// alone in a last chunk with empty `choices`, tool-call pieces without `index` (Kimi-
// compatible servers), and DeepSeek's thinking mode, which refuses a tool loop whose
// `reasoning_content` was not sent back.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  ProviderError,
  TurnEngine,
  type AssistantTurn,
  type Message,
  type OutboundMessage,
  type ProviderChunk,
  type ProviderRequest,
} from '../../src/engine/index.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { answerEvents, FakeOpenAI } from '../fakes/openai-server.js';
import { collect, lowRisk, only } from '../support/engine-kit.js';

let fake: FakeOpenAI;

beforeEach(async () => {
  fake = await new FakeOpenAI().start();
});

afterEach(async () => {
  await fake.stop();
});

function provider(): OpenAIProvider {
  return new OpenAIProvider({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0 });
}

function ask(text: string, extra: Partial<ProviderRequest> = {}): ProviderRequest {
  return { model: 'openai:gpt-4.1', messages: [{ role: 'user', content: text }], tools: [], ...extra };
}

const never = new AbortController().signal;

/** Every chunk of a stream, and how it ended: its final turn, or the error it threw. */
async function run(
  request: ProviderRequest,
): Promise<{ chunks: ProviderChunk[]; final?: AssistantTurn; error?: unknown }> {
  const chunks: ProviderChunk[] = [];
  try {
    for await (const chunk of provider().stream(request, never)) chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  const last = chunks.at(-1);
  return { chunks, final: last?.type === 'final' ? last.turn : undefined };
}

function textOf(chunks: ProviderChunk[]): string {
  return chunks.map((c) => (c.type === 'text_delta' ? c.text : '')).join('');
}

const weather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: z.object({ city: z.string() }),
  metadata: lowRisk,
  async execute({ city }) {
    return { city, tempC: 3 };
  },
});

describe('a stream is complete only when the server says why it stopped', () => {
  it('a body that ends cleanly mid-text is a connection error, not a whole answer', async () => {
    // role chunk + two text pieces, then the body simply ends: no finish_reason, no [DONE].
    fake.replyCleanEnd(3, { text: 'Capital of France is Paris.', chunkSize: 5 });
    const { chunks, final, error } = await run(ask('Capital of France?'));
    expect(textOf(chunks)).toBe('Capital of');
    expect(final).toBeUndefined();
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'connection' });
    expect((error as ProviderError).message).toMatch(/ended before the answer was complete.*Try again/);
  });

  it('a body that ends cleanly mid tool call yields no call at all', async () => {
    // Mistral's incremental shape cut after the opening piece: id and name, arguments "".
    fake.replyCleanEnd(2, { toolCalls: [{ id: 'call_cut', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const { chunks, error } = await run(ask('weather?'));
    expect(chunks.some((c) => c.type === 'final')).toBe(false);
    expect(error).toMatchObject({ kind: 'connection' });
  });

  it('a body that ends cleanly halfway through the arguments yields no call either', async () => {
    fake.replyCleanEnd(3, { toolCalls: [{ id: 'call_cut', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const { chunks, error } = await run(ask('weather?'));
    expect(chunks.some((c) => c.type === 'final')).toBe(false);
    expect(error).toMatchObject({ kind: 'connection' });
  });

  it('[DONE] without any finish_reason is not enough: a server that never says why it stopped is not trusted', async () => {
    fake.replyToolCalls([{ name: 'get_weather', arguments: { city: 'Oslo' } }], { finishReason: null });
    const { chunks, error } = await run(ask('weather?'));
    expect(chunks.some((c) => c.type === 'final')).toBe(false);
    expect(error).toMatchObject({ kind: 'connection' });
  });

  it('finish_reason, then usage alone with empty `choices`, then a close without [DONE] is a whole answer', async () => {
    fake.replyText('Paris.', { omitDone: true, usage: { prompt_tokens: 30, completion_tokens: 2 } });
    const { final, error } = await run(ask('Capital of France?'));
    expect(error).toBeUndefined();
    expect(final).toEqual({
      text: 'Paris.',
      toolCalls: [],
      finishReason: 'stop',
      responseModel: 'gpt-4.1',
      usage: { input: 30, output: 2, cacheRead: 0 },
    });
    // The shape the SDK read: the usage chunk came after the finish chunk, with no choices.
    expect(fake.bodies[0]).toMatchObject({ stream_options: { include_usage: true } });
  });

  it('finish_reason tool_calls and a close without [DONE] runs the call', async () => {
    fake.replyToolCalls([{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }], { omitDone: true });
    const { final } = await run(ask('weather?'));
    expect(final?.finishReason).toBe('tool_calls');
    expect(final?.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  });
});

describe('usage wherever the server puts it', () => {
  it("Kimi's place: inside the finish chunk's choice (`choices[0].usage`), its cached tokens apart", async () => {
    fake.replyText('Paris.', {
      model: 'kimi-k2.5',
      usageAt: 'choice',
      usage: { prompt_tokens: 1_200, completion_tokens: 40, cached_tokens: 1_000 },
    });
    const { final, error } = await run(ask('Capital of France?', { model: 'openai:kimi-k2.5' }));
    expect(error).toBeUndefined();
    expect(final?.usage).toEqual({ input: 200, output: 40, cacheRead: 1_000 });
  });

  it.each(['top', 'choice'] as const)(
    'a usage (%s) whose counts are not numbers is no usage (the metered provider then estimates), never NaN',
    async (usageAt) => {
      fake.reply((request) => {
        const events = answerEvents(request, {
          text: 'Paris.',
          usageAt,
          usage: { prompt_tokens: 5, completion_tokens: 2 },
        });
        const last = events.findLast((event) => typeof event.data === 'object') as {
          data: { usage?: unknown; choices: { usage?: unknown }[] };
        };
        const bad = { prompt_tokens: 'many', completion_tokens: null };
        if (usageAt === 'top') last.data.usage = bad;
        else last.data.choices[0]!.usage = bad;
        return { kind: 'sse', events };
      });
      const { final, error } = await run(ask('Capital of France?'));
      expect(error).toBeUndefined();
      expect(final?.text).toBe('Paris.');
      expect(final?.usage).toBeUndefined();
    },
  );

  it('a server that reports none leaves the answer without usage', async () => {
    fake.replyText('Paris.', { usageAt: 'none' });
    const { final } = await run(ask('Capital of France?'));
    expect(final?.finishReason).toBe('stop');
    expect(final?.usage).toBeUndefined();
  });
});

describe('tool-call pieces without `index`', () => {
  const calls = [
    { id: 'functions.get_weather:0', name: 'get_weather', arguments: { city: 'Oslo' } },
    { id: 'functions.get_weather:1', name: 'get_weather', arguments: { city: 'Bergen, Vestland' } },
  ];

  it('two calls streamed side by side are kept apart by their place in `tool_calls`', async () => {
    fake.replyToolCalls(calls, { withoutIndex: true, parallelCalls: true, chunkSize: 4 });
    const { final } = await run(ask('weather?'));
    expect(final?.toolCalls).toEqual([
      { id: 'functions.get_weather:0', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { id: 'functions.get_weather:1', name: 'get_weather', arguments: '{"city":"Bergen, Vestland"}' },
    ]);
  });

  it('and so are calls without ids', async () => {
    fake.replyToolCalls(
      calls.map((call) => ({ ...call, id: null })),
      { withoutIndex: true, parallelCalls: true, chunkSize: 4 },
    );
    const { final } = await run(ask('weather?'));
    expect(final?.toolCalls).toEqual([
      { id: undefined, name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { id: undefined, name: 'get_weather', arguments: '{"city":"Bergen, Vestland"}' },
    ]);
  });

  it('calls streamed one after the other, each at place 0, are told apart by their ids', async () => {
    fake.replyToolCalls(calls, { withoutIndex: true, chunkSize: 4 });
    const { final } = await run(ask('weather?'));
    expect(final?.toolCalls.map((c) => [c.id, c.arguments])).toEqual([
      ['functions.get_weather:0', '{"city":"Oslo"}'],
      ['functions.get_weather:1', '{"city":"Bergen, Vestland"}'],
    ]);
  });

  it('side-by-side calls with an `index` still work as OpenAI streams them', async () => {
    fake.replyToolCalls(calls, { parallelCalls: true, chunkSize: 4 });
    const { final } = await run(ask('weather?'));
    expect(final?.toolCalls.map((c) => c.arguments)).toEqual(['{"city":"Oslo"}', '{"city":"Bergen, Vestland"}']);
  });

  it('a whole turn with index-less calls runs both and answers each by its id', async () => {
    fake.replyToolCalls(calls, { withoutIndex: true, parallelCalls: true, chunkSize: 4 });
    fake.replyText('Both 3 °C.');
    const engine = new TurnEngine({
      provider: provider(),
      model: 'openai:kimi-k2.5',
      sessionId: 's1',
      tools: [weather],
    });
    const events = await collect(engine.run('Weather in Oslo and Bergen?'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed', iterations: 2 });
    const results = fake.bodies[1]!.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['functions.get_weather:0', '{"city":"Oslo","tempC":3}'],
      ['functions.get_weather:1', '{"city":"Bergen, Vestland","tempC":3}'],
    ]);
  });
});

describe("DeepSeek's thinking mode gets its reasoning_content back, and nobody else does", () => {
  function engine(model: string, messages?: Message[]): TurnEngine {
    return new TurnEngine({ provider: provider(), model, sessionId: 's1', tools: [weather], messages });
  }

  it('a deepseek-reasoner tool loop sends the reasoning of each answer back on it', async () => {
    fake.demandReasoningBack();
    fake.replyToolCalls([{ id: 'call_ds1', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      reasoning: 'The user wants Oslo. Call the tool.',
    });
    fake.replyText('It is 3 °C in Oslo.', { reasoning: 'The tool says 3.' });
    const deepseek = engine('openai:deepseek-reasoner');
    const events = await collect(deepseek.run('Weather in Oslo?'));

    expect(only(events, 'error')).toEqual([]);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed', iterations: 2 });
    expect(fake.bodies[1]!.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'The user wants Oslo. Call the tool.',
        tool_calls: [
          { id: 'call_ds1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_ds1', content: '{"city":"Oslo","tempC":3}' },
    ]);

    // "In all subsequent requests": the next user turn sends every answer's reasoning again,
    // from a history saved and loaded as JSON (a restart keeps it).
    fake.replyText('You are welcome.');
    const restored = engine('openai:deepseek-reasoner', JSON.parse(JSON.stringify(deepseek.messages)) as Message[]);
    await collect(restored.run('Thanks'));
    const third = fake.bodies[2]!.messages.filter((m) => m.role === 'assistant');
    expect(third.map((m) => (m as { reasoning_content?: unknown }).reasoning_content)).toEqual([
      'The user wants Oslo. Call the tool.',
      'The tool says 3.',
    ]);
  });

  it('a tool call from another model goes to DeepSeek with an empty reasoning_content: the field must be there', async () => {
    const history: OutboundMessage[] = [
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '3' },
    ];
    fake.demandReasoningBack();
    const { final } = await run(ask('', { model: 'openai:deepseek-reasoner', messages: history }));
    expect(final?.finishReason).toBe('stop');
    expect(fake.bodies[0]!.messages[1]).toMatchObject({ role: 'assistant', reasoning_content: '' });

    // What the fake refuses, as DeepSeek does: the same history without the field.
    fake.demandReasoningBack(/^gpt-4\.1$/);
    const refused = await run(ask('', { model: 'openai:gpt-4.1', messages: history }));
    expect(fake.bodies[1]!.messages[1]).not.toHaveProperty('reasoning_content');
    expect(refused.error).toMatchObject({ kind: 'bad_request', status: 400 });
    expect((refused.error as ProviderError).message).toContain(
      'The reasoning_content in the thinking mode must be passed back to the API',
    );
  });

  it.each([
    'openai:deepseek-v4-pro',
    'openai:deepseek/deepseek-v4.1-flash',
    'openai:deepseek-flash',
    'openai:deepseek-ai/DeepSeek-V3.2',
  ])('%s is a thinking DeepSeek too', async (model) => {
    fake.demandReasoningBack(/deepseek/i);
    fake.replyToolCalls([{ id: 'call_x', name: 'get_weather', arguments: { city: 'Oslo' } }], { reasoning: 'Check.' });
    fake.replyText('3 °C.');
    const events = await collect(engine(model).run('Weather in Oslo?'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
    expect(fake.bodies[1]!.messages[1]).toMatchObject({ role: 'assistant', reasoning_content: 'Check.' });
  });

  it.each(['openai:gpt-4.1', 'openai:qwen3:8b', 'openai:deepseek-chat', 'openai:deepseek-r1-distill-llama-70b'])(
    '%s streams reasoning but never gets it back',
    async (model) => {
      fake.replyToolCalls([{ id: 'call_g', name: 'get_weather', arguments: { city: 'Oslo' } }], {
        reasoning: 'Think.',
      });
      fake.replyText('3 °C.');
      const events = await collect(engine(model).run('Weather in Oslo?'));
      expect(only(events, 'reasoning_delta').length).toBeGreaterThan(0);
      expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
      expect(JSON.stringify(fake.bodies[1])).not.toContain('reasoning');
    },
  );

  it("deepseek-chat gets it back once the call's settings turn DeepSeek's thinking on", async () => {
    fake.demandReasoningBack(/^deepseek-chat$/);
    fake.replyToolCalls([{ id: 'call_t', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      reasoning: 'Thinking on.',
    });
    fake.replyText('3 °C.');
    const thinking = new TurnEngine({
      provider: provider(),
      model: 'openai:deepseek-chat',
      sessionId: 's1',
      tools: [weather],
      modelSettings: { thinking: { type: 'enabled' } },
    });
    const events = await collect(thinking.run('Weather in Oslo?'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
    expect(fake.bodies[1]).toMatchObject({ thinking: { type: 'enabled' } });
    expect(fake.bodies[1]!.messages[1]).toMatchObject({ role: 'assistant', reasoning_content: 'Thinking on.' });
  });

  it('a DeepSeek history switched to another model sends that model no reasoning_content', async () => {
    fake.replyToolCalls([{ id: 'call_s', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      reasoning: 'Tool first.',
    });
    fake.replyText('3 °C.', { reasoning: 'Done.' });
    const deepseek = engine('openai:deepseek-reasoner');
    await collect(deepseek.run('Weather in Oslo?'));
    expect(fake.bodies[1]!.messages[1]).toHaveProperty('reasoning_content', 'Tool first.');

    await deepseek.switchModel('openai:gpt-4.1');
    fake.replyText('Sure.');
    await collect(deepseek.run('Thanks'));
    expect(JSON.stringify(fake.bodies[2])).not.toContain('reasoning');
  });
});
