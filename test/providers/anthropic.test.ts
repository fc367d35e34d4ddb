// The Anthropic provider, three ways: the pure conversion functions on their own; the
// provider through the real @anthropic-ai/sdk against FakeAnthropic (streaming, thinking,
// errors, stalls, stops); and whole turns through a real TurnEngine, asserting on the exact
// request bodies the fake received.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  ProviderError,
  toolSchemaOf,
  TurnEngine,
  type AssistantTurn,
  type EngineEvent,
  type Message,
  type OutboundMessage,
  type ProviderChunk,
  type ProviderRequest,
  type ToolDefinition,
} from '../../src/engine/index.js';
import { AnthropicProvider, type AnthropicProviderOptions } from '../../src/providers/anthropic.js';
import {
  CONTINUATION_TEXT,
  toAnthropicPrompt,
  toAnthropicTools,
  withCacheBreakpoints,
  type AnthropicPrompt,
} from '../../src/providers/anthropic-convert.js';
import { errorBody, FakeAnthropic, messageEvents } from '../fakes/anthropic-server.js';
import { collect, lowRisk, only } from '../support/engine-kit.js';

// Not a model the SDK warns about (it logs a deprecation line for e.g. claude-sonnet-4-5).
const MODEL = 'anthropic:claude-sonnet-4-6';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PDF = 'JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK';

function call(id: string, name: string, args: string) {
  return { id, type: 'function' as const, function: { name, arguments: args } };
}

// ---- conversion ----------------------------------------------------------------------

