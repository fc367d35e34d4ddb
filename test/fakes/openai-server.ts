// FakeOpenAI: a real HTTP server that answers `POST /v1/chat/completions` in the exact
// Chat Completions SSE format (`data:` chunks, then `data: [DONE]`), so tests drive the
// real openai SDK end to end and assert on the very body it sent. Each test scripts one
// reply per request (text, tool calls, errors, stalls, drops); with nothing scripted the
// fake echoes the last user text, or lets `answerWith` decide from the request.
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { HttpFake, type FakeReply, type RecordedRequest, type SseEvent } from './http-fake.js';

interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Sent as `prompt_tokens_details.cached_tokens` (part of prompt_tokens, as OpenAI counts). */
  cached_tokens?: number;
}

export interface FakeToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent as is (for mangled-argument tests). */
  arguments: string | Record<string, unknown>;
  /** `null`: send no id at all, like some compatible servers. Default: a fresh `call_…`. */
  id?: string | null;
}

export interface FakeAnswer {
  text?: string;
  reasoning?: string;
  /** DeepSeek / older vLLM say `reasoning_content`; Ollama / OpenRouter say `reasoning`. */
  reasoningField?: 'reasoning_content' | 'reasoning';
  toolCalls?: FakeToolCall[];
  /** Default: `tool_calls` with calls, else `stop`. `null`: the server never says (yet ends with `[DONE]`). */
  finishReason?: string | null;
  usage?: FakeUsage;
  /** Characters per content / reasoning / arguments delta (default 8). */
  chunkSize?: number;
  /** Tool-call pieces carry no `index` (Kimi-compatible servers): only their place in `tool_calls` tells them apart. */
  withoutIndex?: boolean;
  /**
   * All calls open in one chunk (id and name, empty arguments), then each chunk carries the
   * next arguments piece of every call, each at its call's place in `tool_calls` (a call whose
   * arguments are done sends an empty piece). Default: one call streamed after the other.
   */
  parallelCalls?: boolean;
  /** Close the body after the finish (and usage) chunk without `data: [DONE]`, as some servers do. */
  omitDone?: boolean;
  /** The model the chunks name (default: the one requested), e.g. a dated snapshot of an alias. */
  model?: string;
  /**
   * Where the usage goes. `top` (default): OpenAI's way, a last chunk of its own with empty
   * `choices`, only when the request asked (`stream_options.include_usage`). `choice`: inside
   * the finish chunk's choice (`choices[0].usage`), whatever the request asked, as Moonshot's
   * Kimi servers send it (with `cached_tokens` beside the counts). `none`: never, as some
   * servers do.
   */
  usageAt?: 'top' | 'choice' | 'none';
}

export interface StreamOptions {
  /** Pause between SSE events, in ms. */
  delayMs?: number;
}

