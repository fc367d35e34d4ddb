// A fake Anthropic Messages API: `POST /v1/messages` answered with the real SSE wire format
// (`message_start`, content block events, `message_stop`), so the real @anthropic-ai/sdk
// can be driven against it. Replies are scripted per request; with none queued it echoes the last user
// text. The one idea: events are built from whole content blocks (text, thinking,
// tool_use), each streamed as content_block_start / _delta… / _stop at its own index,
// exactly as the API does, so the client under test has to do the real assembly.
import type { IncomingHttpHeaders } from 'node:http';
import { HttpFake, type FakeReply, type RecordedRequest, type ReplyScript, type SseEvent } from './http-fake.js';

interface FakeUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export type FakeBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface FakeToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface StreamOptions {
  /** Characters per text/thinking/JSON delta (default 16). */
  chunkSize?: number;
  /** Pause between events, in ms. */
  delayMs?: number;
  usage?: FakeUsage;
  /** Default: `tool_use` when a tool_use block is present, else `end_turn`. */
  stopReason?: string;
  model?: string;
}

/** Ready error bodies, as the API sends them (`{"type":"error","error":{…},"request_id":…}`). */
export const ANTHROPIC_ERRORS = {
  overflow: errorBody('invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum'),
  auth: errorBody('authentication_error', 'invalid x-api-key'),
  notFound: errorBody('not_found_error', 'model: claude-nonexistent'),
  rateLimit: errorBody('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
  server: errorBody('api_error', 'Internal server error'),
  overloaded: errorBody('overloaded_error', 'Overloaded'),
} as const;

const STATUS_OF: Record<keyof typeof ANTHROPIC_ERRORS, number> = {
  overflow: 400,
  auth: 401,
  notFound: 404,
  rateLimit: 429,
  server: 500,
  overloaded: 529,
};

export function errorBody(
  type: string,
  message: string,
): { type: 'error'; error: { type: string; message: string }; request_id: string } {
  return { type: 'error', error: { type, message }, request_id: 'req_fake_0001' };
}

/** The full event sequence of one streamed message made of `blocks`. */
export function messageEvents(blocks: FakeBlock[], options: StreamOptions = {}): SseEvent[] {
  const size = Math.max(1, options.chunkSize ?? 16);
  const usage = options.usage ?? {};
  const stopReason = options.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const events: SseEvent[] = [
    event('message_start', {
      message: {
        id: 'msg_fake_01',
        type: 'message',
        role: 'assistant',
        model: options.model ?? 'claude-fake',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input ?? 25,
          output_tokens: 1,
          cache_creation_input_tokens: usage.cacheWrite ?? 0,
          cache_read_input_tokens: usage.cacheRead ?? 0,
        },
      },
    }),
    event('ping', {}),
  ];
  blocks.forEach((block, index) => events.push(...blockEvents(block, index, size)));
  events.push(
    event('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output ?? 10 },
    }),
    event('message_stop', {}),
  );
  return events;
}

/** A `text_delta` event for block `index`: the smallest unit of a streamed answer. */
function textDeltaEvent(index: number, text: string): SseEvent {
  return event('content_block_delta', { index, delta: { type: 'text_delta', text } });
}

function blockEvents(block: FakeBlock, index: number, size: number): SseEvent[] {
  const delta = (payload: Record<string, unknown>) => event('content_block_delta', { index, delta: payload });
  const start = (content_block: Record<string, unknown>) => event('content_block_start', { index, content_block });
  const stop = event('content_block_stop', { index });
  switch (block.type) {
    case 'text':
      return [
        start({ type: 'text', text: '' }),
        ...pieces(block.text, size).map((text) => textDeltaEvent(index, text)),
        stop,
      ];
    case 'thinking':
      return [
        start({ type: 'thinking', thinking: '', signature: '' }),
        ...pieces(block.thinking, size).map((thinking) => delta({ type: 'thinking_delta', thinking })),
        delta({ type: 'signature_delta', signature: block.signature }),
        stop,
      ];
    case 'redacted_thinking':
      return [start({ type: 'redacted_thinking', data: block.data }), stop];
    case 'tool_use':
      // The API opens with `input: {}` and an empty fragment, then streams the JSON text.
      return [
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} }),
        delta({ type: 'input_json_delta', partial_json: '' }),
        ...pieces(JSON.stringify(block.input), size).map((partial_json) =>
          delta({ type: 'input_json_delta', partial_json }),
        ),
        stop,
      ];
  }
}