describe('converting the thread to the Messages API shape', () => {
  it('lifts leading system messages into the system parameter, as text blocks', () => {
    const prompt = toAnthropicPrompt([
      { role: 'system', content: 'You are a helpful bot.' },
      { role: 'system', content: '' },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(prompt.system).toEqual([
      { type: 'text', text: 'You are a helpful bot.' },
      { type: 'text', text: 'Be brief.' },
    ]);
    expect(prompt.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('keeps a mid-thread system message in place as tagged user text', () => {
    const prompt = toAnthropicPrompt([
      { role: 'system', content: 'base' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'system', content: 'Plan mode is now on.' },
      { role: 'user', content: 'make a plan' },
    ]);
    expect(prompt.system).toEqual([{ type: 'text', text: 'base' }]);
    expect(prompt.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: '<system>\nPlan mode is now on.\n</system>' },
        { type: 'text', text: 'make a plan' },
      ],
    });
  });

  it('turns tool calls into tool_use blocks with parsed input, and results into tool_result blocks', () => {
    const prompt = toAnthropicPrompt([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          call('toolu_1', 'get_weather', '{"city":"Oslo"}'),
          // The engine stores unparseable arguments as this object: it is sent as is.
          call('toolu_2', 'get_weather', '{"_raw":"{\\"city\\": Osl"}'),
          call('toolu_3', 'get_weather', '[1, 2]'),
          call('toolu_4', 'get_weather', 'not json at all'),
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '{"temp":21}' },
    ]);
    expect(prompt.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { _raw: '{"city": Osl' } },
        { type: 'tool_use', id: 'toolu_3', name: 'get_weather', input: {} },
        { type: 'tool_use', id: 'toolu_4', name: 'get_weather', input: {} },
      ],
    });
    expect(prompt.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"temp":21}' }],
    });
  });

  it('folds parallel tool results and a steering message into ONE user message, tool results first', () => {
    const prompt = toAnthropicPrompt([
      { role: 'user', content: 'compare Oslo and Rome' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [call('a', 'get_weather', '{"city":"Oslo"}'), call('b', 'get_weather', '{"city":"Rome"}')],
      },
      { role: 'tool', tool_call_id: 'a', content: 'cold' },
      { role: 'tool', tool_call_id: 'b', content: 'warm' },
      { role: 'user', content: 'also Paris please' },
    ]);
    expect(prompt.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(prompt.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: 'cold' },
      { type: 'tool_result', tool_use_id: 'b', content: 'warm' },
      { type: 'text', text: 'also Paris please' },
    ]);
  });

  it('starts with a user message even when the (compacted) history starts with the assistant', () => {
    const prompt = toAnthropicPrompt([
      { role: 'system', content: 'base' },
      { role: 'assistant', content: 'Summary so far: we fixed the build.' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(prompt.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: CONTINUATION_TEXT }] });
    expect(prompt.messages[1]!.role).toBe('assistant');
  });

  it('sends no empty text blocks, and drops messages left with nothing to say', () => {
    const prompt = toAnthropicPrompt([
      { role: 'user', content: 'first' },
      // A stopped turn's partial that held only reasoning: nothing is left once stripped.
      { role: 'assistant', content: null },
      {
        role: 'user',
        content: [
          { type: 'text', text: '   ' },
          { type: 'text', text: 'second' },
        ],
      },
      { role: 'assistant', content: '', tool_calls: [call('t1', 'noop', '{}')] },
      { role: 'tool', tool_call_id: 't1', content: 'ok' },
    ]);
    expect(prompt.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'noop', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
    ]);
  });

  it('sends images (inline and by URL) and PDFs as their own block types', () => {
    const prompt = toAnthropicPrompt([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is in these?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
          { type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } },
          { type: 'file', file: { filename: 'notes.txt', file_data: 'data:text/plain;base64,aGk=' } },
        ],
      },
    ]);
    expect(prompt.messages[0]!.content).toEqual([
      { type: 'text', text: 'what is in these?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
      // Formats the API would reject the whole request for become a line of text instead.
      { type: 'text', text: '[image attachment (image/bmp) — format not supported]' },
      { type: 'text', text: '[file attachment "notes.txt" — not a PDF, not sent]' },
    ]);
  });

  it('replays its own thinking blocks first in the assistant message and strips foreign extras', () => {
    const blocks = [
      { type: 'thinking', thinking: 'Oslo first.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'ENCRYPTED' },
    ];
    const prompt = toAnthropicPrompt([
      { role: 'user', content: 'weather in Oslo?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [call('toolu_1', 'get_weather', '{"city":"Oslo"}')],
        _anthropic: { blocks },
        _openai: { response_id: 'resp_123' },
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
    ]);
    expect(prompt.messages[1]!.content).toEqual([
      ...blocks,
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(JSON.stringify(prompt)).not.toContain('resp_123');
  });

  it('replays nothing from an unreadable _anthropic record (a thinking block without its signature)', () => {
    const prompt = toAnthropicPrompt([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'hello',
        _anthropic: { blocks: [{ type: 'thinking', thinking: 'x', signature: '' }] },
      },
      { role: 'assistant', content: 'again', _anthropic: 'garbage' },
    ]);
    expect(prompt.messages[1]!.content).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'text', text: 'again' },
    ]);
  });

  it("maps tool ids outside the API's [a-zA-Z0-9_-] the same way on both sides", () => {
    const prompt = toAnthropicPrompt([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('fc.1:abc', 'noop', '{}')] },
      { role: 'tool', tool_call_id: 'fc.1:abc', content: 'ok' },
    ]);
    expect(prompt.messages[1]!.content[0]).toMatchObject({ type: 'tool_use', id: 'fc_1_abc' });
    expect(prompt.messages[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'fc_1_abc' });
  });

  it('puts cache breakpoints on the last system block and the last message, on a copy only', () => {
    const input: OutboundMessage[] = [
      { role: 'system', content: 'one' },
      { role: 'system', content: 'two' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'hello',
        _anthropic: { blocks: [{ type: 'thinking', thinking: 't', signature: 's' }] },
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ];
    const before = structuredClone(input);
    const converted = toAnthropicPrompt(input);
    const convertedBefore = structuredClone(converted);
    const cached = withCacheBreakpoints(converted);

    expect(cached.system).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two', cache_control: { type: 'ephemeral' } },
    ]);
    expect(cached.messages.at(-1)!.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b', cache_control: { type: 'ephemeral' } },
    ]);
    expect(JSON.stringify(cached).match(/cache_control/g)).toHaveLength(2);
    expect(input).toEqual(before);
    expect(converted).toEqual(convertedBefore);
  });

  it('never puts a breakpoint on a thinking block (the API does not accept one there)', () => {
    const prompt: AnthropicPrompt = {
      system: [],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'so far' },
            { type: 'thinking', thinking: 't', signature: 's' },
          ],
        },
      ],
    };
    expect(withCacheBreakpoints(prompt).messages[1]!.content).toEqual([
      { type: 'text', text: 'so far', cache_control: { type: 'ephemeral' } },
      { type: 'thinking', thinking: 't', signature: 's' },
    ]);
  });

  it('describes tools with their JSON schema as input_schema', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    expect(toAnthropicTools([{ name: 'get_weather', description: 'Weather now', parameters }])).toEqual([
      { name: 'get_weather', description: 'Weather now', input_schema: parameters },
    ]);
  });
});

