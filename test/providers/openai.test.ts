// OpenAIProvider against FakeOpenAI, through the real openai SDK: what reaches the wire
// (driven through a real TurnEngine, so the whole outbound path is covered), how a
// stream becomes chunks, and how every failure becomes one ProviderError, a stop a
// quiet end, and a stall or a dropped connection never a hang.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  ProviderError,
  TurnEngine,
  type AssistantTurn,
  type Message,
  type ProviderChunk,
  type ProviderRequest,
  type TurnEngineOptions,
} from '../../src/engine/index.js';
import { OpenAIProvider, type OpenAIProviderOptions } from '../../src/providers/openai.js';
import { HttpFake } from '../fakes/http-fake.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { collect, lowRisk, only } from '../support/engine-kit.js';

let fake: FakeOpenAI;

beforeEach(async () => {
  fake = await new FakeOpenAI().start();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await fake.stop();
});

function provider(options: OpenAIProviderOptions = {}): OpenAIProvider {
  return new OpenAIProvider({ apiKey: 'sk-test', baseURL: fake.baseURL, ...options });
}

function ask(text: string, extra: Partial<ProviderRequest> = {}): ProviderRequest {
  return { model: 'openai:gpt-4.1', messages: [{ role: 'user', content: text }], tools: [], ...extra };
}

/** Consume a stream to its end: the deltas seen, and the final turn if one came. */
async function drain(
  stream: AsyncIterable<ProviderChunk>,
  onChunk?: (chunk: ProviderChunk, index: number) => void,
): Promise<{ chunks: ProviderChunk[]; final: AssistantTurn | undefined }> {
  const chunks: ProviderChunk[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    onChunk?.(chunk, chunks.length);
  }
  const last = chunks.at(-1);
  return { chunks, final: last?.type === 'final' ? last.turn : undefined };
}

async function failure(stream: AsyncIterable<ProviderChunk>): Promise<ProviderError> {
  try {
    await drain(stream);
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error('the stream ended without an error');
}

const never = new AbortController().signal;

const weather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: z.object({ city: z.string() }),
  metadata: lowRisk,
  async execute({ city }) {
    return { city, tempC: 3 };
  },
});

function engine(options: Partial<TurnEngineOptions> = {}): TurnEngine {
  return new TurnEngine({
    provider: provider(),
    model: 'openai:gpt-4.1',
    sessionId: 's1',
    tools: [weather],
    ...options,
  });
}