function event(type: string, payload: Record<string, unknown>): SseEvent {
  return { event: type, data: { type, ...payload } };
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export class FakeAnthropic extends HttpFake {
  constructor() {
    super(echoLastUserText);
  }

  /** The origin (no `/v1`): the SDK appends `/v1/messages` itself. */
  get baseURL(): string {
    return this.origin;
  }

  /** Every reply passes the same gate as the real API: the route, then a key in either header. */
  override reply(...replies: ReplyScript[]): this {
    return super.reply(
      ...replies.map(
        (script) => (request: RecordedRequest) =>
          gate(request) ?? (typeof script === 'function' ? script(request) : script),
      ),
    );
  }

  replyText(text: string, options: StreamOptions = {}): this {
    return this.replyBlocks([{ type: 'text', text }], options);
  }

  replyThinking(
    thinking: string,
    signature: string,
    then: { text: string } | { toolUse: FakeToolUse[] },
    options: StreamOptions = {},
  ): this {
    const rest: FakeBlock[] =
      'text' in then
        ? [{ type: 'text', text: then.text }]
        : then.toolUse.map((call) => ({ type: 'tool_use', ...call }));
    return this.replyBlocks([{ type: 'thinking', thinking, signature }, ...rest], options);
  }

  replyToolUse(calls: FakeToolUse[], options: StreamOptions & { text?: string } = {}): this {
    const lead: FakeBlock[] = options.text ? [{ type: 'text', text: options.text }] : [];
    return this.replyBlocks([...lead, ...calls.map((call): FakeBlock => ({ type: 'tool_use', ...call }))], options);
  }

  replyBlocks(blocks: FakeBlock[], options: StreamOptions = {}): this {
    return this.reply({ kind: 'sse', events: messageEvents(blocks, options), delayMs: options.delayMs });
  }

  /** An HTTP error: a ready body by name (429 and 5xx carry `retry-after-ms: 10`), or any status and body. */
  replyError(error: keyof typeof ANTHROPIC_ERRORS): this;
  replyError(status: number, body: unknown, headers?: Record<string, string>): this;
  replyError(
    statusOrName: number | keyof typeof ANTHROPIC_ERRORS,
    body?: unknown,
    headers?: Record<string, string>,
  ): this {
    const status = typeof statusOrName === 'number' ? statusOrName : STATUS_OF[statusOrName];
    const payload = typeof statusOrName === 'number' ? body : ANTHROPIC_ERRORS[statusOrName];
    // The SDK retries 429 and 5xx after `retry-after-ms`; without it a test waits ~0.5 s × 2ⁿ.
    const retry: Record<string, string> = status === 429 || status >= 500 ? { 'retry-after-ms': '10' } : {};
    return this.reply({
      kind: 'json',
      status,
      body: payload,
      headers: { 'request-id': 'req_fake_0001', ...retry, ...headers },
    });
  }

  /** An `error` event after some text: the API's way of failing once the 200 has gone out. */
  replyStreamError(type: string, message: string, textBefore = 'partial '): this {
    const events = messageEvents([{ type: 'text', text: textBefore }]).slice(0, 4);
    return this.reply({ kind: 'sse', events: [...events, { event: 'error', data: errorBody(type, message) }] });
  }

  /** Never answer, not even headers. */
  replyNoAnswer(): this {
    return this.reply({ kind: 'no_answer' });
  }

  /** Stream the first `events` events of a text answer, then go silent with the socket open. */
  replyStallAfter(events: number, text = 'this answer never ends'): this {
    return this.reply({
      kind: 'sse_then_stall',
      events: messageEvents([{ type: 'text', text }], { chunkSize: 4 }).slice(0, events),
    });
  }

  /** Stream the first `events` events of a text answer, then destroy the socket. */
  replyDropAfter(events: number, text = 'this answer is cut'): this {
    return this.reply({
      kind: 'sse_then_drop',
      events: messageEvents([{ type: 'text', text }], { chunkSize: 4 }).slice(0, events),
    });
  }

  /** The Anthropic-specific headers of request `index` (both auth styles are accepted). */
  authOf(index: number): { bearer?: string; apiKey?: string } {
    const headers: IncomingHttpHeaders = this.requests[index]?.headers ?? {};
    const bearer = headers.authorization?.replace(/^Bearer\s+/i, '');
    const apiKey = headers['x-api-key'];
    return { bearer, apiKey: typeof apiKey === 'string' ? apiKey : undefined };
  }
}

/**
 * The API's checks a client can trip: the route, and a key. SDK 1.14 sends
 * `Authorization: Bearer`, older clients `x-api-key`; `anthropic-version` is never checked.
 */
function gate(request: RecordedRequest): FakeReply | undefined {
  if (request.method !== 'POST' || request.path.split('?')[0] !== '/v1/messages') {
    return {
      kind: 'json',
      status: 404,
      body: errorBody('not_found_error', `Not Found: ${request.method} ${request.path}`),
    };
  }
  const { authorization } = request.headers;
  const apiKey = request.headers['x-api-key'];
  if (!authorization?.startsWith('Bearer ') && !apiKey) {
    return { kind: 'json', status: 401, body: errorBody('authentication_error', 'x-api-key header is required') };
  }
  return undefined;
}

/** The ids `GET /v1/models` lists. */
const FAKE_ANTHROPIC_MODELS = ['claude-sonnet-4-6', 'claude-opus-4-1', 'claude-haiku-4-5'];

/** `GET /v1/models` as the API answers it, behind the same key check as the Messages API. */
function modelList(request: RecordedRequest): FakeReply {
  const { authorization } = request.headers;
  if (!authorization?.startsWith('Bearer ') && !request.headers['x-api-key']) {
    return { kind: 'json', status: 401, body: errorBody('authentication_error', 'x-api-key header is required') };
  }
  const data = FAKE_ANTHROPIC_MODELS.map((id) => ({
    type: 'model',
    id,
    display_name: id,
    created_at: '2025-01-01T00:00:00Z',
  }));
  return {
    kind: 'json',
    status: 200,
    body: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null },
  };
}

function echoLastUserText(request: RecordedRequest): FakeReply {
  if (request.method === 'GET' && request.path.split('?')[0] === '/v1/models') return modelList(request);
  const blocked = gate(request);
  if (blocked) return blocked;
  const text = lastUserText(request.body) || '(nothing to echo)';
  return { kind: 'sse', events: messageEvents([{ type: 'text', text }]) };
}

/** The text blocks of the last user message of a Messages API body (tool results excluded). */
function lastUserText(body: unknown): string {
  if (typeof body !== 'object' || body === null || !('messages' in body) || !Array.isArray(body.messages)) return '';
  const messages = body.messages as unknown[];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as { role?: unknown; content?: unknown };
    if (message.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (!Array.isArray(message.content)) return '';
    return (message.content as { type?: unknown; text?: unknown }[])
      .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
      .join('\n');
  }
  return '';
}