// ---- the provider through the real SDK ------------------------------------------------

interface Drained {
  chunks: ProviderChunk[];
  final: AssistantTurn | undefined;
  error: unknown;
}

async function drain(
  provider: AnthropicProvider,
  request: Partial<ProviderRequest> = {},
  signal = new AbortController().signal,
): Promise<Drained> {
  const chunks: ProviderChunk[] = [];
  let error: unknown;
  try {
    const full: ProviderRequest = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], tools: [], ...request };
    for await (const chunk of provider.stream(full, signal)) chunks.push(chunk);
  } catch (caught) {
    error = caught;
  }
  const last = chunks.at(-1);
  return { chunks, final: last?.type === 'final' ? last.turn : undefined, error };
}

function textOf(chunks: ProviderChunk[], type: 'text_delta' | 'reasoning_delta'): string {
  return chunks.map((c) => (c.type === type ? c.text : '')).join('');
}

function expectProviderError(error: unknown, kind: string): ProviderError {
  expect(error).toBeInstanceOf(ProviderError);
  expect((error as ProviderError).kind).toBe(kind);
  return error as ProviderError;
}

describe('AnthropicProvider against the fake Messages API', () => {
  let fake: FakeAnthropic;
  const provider = (options: AnthropicProviderOptions = {}) =>
    new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL: fake.baseURL, ...options });

  beforeEach(async () => {
    fake = await new FakeAnthropic().start();
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await fake.stop();
  });

  it('streams the answer as text deltas, then one final turn with usage including the cache', async () => {
    fake.replyText('The quick brown fox jumps.', {
      chunkSize: 3,
      usage: { input: 40, output: 7, cacheRead: 1200, cacheWrite: 300 },
      model: 'claude-sonnet-4-6-20260101',
    });
    const { chunks, final, error } = await drain(provider());

    expect(error).toBeUndefined();
    expect(chunks.filter((c) => c.type === 'text_delta').length).toBeGreaterThan(5);
    expect(textOf(chunks, 'text_delta')).toBe('The quick brown fox jumps.');
    expect(chunks.filter((c) => c.type === 'final')).toHaveLength(1);
    expect(final).toEqual({
      text: 'The quick brown fox jumps.',
      toolCalls: [],
      finishReason: 'stop',
      usage: { input: 40, output: 7, cacheRead: 1200, cacheWrite: 300 },
      // message_start's model: the one that answered, for traces.
      responseModel: 'claude-sonnet-4-6-20260101',
    });
    expect(fake.requests[0]!.path).toBe('/v1/messages');
    expect(fake.authOf(0)).toEqual({ bearer: 'sk-ant-test', apiKey: undefined });
    expect(fake.requests[0]!.body).toMatchObject({ model: 'claude-sonnet-4-6', max_tokens: 8192, stream: true });
  });

  it('shows thinking as reasoning and keeps the signed block for the next call', async () => {
    fake.replyThinking('First, the forecast. Then the answer.', 'sig-XYZ', { text: 'Sunny.' }, { chunkSize: 8 });
    const { chunks, final } = await drain(provider({ thinking: { budgetTokens: 2048 } }));

    expect(textOf(chunks, 'reasoning_delta')).toBe('First, the forecast. Then the answer.');
    expect(textOf(chunks, 'text_delta')).toBe('Sunny.');
    expect(final).toMatchObject({
      text: 'Sunny.',
      reasoning: 'First, the forecast. Then the answer.',
      extras: {
        _anthropic: {
          blocks: [{ type: 'thinking', thinking: 'First, the forecast. Then the answer.', signature: 'sig-XYZ' }],
        },
      },
    });
    expect(fake.requests[0]!.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });
  });

  it('assembles tool_use blocks from input_json_delta fragments, and keeps redacted thinking', async () => {
    fake.replyBlocks(
      [
        { type: 'redacted_thinking', data: 'ENCRYPTED==' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: { city: 'Oslo', days: 3 } },
        { type: 'tool_use', id: 'toolu_B', name: 'list_files', input: {} },
      ],
      { chunkSize: 5 },
    );
    const { final } = await drain(provider());
    expect(final).toMatchObject({
      text: 'Let me look.',
      finishReason: 'tool_calls',
      toolCalls: [
        { id: 'toolu_A', name: 'get_weather', arguments: '{"city":"Oslo","days":3}' },
        { id: 'toolu_B', name: 'list_files', arguments: '{}' },
      ],
      extras: { _anthropic: { blocks: [{ type: 'redacted_thinking', data: 'ENCRYPTED==' }] } },
    });
    expect(final?.reasoning).toBeUndefined();
  });

  it('maps stop reasons: max_tokens → length, refusal → content_filter', async () => {
    fake.replyText('cut off mid', { stopReason: 'max_tokens' }).replyText('no', { stopReason: 'refusal' });
    expect((await drain(provider())).final?.finishReason).toBe('length');
    expect((await drain(provider())).final?.finishReason).toBe('content_filter');
  });

  it('reads the key from ANTHROPIC_API_KEY when none is given', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-from-env');
    const { final } = await drain(new AnthropicProvider({ baseURL: fake.baseURL }), {
      messages: [{ role: 'user', content: 'echo me' }],
    });
    expect(final?.text).toBe('echo me');
    expect(fake.authOf(0).bearer).toBe('sk-ant-from-env');
  });

  it('without any key, constructs fine and fails at call time with a clear auth error', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    const bare = new AnthropicProvider({ baseURL: fake.baseURL });
    expect(bare.capabilities(MODEL)).toMatchObject({ tools: true, vision: true, pdf: true, contextWindow: 200_000 });
    const { error } = await drain(bare);
    expect(expectProviderError(error, 'auth').message).toMatch(/ANTHROPIC_API_KEY is not set/);
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a thinking budget the API would reject, at construction', () => {
    expect(() => new AnthropicProvider({ apiKey: 'k', thinking: { budgetTokens: 500 } })).toThrow(/at least 1024/);
    expect(() => new AnthropicProvider({ apiKey: 'k', maxTokens: 4096, thinking: { budgetTokens: 4096 } })).toThrow(
      /below maxTokens/,
    );
  });

  describe('errors', () => {
    it.each([
      ['overflow', 'context_overflow'],
      ['auth', 'auth'],
      ['notFound', 'model_not_found'],
      ['server', 'server'],
      ['overloaded', 'server'],
    ] as const)('a %s answer becomes a %s ProviderError', async (name, kind) => {
      fake.replyError(name);
      const { error, chunks } = await drain(provider({ maxRetries: 0 }));
      expect(chunks).toEqual([]);
      expectProviderError(error, kind);
      expect(fake.requests).toHaveLength(1);
    });

    it('recognises the other overflow wording, and never retries an overflow', async () => {
      fake.replyError(
        400,
        errorBody(
          'invalid_request_error',
          'input length and `max_tokens` exceed context limit: 187254 + 21333 > 200000',
        ),
      );
      const { error } = await drain(provider());
      expect(expectProviderError(error, 'context_overflow').status).toBe(400);
      expect(fake.requests).toHaveLength(1);
    });

    it('a credit balance too low to call the API is reported as out of credit', async () => {
      fake.replyError(
        400,
        errorBody(
          'invalid_request_error',
          'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
        ),
      );
      const { error } = await drain(provider());
      expect(expectProviderError(error, 'quota').message).toMatch(/out of quota or credit/);
    });

    it("a plain 400 stays a bad request, with the API's own words", async () => {
      fake.replyError(
        400,
        errorBody('invalid_request_error', 'messages.0.content: text content blocks must be non-empty'),
      );
      const { error } = await drain(provider());
      expect(expectProviderError(error, 'bad_request').message).toContain('text content blocks must be non-empty');
    });

    it('a 429 is retried (3 requests with maxRetries 2), then reported as rate_limited', async () => {
      fake.replyError('rateLimit').replyError('rateLimit').replyError('rateLimit');
      const { error } = await drain(provider({ maxRetries: 2 }));
      expectProviderError(error, 'rate_limited');
      expect(fake.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
    });

    it('a 529 that clears on retry is not an error at all', async () => {
      fake.replyError('overloaded').replyText('back again');
      const { final, error } = await drain(provider());
      expect(error).toBeUndefined();
      expect(final?.text).toBe('back again');
      expect(fake.requests).toHaveLength(2);
    });

    it('a refused connection becomes a connection error', async () => {
      const closed = await new FakeAnthropic().start();
      const baseURL = closed.baseURL;
      await closed.stop();
      const { error } = await drain(new AnthropicProvider({ apiKey: 'k', baseURL, maxRetries: 0 }));
      expectProviderError(error, 'connection');
    });

    it('an error event mid-stream (overloaded) becomes a server error after the partial text', async () => {
      fake.replyStreamError('overloaded_error', 'Overloaded', 'Half an ans');
      const { chunks, final, error } = await drain(provider());
      expect(textOf(chunks, 'text_delta')).toBe('Half an ans');
      expect(final).toBeUndefined();
      expectProviderError(error, 'server');
    });

    it('a dropped connection mid-stream becomes a ProviderError, not a hang', async () => {
      fake.replyDropAfter(5);
      const { final, error } = await drain(provider());
      expect(final).toBeUndefined();
      expectProviderError(error, 'connection');
    });

    it('a stream that ends cleanly but without message_stop is not taken for a whole answer', async () => {
      fake.reply({ kind: 'sse', events: messageEvents([{ type: 'text', text: 'trunc' }]).slice(0, -2) });
      const { chunks, final, error } = await drain(provider());
      expect(textOf(chunks, 'text_delta')).toBe('trunc');
      expect(final).toBeUndefined();
      expectProviderError(error, 'connection');
    });
  });

  describe('stalls and stops', () => {
    it('a stream that goes quiet mid-answer fails as stalled, and the connection is closed', async () => {
      fake.replyStallAfter(5);
      const { chunks, error } = await drain(provider({ stallTimeoutMs: 150 }));
      expect(chunks.length).toBeGreaterThan(0);
      expect(expectProviderError(error, 'stalled').message).toMatch(/stopped sending data/);
      await fake.waitForClientClose(0);
    });

    it('a slow but steady stream is not mistaken for a stall: every event rewinds the watchdog', async () => {
      const text = 'steady '.repeat(10);
      fake.replyText(text, { chunkSize: 7, delayMs: 40 });
      const { final, error } = await drain(provider({ stallTimeoutMs: 250 }));
      expect(error).toBeUndefined();
      expect(final?.text).toBe(text);
    });

    it('a server that never answers fails on the headers timeout, as stalled', async () => {
      fake.replyNoAnswer();
      const { error } = await drain(provider({ headersTimeoutMs: 150, maxRetries: 0 }));
      expectProviderError(error, 'stalled');
    });

    it('a stop mid-stream ends the stream without a final chunk and without a throw, and hangs up', async () => {
      fake.replyText('word '.repeat(200), { chunkSize: 5, delayMs: 10 });
      const controller = new AbortController();
      const chunks: ProviderChunk[] = [];
      const iterate = async () => {
        for await (const chunk of provider().stream(
          { model: MODEL, messages: [{ role: 'user', content: 'go' }], tools: [] },
          controller.signal,
        )) {
          chunks.push(chunk);
          if (chunks.length === 3) controller.abort();
        }
      };
      await expect(iterate()).resolves.toBeUndefined();
      expect(chunks.some((c) => c.type === 'final')).toBe(false);
      await fake.waitForClientClose(0);
    });

    it('a stop before the headers arrive returns quietly too', async () => {
      fake.replyNoAnswer();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const { chunks, error } = await drain(provider(), {}, controller.signal);
      expect(error).toBeUndefined();
      expect(chunks).toEqual([]);
      await fake.waitForClientClose(0);
    });
  });
});