describe('what reaches the wire', () => {
  it('sends an engine turn with notices, sidecars and foreign extras stripped, context on the last user message, and tool schemas', async () => {
    const history: Message[] = [
      { role: 'system', content: 'You are a helpful bot.', ts: 1 },
      {
        role: 'user',
        content: 'Weather in Oslo?',
        ts: 2,
        source: { platform: 'slack', channel: 'C1', userId: 'U1', userName: 'ann' },
        _display: { avatar: 'ann.png' },
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_old1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
        ts: 3,
        reasoning: 'I should look it up.',
        usage: { model: 'anthropic:claude-sonnet-4-6', input: 50, output: 9 },
        _anthropic: { thinking: [{ type: 'thinking', thinking: 'look it up', signature: 'sig-abc' }] },
      },
      {
        role: 'tool',
        tool_call_id: 'call_old1',
        content: '{"city":"Oslo","tempC":3}',
        ts: 4,
        _display: { summary: '3 °C' },
      },
      { role: 'assistant', content: 'It is 3 °C in Oslo.', ts: 5, _anthropic: { signature: 'sig-def' } },
      { role: 'notice', kind: 'model_switch', text: 'Model switched to openai:gpt-4.1', ts: 6 },
    ];
    fake.replyText('Tomorrow looks colder.');
    const turn = engine({
      messages: history,
      modelSettings: { temperature: 0.2 },
      ports: { contextProvider: () => 'mode: careful' },
    });

    await collect(turn.run('And tomorrow?'));

    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe('/v1/chat/completions');
    expect(fake.bodies[0]).toEqual({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'You are a helpful bot.' },
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_old1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_old1', content: '{"city":"Oslo","tempC":3}' },
        { role: 'assistant', content: 'It is 3 °C in Oslo.' },
        { role: 'user', content: 'And tomorrow?\n\n<system-context>\nmode: careful\n</system-context>' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
      temperature: 0.2,
    });
    const wire = JSON.stringify(fake.requests[0]!.body);
    for (const leak of ['_anthropic', '_display', '"ts"', '"source"', '"reasoning"', '"usage"', 'notice', 'sig-abc']) {
      expect(wire).not.toContain(leak);
    }
  });

  it('omits `tools` when there are none, and passes image and file parts through', async () => {
    const parts = [
      { type: 'text' as const, text: 'What is in these?' },
      { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
      { type: 'file' as const, file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
    ];
    await drain(provider().stream(ask('', { messages: [{ role: 'user', content: parts }] }), never));
    expect(fake.bodies[0]).not.toHaveProperty('tools');
    expect(fake.bodies[0]!.messages).toEqual([{ role: 'user', content: parts }]);
  });

  it('replays a stopped reasoning-only partial with empty text, since OpenAI refuses null content without tool calls', async () => {
    const messages: ProviderRequest['messages'] = [
      { role: 'user', content: 'think about it' },
      { role: 'assistant', content: null, _anthropic: { signature: 'x' } },
      { role: 'user', content: 'go on' },
    ];
    await drain(provider().stream(ask('', { messages }), never));
    expect(fake.bodies[0]!.messages[1]).toEqual({ role: 'assistant', content: '' });
  });

  it('runs a two-step tool round trip: the call, then its result in the next body', async () => {
    fake.replyToolCalls([{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      text: 'Let me check.',
    });
    fake.replyText('It is 3 °C in Oslo.');

    const events = await collect(engine().run('Weather in Oslo?'));

    expect(fake.requests).toHaveLength(2);
    expect(fake.bodies[1]!.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_w1', content: '{"city":"Oslo","tempC":3}' },
    ]);
    expect(only(events, 'assistant_message').map((e) => e.text)).toEqual(['Let me check.', 'It is 3 °C in Oslo.']);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed', iterations: 2 });
  });

  it('lets arguments that are not JSON reach the engine raw, which answers the model with a tool error', async () => {
    fake.replyToolCalls([{ id: 'call_bad', name: 'get_weather', arguments: '{"city": "Os' }], {
      finishReason: 'tool_calls',
    });
    const direct = await drain(provider().stream(ask('weather?'), never));
    expect(direct.final?.toolCalls).toEqual([{ id: 'call_bad', name: 'get_weather', arguments: '{"city": "Os' }]);

    fake.replyToolCalls([{ id: 'call_bad2', name: 'get_weather', arguments: '{"city": "Os' }]);
    fake.replyText('Sorry, let me try again later.');
    const events = await collect(engine().run('Weather in Oslo?'));

    const toolResult = fake.bodies[2]!.messages.at(-1);
    expect(toolResult).toMatchObject({ role: 'tool', tool_call_id: 'call_bad2' });
    expect(toolResult?.content).toContain('not a JSON object');
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
  });

  it('accepts tool calls without ids from a compatible server: the engine gives each a unique one', async () => {
    const calls = [
      { id: null, name: 'get_weather', arguments: { city: 'Oslo' } },
      { id: null, name: 'get_weather', arguments: { city: 'Bergen' } },
    ];
    fake.replyToolCalls(calls);
    const direct = await drain(provider().stream(ask('weather?'), never));
    expect(direct.final?.toolCalls).toEqual([
      { id: undefined, name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { id: undefined, name: 'get_weather', arguments: '{"city":"Bergen"}' },
    ]);

    fake.replyToolCalls(calls);
    fake.replyText('Oslo 3 °C, Bergen 3 °C.');
    await collect(engine().run('Weather in Oslo and Bergen?'));
    const [, assistant, first, second] = fake.bodies[2]!.messages;
    const ids = assistant?.role === 'assistant' ? (assistant.tool_calls ?? []).map((c) => c.id) : [];
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^call_\w+$/);
    expect([first, second].map((m) => (m?.role === 'tool' ? m.tool_call_id : undefined))).toEqual(ids);
  });
});

describe('what comes back', () => {
  it.each(['reasoning_content', 'reasoning'] as const)(
    'streams text and reasoning deltas (reasoning sent as `%s`)',
    async (reasoningField) => {
      fake.replyText('Hello there, world', { chunkSize: 5, reasoning: 'Greet them.', reasoningField });
      const { chunks, final } = await drain(provider().stream(ask('hi'), never));
      expect(
        chunks.filter((c) => c.type === 'reasoning_delta').map((c) => (c.type === 'reasoning_delta' ? c.text : '')),
      ).toEqual(['Greet', ' them', '.']);
      expect(chunks.filter((c) => c.type === 'text_delta').map((c) => (c.type === 'text_delta' ? c.text : ''))).toEqual(
        ['Hello', ' ther', 'e, wo', 'rld'],
      );
      expect(final).toEqual({
        text: 'Hello there, world',
        reasoning: 'Greet them.',
        toolCalls: [],
        finishReason: 'stop',
        usage: { input: 12, output: 4, cacheRead: 0 },
        responseModel: 'gpt-4.1',
      });
    },
  );

  it('says which model answered, as the chunks name it (a dated snapshot of the alias asked for)', async () => {
    fake.replyText('ok', { model: 'gpt-4.1-2025-04-14' });
    const { final } = await drain(provider().stream(ask('hi'), never));
    expect(final?.responseModel).toBe('gpt-4.1-2025-04-14');
  });

  it('maps usage: cached tokens are counted apart from fresh input', async () => {
    fake.replyText('ok', { usage: { prompt_tokens: 1000, completion_tokens: 7, cached_tokens: 600 } });
    const { final } = await drain(provider().stream(ask('hi'), never));
    expect(final?.usage).toEqual({ input: 400, output: 7, cacheRead: 600 });
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['function_call', 'tool_calls'],
    ['eos_token', 'other'],
  ] as const)('maps finish_reason %s to %s', async (wire, expected) => {
    fake.replyText('cut', { finishReason: wire });
    const { final } = await drain(provider().stream(ask('hi'), never));
    expect(final?.finishReason).toBe(expected);
  });
});

describe('failures become ProviderErrors', () => {
  it('400 context_length_exceeded is a context overflow, with no retry', async () => {
    fake.replyError(400);
    const error = await failure(provider().stream(ask('a very long story'), never));
    expect(error.kind).toBe('context_overflow');
    expect(error.status).toBe(400);
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    [
      'vLLM',
      {
        object: 'error',
        message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    ],
    [
      'llama.cpp',
      {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
      },
    ],
    [
      'Ollama',
      {
        message: 'the request exceeds the available context size',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    ],
  ])('an overflow worded the %s way is a context overflow too', async (_server, inner) => {
    fake.replyError(400, { error: inner });
    expect((await failure(provider().stream(ask('long'), never))).kind).toBe('context_overflow');
  });

  it.each([
    [401, 'auth'],
    [404, 'model_not_found'],
  ] as const)('%i becomes %s', async (status, kind) => {
    fake.replyError(status);
    const error = await failure(provider().stream(ask('hi'), never));
    expect(error.kind).toBe(kind);
    expect(error.status).toBe(status);
  });

  it('429 is rate_limited once the SDK retries are spent: 3 requests with maxRetries 2', async () => {
    fake.replyError(429).replyError(429).replyError(429);
    const error = await failure(provider({ maxRetries: 2 }).stream(ask('hi'), never));
    expect(error.kind).toBe('rate_limited');
    expect(fake.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
  });

  it('429 insufficient_quota (no credit left) says so instead of "rate limited"', async () => {
    const quota = {
      error: {
        message: 'You exceeded your current quota, please check your plan and billing details.',
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    };
    fake.replyError(429, quota, { 'x-should-retry': 'false' });
    const error = await failure(provider({ maxRetries: 2 }).stream(ask('hi'), never));
    expect(error.kind).toBe('quota');
    expect(error.message).toMatch(/out of quota or credit/);
  });

  it('500 is a server error', async () => {
    fake.replyError(500);
    const error = await failure(provider({ maxRetries: 0 }).stream(ask('hi'), never));
    expect(error.kind).toBe('server');
    expect(error.status).toBe(500);
  });

  it('a refused connection is a connection error', async () => {
    const closed = await new HttpFake(() => ({ kind: 'no_answer' })).start();
    const baseURL = `${closed.origin}/v1`;
    await closed.stop();
    const error = await failure(
      new OpenAIProvider({ apiKey: 'sk-test', baseURL, maxRetries: 0 }).stream(ask('hi'), never),
    );
    expect(error.kind).toBe('connection');
  });

  it('a connection dropped mid-stream is a connection error, not a hang', async () => {
    fake.replyDrop(3);
    const error = await failure(provider().stream(ask('hi'), never));
    expect(error.kind).toBe('connection');
  });

  it('a rejected key ends an engine turn with one friendly error line', async () => {
    fake.replyError(401);
    const events = await collect(engine().run('hi'));
    expect(only(events, 'error')).toEqual([
      { type: 'error', errorKind: 'auth', message: expect.stringContaining('rejected the API key (401)') },
    ]);
  });

  it('without a key or a base URL, the call fails with a clear auth error and sends nothing', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    vi.stubEnv('OPENAI_BASE_URL', '');
    const error = await failure(new OpenAIProvider().stream(ask('hi'), never));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('OPENAI_API_KEY is not set');
  });

  it('a local compatible server needs no key: a placeholder is sent', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    const { final } = await drain(new OpenAIProvider({ baseURL: fake.baseURL }).stream(ask('echo me'), never));
    expect(final?.text).toBe('echo me');
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer not-needed');
  });
});

describe('stalls and stops', () => {
  it.each([
    ['right after the headers', 0, 0],
    ['mid-answer', 3, 2],
  ])('a stream that goes quiet %s fails as stalled and the connection is closed', async (_when, events, deltas) => {
    fake.replyStallAfter(events);
    const seen: ProviderChunk[] = [];
    let caught: unknown;
    try {
      for await (const chunk of provider({ stallTimeoutMs: 150 }).stream(ask('hi'), never)) seen.push(chunk);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ProviderError);
    expect((caught as ProviderError).kind).toBe('stalled');
    expect(seen).toHaveLength(deltas);
    await fake.waitForClientClose(0);
  });

  it(
    "a consumer slower than the stall timeout is not a stall: only the server's silence is timed",
    { timeout: 20_000 },
    async () => {
      // The whole answer is sent at once; the consumer holds each delta past the timeout (a slow
      // chat platform). The watchdog, paused while a delta is held, must let it finish.
      fake.replyText('one two three', { chunkSize: 4 });
      const chunks: ProviderChunk[] = [];
      for await (const chunk of provider({ stallTimeoutMs: 400 }).stream(ask('hi'), never)) {
        chunks.push(chunk);
        if (chunk.type === 'text_delta') await new Promise((resolve) => setTimeout(resolve, 600));
      }
      expect(chunks.filter((chunk) => chunk.type === 'text_delta').length).toBeGreaterThanOrEqual(3);
      const last = chunks.at(-1);
      expect(last?.type === 'final' && last.turn.text).toBe('one two three');
    },
  );

  it('a server that never sends headers fails as stalled well before the SDK timeout', async () => {
    fake.replyStall();
    const error = await failure(provider({ stallTimeoutMs: 150, headersTimeoutMs: 60_000 }).stream(ask('hi'), never));
    expect(error.kind).toBe('stalled');
    expect(fake.requests).toHaveLength(1);
    await fake.waitForClientClose(0);
  });

  it('stopping mid-stream ends the iteration quietly, with no final chunk, and hangs up', async () => {
    fake.replyStallAfter(3);
    const controller = new AbortController();
    const { chunks } = await drain(provider().stream(ask('hi'), controller.signal), (chunk) => {
      if (chunk.type === 'text_delta') controller.abort();
    });
    expect(chunks.map((c) => c.type)).toEqual(['text_delta']);
    await fake.waitForClientClose(0);
  });

  it('a consumer that walks away mid-answer hangs up', async () => {
    fake.replyText('one two three four five six', { chunkSize: 4, delayMs: 20 });
    for await (const chunk of provider().stream(ask('hi'), never)) {
      if (chunk.type === 'text_delta') break;
    }
    await fake.waitForClientClose(0);
  });

  it('stopping before headers ends the iteration quietly and hangs up', async () => {
    fake.replyStall();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const { chunks } = await drain(provider().stream(ask('hi'), controller.signal));
    expect(chunks).toEqual([]);
    await fake.waitForClientClose(0);
  });

  it('a stop from the engine during a silent stream ends the turn as interrupted and hangs up', async () => {
    fake.replyStallAfter(3);
    const turn = engine();
    const events = await collect(turn.run('hi'), (event) => {
      if (event.type === 'assistant_delta') turn.requestInterrupt();
    });
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });
    await fake.waitForClientClose(0);
  });
});

describe('capabilities', () => {
  it('knows OpenAI models and assumes little of anything else', () => {
    expect(provider().capabilities('openai:gpt-4o')).toMatchObject({ vision: true, contextWindow: 128_000 });
    expect(provider().capabilities('llama3.1:8b')).toMatchObject({ tools: true, vision: false });
  });
});