/** Error bodies as the API sends them. */
const OPENAI_ERROR_BODIES = {
  400: {
    error: {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  },
  401: {
    error: {
      message:
        'Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  },
  404: {
    error: {
      message: 'The model `gpt-nope` does not exist or you do not have access to it.',
      type: 'invalid_request_error',
      param: null,
      code: 'model_not_found',
    },
  },
  429: {
    error: {
      message:
        'Rate limit reached for gpt-4.1 in organization org-fake on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 1.4s.',
      type: 'tokens',
      param: null,
      code: 'rate_limit_exceeded',
    },
  },
  500: {
    error: {
      message: 'The server had an error while processing your request. Sorry about that!',
      type: 'server_error',
      param: null,
      code: null,
    },
  },
} as const;

const DEFAULT_CHUNK = 8;

/** DeepSeek's answer to a thinking-mode request whose earlier tool-call turn lost its `reasoning_content`. */
const DEEPSEEK_REASONING_REPLAY_ERROR = {
  error: {
    message: 'The reasoning_content in the thinking mode must be passed back to the API.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_request_error',
  },
} as const;
const STALLING_TEXT = 'This answer starts, then the server goes quiet forever.';

let nextCallId = 1;

/** The ids `GET /v1/models` lists by default. */
const FAKE_OPENAI_MODELS = ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4o'];

export class FakeOpenAI extends HttpFake {
  /** What `GET /v1/models` lists (`npm run doctor` checks MODEL against it); change it freely. */
  readonly models: string[];

  private reasoningBackFor: RegExp | undefined;

  constructor() {
    const models = [...FAKE_OPENAI_MODELS];
    super((request) =>
      request.path.endsWith('/chat/completions')
        ? { kind: 'sse', events: answerEvents(request, { text: lastUserText(request) }) }
        : (modelList(request, models) ?? {
            kind: 'json',
            status: 404,
            body: {
              error: {
                message: `Unknown path ${request.path}`,
                type: 'invalid_request_error',
                param: null,
                code: null,
              },
            },
          }),
    );
    this.models = models;
  }

  /** What the SDK is pointed at. */
  get baseURL(): string {
    return `${this.origin}/v1`;
  }

  /** The recorded request bodies, typed for assertions. */
  get bodies(): ChatCompletionCreateParams[] {
    return this.requests.map((request) => request.body as ChatCompletionCreateParams);
  }

  replyText(text: string, options: Omit<FakeAnswer, 'text' | 'toolCalls'> & StreamOptions = {}): this {
    return this.replyAnswer({ ...options, text }, options);
  }

  replyToolCalls(toolCalls: FakeToolCall[], options: Omit<FakeAnswer, 'toolCalls'> & StreamOptions = {}): this {
    return this.replyAnswer({ ...options, toolCalls }, options);
  }

  replyAnswer(answer: FakeAnswer, options: StreamOptions = {}): this {
    const ids = assignIds(answer.toolCalls);
    return this.reply((request) => ({
      kind: 'sse',
      events: answerEvents(request, answer, ids),
      delayMs: options.delayMs,
    }));
  }

  /**
   * Answer every unscripted chat completion with what `decide` makes of its request (its
   * body alone: the state lives in the conversation the client sends). Each answer gets
   * fresh tool call ids. Other paths keep the fallback's 404.
   */
  answerWith(decide: (request: RecordedRequest) => FakeAnswer, options: StreamOptions = {}): this {
    return this.respondWith((request) =>
      request.path.endsWith('/chat/completions')
        ? { kind: 'sse', events: answerEvents(request, decide(request)), delayMs: options.delayMs }
        : (modelList(request, this.models) ?? {
            kind: 'json',
            status: 404,
            body: {
              error: {
                message: `Unknown path ${request.path}`,
                type: 'invalid_request_error',
                param: null,
                code: null,
              },
            },
          }),
    );
  }

  /**
   * A JSON error. Bodies default to the API's own for 400 (context_length_exceeded), 401,
   * 404, 429 and 500; 429 and 5xx carry `retry-after-ms: 10` so the SDK's retries are fast.
   */
  replyError(status: number, body?: unknown, headers?: Record<string, string>): this {
    const retryable = status === 429 || status >= 500;
    return this.reply({
      kind: 'json',
      status,
      body: body ??
        OPENAI_ERROR_BODIES[status as keyof typeof OPENAI_ERROR_BODIES] ?? {
          error: { message: `error ${status}`, type: 'error', param: null, code: null },
        },
      headers: { 'x-request-id': `req_fake_${status}`, ...(retryable ? { 'retry-after-ms': '10' } : {}), ...headers },
    });
  }

  /**
   * Stream `text`, but hold after its first `heldAfter` text deltas until `release()` is
   * called: the answer is visibly mid-stream for as long as a test needs, however slow the
   * machine.
   */
  replyTextHeld(
    text: string,
    heldAfter = 2,
    answer: Omit<FakeAnswer, 'text' | 'toolCalls'> = {},
  ): { release: () => void } {
    // The first event is the role chunk; the text deltas follow it.
    return this.replyAnswerHeld({ ...answer, text }, 1 + heldAfter);
  }

  /**
   * Stream `answer`, but hold after its first `heldAfter` events (0: right after the headers)
   * until `release()` is called: the call is visibly in flight for as long as a test needs,
   * however slow the machine (a barrier, where a delay would be a guess).
   */
  replyAnswerHeld(answer: FakeAnswer, heldAfter = 0): { release: () => void } {
    let release = () => {};
    const until = new Promise<void>((resolve) => (release = resolve));
    const ids = assignIds(answer.toolCalls);
    this.reply((request) => ({
      kind: 'sse_held',
      events: answerEvents(request, answer, ids),
      holdAfter: heldAfter,
      until,
    }));
    return { release };
  }

  /** Accept the request and never answer, not even headers. */
  replyStall(): this {
    return this.reply({ kind: 'no_answer' });
  }

  /** Send headers and the first `events` SSE events of an answer, then go silent. */
  replyStallAfter(events: number, answer: FakeAnswer = { text: STALLING_TEXT }): this {
    const ids = assignIds(answer.toolCalls);
    return this.reply((request) => ({
      kind: 'sse_then_stall',
      events: answerEvents(request, answer, ids).slice(0, events),
    }));
  }

  /**
   * Send headers and the first `events` SSE events of an answer, then end the body cleanly:
   * no finish_reason, no `[DONE]`, no socket error (a proxy or load balancer closing early).
   */
  replyCleanEnd(events: number, answer: FakeAnswer = { text: STALLING_TEXT }): this {
    const ids = assignIds(answer.toolCalls);
    return this.reply((request) => ({ kind: 'sse', events: answerEvents(request, answer, ids).slice(0, events) }));
  }

  /**
   * Act as DeepSeek's thinking mode for models matching `model`: a request in which an
   * assistant message with tool calls has no `reasoning_content` is refused with DeepSeek's
   * 400, before any scripted reply is used.
   */
  demandReasoningBack(model: RegExp = /^deepseek-reasoner/): this {
    this.reasoningBackFor = model;
    return this;
  }

  protected override refuse(request: RecordedRequest): FakeReply | undefined {
    if (!this.reasoningBackFor || !request.path.endsWith('/chat/completions')) return undefined;
    const body = (request.body ?? {}) as { model?: unknown; messages?: Record<string, unknown>[] };
    if (typeof body.model !== 'string' || !this.reasoningBackFor.test(body.model)) return undefined;
    const lost = (body.messages ?? []).some(
      (message) =>
        message.role === 'assistant' &&
        Array.isArray(message.tool_calls) &&
        typeof message.reasoning_content !== 'string',
    );
    return lost ? { kind: 'json', status: 400, body: DEEPSEEK_REASONING_REPLAY_ERROR } : undefined;
  }

  /** Send headers and the first `events` SSE events of an answer, then destroy the socket. */
  replyDrop(events: number, answer: FakeAnswer = { text: STALLING_TEXT }): this {
    const ids = assignIds(answer.toolCalls);
    return this.reply((request) => ({
      kind: 'sse_then_drop',
      events: answerEvents(request, answer, ids).slice(0, events),
    }));
  }
}

/** Ids are fixed when the reply is scripted, so a test can know them in advance. */
function assignIds(calls: FakeToolCall[] | undefined): (string | undefined)[] {
  return (calls ?? []).map((call) => (call.id === null ? undefined : (call.id ?? `call_fake${nextCallId++}`)));
}

interface RequestFacts {
  model: string;
  includeUsage: boolean;
}

function factsOf(request: RecordedRequest): RequestFacts {
  const body = (request.body ?? {}) as { model?: unknown; stream_options?: { include_usage?: unknown } };
  return {
    model: typeof body.model === 'string' ? body.model : 'gpt-fake',
    includeUsage: body.stream_options?.include_usage === true,
  };
}

/** The whole SSE exchange for one answer, in the order OpenAI sends it. */
export function answerEvents(
  request: RecordedRequest,
  answer: FakeAnswer,
  ids: (string | undefined)[] = assignIds(answer.toolCalls),
): SseEvent[] {
  const facts = factsOf(request);
  const { includeUsage } = facts;
  const model = answer.model ?? facts.model;
  const id = `chatcmpl-fake${Date.now().toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  const size = answer.chunkSize ?? DEFAULT_CHUNK;
  // With include_usage, "all other chunks will also include a usage field, but with a null value".
  const envelope = (choices: unknown[], usage: unknown = null): SseEvent => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices,
      ...(includeUsage ? { usage } : {}),
    },
  });
  const choice = (delta: Record<string, unknown>, finish: string | null = null): SseEvent =>
    envelope([{ index: 0, delta, logprobs: null, finish_reason: finish }]);

  const events: SseEvent[] = [choice({ role: 'assistant', content: '', refusal: null })];
  let deltas = 0;
  for (const piece of pieces(answer.reasoning, size))
    events.push(choice({ [answer.reasoningField ?? 'reasoning_content']: piece }));
  for (const piece of pieces(answer.text, size)) {
    events.push(choice({ content: piece }));
    deltas++;
  }
  const calls = (answer.toolCalls ?? []).map((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    const callId = ids[index];
    const place = answer.withoutIndex ? {} : { index };
    return {
      opening: {
        ...place,
        ...(callId === undefined ? {} : { id: callId }),
        type: 'function',
        function: { name: call.name, arguments: '' },
      },
      pieces: pieces(args, size).map((piece) => ({ ...place, function: { arguments: piece } })),
    };
  });
  if (answer.parallelCalls && calls.length > 0) {
    events.push(choice({ tool_calls: calls.map((call) => call.opening) }));
    const rounds = Math.max(...calls.map((call) => call.pieces.length));
    for (let round = 0; round < rounds; round++) {
      const place = (index: number) => (answer.withoutIndex ? {} : { index });
      events.push(
        choice({
          tool_calls: calls.map(
            (call, index) => call.pieces[round] ?? { ...place(index), function: { arguments: '' } },
          ),
        }),
      );
      deltas++;
    }
  } else {
    for (const call of calls) {
      events.push(choice({ tool_calls: [call.opening] }));
      for (const piece of call.pieces) {
        events.push(choice({ tool_calls: [piece] }));
        deltas++;
      }
    }
  }
  const finish =
    answer.finishReason === undefined ? (answer.toolCalls?.length ? 'tool_calls' : 'stop') : answer.finishReason;
  const usageAt = answer.usageAt ?? 'top';
  if (usageAt === 'choice') {
    // Kimi's last chunk: the usage rides in the choice, and the chunk has no top-level usage at all.
    const usage = answer.usage ?? { prompt_tokens: 12, completion_tokens: deltas };
    events.push({
      data: {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [
          {
            index: 0,
            delta: {},
            finish_reason: finish,
            usage: {
              prompt_tokens: usage.prompt_tokens,
              completion_tokens: usage.completion_tokens,
              total_tokens: usage.prompt_tokens + usage.completion_tokens,
              cached_tokens: usage.cached_tokens ?? 0,
            },
          },
        ],
      },
    });
  } else {
    events.push(choice({}, finish));
  }
  if (includeUsage && usageAt === 'top') {
    const usage = answer.usage ?? { prompt_tokens: 12, completion_tokens: deltas };
    events.push(
      envelope([], {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
        prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      }),
    );
  }
  if (!answer.omitDone) events.push({ data: '[DONE]' });
  return events;
}

function pieces(text: string | undefined, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; text && at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

function lastUserText(request: RecordedRequest): string {
  const body = (request.body ?? {}) as { messages?: { role?: unknown; content?: unknown }[] };
  const user = [...(body.messages ?? [])].reverse().find((message) => message.role === 'user');
  if (typeof user?.content === 'string') return user.content;
  if (Array.isArray(user?.content)) {
    return (user.content as { type?: unknown; text?: unknown }[])
      .flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
      .join('\n');
  }
  return '(no user text)';
}

/** `GET /v1/models` as the API answers it (every model owned by the fake), or undefined for any other request. */
function modelList(request: RecordedRequest, models: readonly string[]): FakeReply | undefined {
  if (request.method !== 'GET' || request.path.split('?')[0] !== '/v1/models') return undefined;
  return {
    kind: 'json',
    status: 200,
    body: {
      object: 'list',
      data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })),
    },
  };
}