// ---- whole turns through the engine ----------------------------------------------------

describe('turns through TurnEngine and AnthropicProvider', () => {
  let fake: FakeAnthropic;
  beforeEach(async () => {
    fake = await new FakeAnthropic().start();
  });
  afterEach(async () => {
    await fake.stop();
  });

  const weather = (onRun?: () => void): ToolDefinition =>
    defineTool({
      name: 'get_weather',
      description: 'Current weather for a city',
      schema: z.object({ city: z.string() }),
      metadata: lowRisk,
      async execute({ city }) {
        onRun?.();
        return { city, sky: 'sunny' };
      },
    });

  /** Every key anywhere in a JSON value. */
  function keysIn(value: unknown, into = new Set<string>()): Set<string> {
    if (Array.isArray(value)) for (const item of value) keysIn(item, into);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        into.add(key);
        keysIn(inner, into);
      }
    }
    return into;
  }

  it('sends no notices or sidecars, the system prompt as `system`, tools as input_schema, and the system context on the last user message', async () => {
    const history: Message[] = [
      {
        role: 'user',
        content: 'earlier question',
        ts: 1,
        source: { platform: 'slack', userId: 'U1' },
        _display: { card: true },
      },
      {
        role: 'assistant',
        content: 'earlier answer',
        ts: 2,
        reasoning: 'thought about it',
        usage: { model: 'openai:gpt-4.1', input: 5, output: 5 },
        _openai: { id: 'resp_1' },
      },
      { role: 'notice', kind: 'model_switch', text: 'Model switched to anthropic:claude-sonnet-4-6', ts: 3 },
    ];
    const tool = weather();
    const engine = new TurnEngine({
      provider: new AnthropicProvider({ apiKey: 'k', baseURL: fake.baseURL }),
      model: MODEL,
      instructions: 'You are a chat bot.',
      messages: history,
      tools: [tool],
      ports: { contextProvider: () => 'Mode: normal. Channel: #general.' },
    });
    fake.replyText('Hello!');
    const events = await collect(engine.run('and now?'));
    expect(only(events, 'turn_end')[0]!.status).toBe('completed');

    const body = fake.requests[0]!.body as Record<string, unknown>;
    const keys = keysIn(body);
    for (const sidecar of ['ts', 'source', '_display', 'reasoning', 'usage', '_openai', 'kind'])
      expect(keys.has(sidecar)).toBe(false);
    expect(JSON.stringify(body)).not.toContain('Model switched');
    expect(body.system).toEqual([{ type: 'text', text: 'You are a chat bot.', cache_control: { type: 'ephemeral' } }]);
    expect(body.tools).toEqual([
      { name: 'get_weather', description: 'Current weather for a city', input_schema: toolSchemaOf(tool).parameters },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'earlier question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'earlier answer' }] },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: 'and now?\n\n<system-context>\nMode: normal. Channel: #general.\n</system-context>',
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ]);
    // The engine's own history never sees the breakpoints.
    expect(JSON.stringify(engine.messages)).not.toContain('cache_control');
  });

  it('a multi-step tool use with thinking replays the signed thinking block before the tool_use', async () => {
    const engine = new TurnEngine({
      provider: new AnthropicProvider({ apiKey: 'k', baseURL: fake.baseURL, thinking: { budgetTokens: 2048 } }),
      model: MODEL,
      tools: [weather()],
    });
    fake
      .replyThinking('They want Oslo. I will call the tool.', 'sig-step-1', {
        toolUse: [{ id: 'toolu_01', name: 'get_weather', input: { city: 'Oslo' } }],
      })
      .replyText('It is sunny in Oslo.', { usage: { input: 12, output: 8, cacheRead: 900, cacheWrite: 0 } });

    const events = await collect(engine.run('weather in Oslo?'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed', iterations: 2 });
    expect(
      only(events, 'reasoning_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('They want Oslo. I will call the tool.');
    expect(only(events, 'tool_finished')[0]).toMatchObject({ name: 'get_weather', status: 'ok' });

    const second = fake.requests[1]!.body as { messages: unknown[] };
    expect(second.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather in Oslo?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'They want Oslo. I will call the tool.', signature: 'sig-step-1' },
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: expect.stringContaining('sunny'),
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ]);
    const last = only(events, 'assistant_message').at(-1)!;
    expect(last).toMatchObject({
      text: 'It is sunny in Oslo.',
      usage: { input: 12, output: 8, cacheRead: 900, cacheWrite: 0 },
    });
  });

  it('a steering message sent during the tool pass rides in the same user message as the tool results', async () => {
    // The tool runs after construction, so the closure sees the engine.
    const engine: TurnEngine = new TurnEngine({
      provider: new AnthropicProvider({ apiKey: 'k', baseURL: fake.baseURL }),
      model: MODEL,
      tools: [weather(() => engine.queueSteering('and in Rome?'))],
    });
    fake
      .replyToolUse([{ id: 'toolu_01', name: 'get_weather', input: { city: 'Oslo' } }], { text: 'Checking.' })
      .replyText('Oslo is sunny; checking Rome next.');
    const events = await collect(engine.run('weather in Oslo?'));
    expect(only(events, 'steering_injected')).toHaveLength(1);

    const second = fake.requests[1]!.body as { messages: { role: string; content: { type: string }[] }[] };
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(second.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_01', content: expect.stringContaining('Oslo') },
      { type: 'text', text: 'and in Rome?', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('a context overflow from the API reaches the engine as one (routed to compaction, not shown raw)', async () => {
    const engine = new TurnEngine({
      provider: new AnthropicProvider({ apiKey: 'k', baseURL: fake.baseURL }),
      model: MODEL,
    });
    fake.replyError('overflow');
    const events = await collect(engine.run('a very long thread'));
    expect(only(events, 'error')[0]).toMatchObject({ errorKind: 'context_overflow' });
  });

  it('a stop during a slow answer ends the turn interrupted, keeps the partial, and hangs up', async () => {
    const engine = new TurnEngine({
      provider: new AnthropicProvider({ apiKey: 'k', baseURL: fake.baseURL }),
      model: MODEL,
    });
    fake.replyText('slowly '.repeat(300), { chunkSize: 7, delayMs: 10 });
    let deltas = 0;
    const events = await collect(engine.run('go'), (event: EngineEvent) => {
      if (event.type === 'assistant_delta' && ++deltas === 3) engine.requestInterrupt();
    });
    expect(only(events, 'turn_end')[0]!.status).toBe('interrupted');
    expect(engine.messages.find((m) => m.role === 'assistant')).toMatchObject({ content: 'slowly slowly slowly ' });
    await fake.waitForClientClose(0);
  });
});
