// Spans from the operations events (src/ops/ops-events.ts), named and attributed as the
// OpenTelemetry GenAI semantic conventions say: one `invoke_agent {agent}` span per turn, a
// `chat {model}` span per model call, an `execute_tool {tool}` span per tool call, and a span
// for each wait on a person (`await_approval {tool}`, `await_question`, …), all children of
// their turn's span, in one trace per turn.
//
// The ideas to hold:
// - Parents by explicit context, keyed by the session (a turn) and by the call ids (model and
//   tool calls, waits): nothing relies on an ambient context, and nothing is registered
//   globally (the Anthropic SDK would otherwise trace its own calls into our spans).
// - Spans start and end at the events' own times, so what the bus delivered late still
//   measures right. A span whose start this process never saw (a wait resolved after a
//   restart, a tool refused before it ran) is drawn from its end and its duration.
// - No text a person or the model wrote, unless content capture is on (then masked: the
//   content helpers). A wait's decision is a word (`once`, `deny`, `answered`), never the answer.
//   A tool is named only if the bot registered it: a name the model made up is `unknown` in the
//   span's name and its `gen_ai.tool.name` (tool-names.ts).
// - Every span left open ends at shutdown, so a stop of the bot still exports what it had.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type HrTime,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { OpsEvent, OpsEventOf, OpsSink, TokenCounts, WaitKind } from '../ops-events.js';
import { parseModelRef } from '../../providers/model-ref.js';
import { NO_KNOWN_TOOLS, reportedToolName, type KnownTools } from '../tool-names.js';
import { inputMessagesJson, outputMessagesJson } from './trace-content.js';

export interface TraceSinkOptions {
  /** `gen_ai.agent.name` and the turn span's name (the service name). */
  agentName: string;
  /** Record the messages and the answer on chat spans (events carry them only then). */
  captureContent: boolean;
  mask: (text: string) => string;
  /** The tools the bot registered; any other name is `unknown` (default: none known). */
  knownTools?: KnownTools;
  now?: () => number;
}

/** The bot's own attributes, apart from the conventions' `gen_ai.*`. */
const OWN = 'chat_agent';

interface OpenCall {
  span: Span;
  started: number;
}

export class TraceSink implements OpsSink {
  /** The running turn's span and its context, by session. */
  private readonly turns = new Map<string, { span: Span; context: Context }>();
  private readonly calls = new Map<string, OpenCall>();
  /** Tool calls and waits, by `sessionId toolCallId`. */
  private readonly tools = new Map<string, Span>();
  private readonly waits = new Map<string, Span>();
  private readonly now: () => number;
  private readonly knownTools: KnownTools;

  constructor(
    private readonly tracer: Tracer,
    private readonly options: TraceSinkOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.knownTools = options.knownTools ?? NO_KNOWN_TOOLS;
  }

  handle(event: OpsEvent): void {
    switch (event.type) {
      case 'turn_started':
        return this.turnStarted(event);
      case 'turn_ended':
        return this.turnEnded(event);
      case 'model_call_started':
        return this.callStarted(event);
      case 'model_call_first_token': {
        const call = this.calls.get(event.callId);
        call?.span.setAttribute('gen_ai.response.time_to_first_chunk', (event.at - call.started) / 1000);
        return;
      }
      case 'model_call_ended':
        return this.callEnded(event);
      case 'tool_started':
        return this.toolStarted(event);
      case 'tool_ended':
        return this.toolEnded(event);
      case 'wait_started':
        return this.waitStarted(event);
      case 'wait_ended':
        return this.waitEnded(event);
      case 'stop_requested':
      case 'stopped':
      case 'steered':
        this.turns
          .get(event.place.sessionId)
          ?.span.addEvent(
            `${OWN}.${event.type}`,
            event.type === 'stopped' && event.latencyMs !== undefined
              ? { [`${OWN}.stop.latency_ms`]: event.latencyMs }
              : {},
            epochTime(event.at),
          );
        return;
      case 'budget_refused':
        this.turns
          .get(event.place.sessionId)
          ?.span.addEvent(`${OWN}.budget_refused`, { [`${OWN}.budget.limit`]: event.limit }, epochTime(event.at));
        return;
      default:
        return;
    }
  }

  /** Ends every span still open (a turn cut by the shutdown, a wait nobody answered). */
  endOpen(): void {
    const at = this.now();
    const spans = [
      ...this.waits.values(),
      ...this.tools.values(),
      ...[...this.calls.values()].map((call) => call.span),
      ...[...this.turns.values()].map((turn) => turn.span),
    ];
    for (const span of spans) {
      span.setAttribute(`${OWN}.open_at_shutdown`, true);
      span.end(epochTime(at));
    }
    this.waits.clear();
    this.tools.clear();
    this.calls.clear();
    this.turns.clear();
  }

  private turnStarted(event: OpsEventOf<'turn_started'>): void {
    this.turns.get(event.place.sessionId)?.span.end(epochTime(event.at));
    const { provider, model } = modelOf(event.model);
    const span = this.tracer.startSpan(
      `invoke_agent ${this.options.agentName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: epochTime(event.at),
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': this.options.agentName,
          'gen_ai.provider.name': provider,
          'gen_ai.request.model': model,
          'gen_ai.conversation.id': event.place.sessionId,
          [`${OWN}.platform`]: event.place.platform,
          [`${OWN}.turn.kind`]: event.kind,
        },
      },
      ROOT_CONTEXT,
    );
    this.turns.set(event.place.sessionId, { span, context: trace.setSpan(ROOT_CONTEXT, span) });
  }

  private turnEnded(event: OpsEventOf<'turn_ended'>): void {
    const turn = this.turns.get(event.place.sessionId);
    if (!turn) return;
    this.turns.delete(event.place.sessionId);
    // A tool call cannot outlive its turn: one whose end never came ends with it (a wait may: its answer still ends it).
    const prefix = `${event.place.sessionId} `;
    for (const [key, span] of this.tools) {
      if (!key.startsWith(prefix)) continue;
      span.end(epochTime(event.at));
      this.tools.delete(key);
    }
    turn.span.setAttributes({ [`${OWN}.turn.status`]: event.status, [`${OWN}.turn.iterations`]: event.iterations });
    if (event.status === 'error') failed(turn.span, event.errorKind ?? 'error');
    turn.span.end(epochTime(event.at));
  }

  private callStarted(event: OpsEventOf<'model_call_started'>): void {
    const { provider, model } = modelOf(event.model, event.provider);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
      'gen_ai.conversation.id': event.place.sessionId,
      [`${OWN}.call.purpose`]: event.purpose,
    };
    if (event.maxOutputTokens !== undefined) attributes['gen_ai.request.max_tokens'] = event.maxOutputTokens;
    const span = this.tracer.startSpan(
      `chat ${model}`,
      { kind: SpanKind.CLIENT, startTime: epochTime(event.at), attributes },
      this.parentOf(event.place.sessionId),
    );
    this.calls.set(event.callId, { span, started: event.at });
  }

  private callEnded(event: OpsEventOf<'model_call_ended'>): void {
    const call = this.calls.get(event.callId);
    if (!call) return;
    this.calls.delete(event.callId);
    const { span } = call;
    if (event.tokens) span.setAttributes(tokenAttributes(event.tokens));
    if (event.finishReason) span.setAttribute('gen_ai.response.finish_reasons', [event.finishReason]);
    if (event.responseModel) span.setAttribute('gen_ai.response.model', event.responseModel);
    if (event.error) failed(span, event.error);
    if (this.options.captureContent && event.content) {
      span.setAttribute('gen_ai.input.messages', inputMessagesJson(event.content.input, this.options.mask));
      if (event.content.output)
        span.setAttribute('gen_ai.output.messages', outputMessagesJson(event.content.output, this.options.mask));
    }
    span.end(epochTime(event.at));
  }

  private toolStarted(event: OpsEventOf<'tool_started'>): void {
    const key = `${event.place.sessionId} ${event.toolCallId}`;
    this.tools.get(key)?.end(epochTime(event.at));
    this.tools.set(key, this.toolSpan(event.place.sessionId, event.tool, event.toolCallId, event.at));
  }

  private toolEnded(event: OpsEventOf<'tool_ended'>): void {
    const key = `${event.place.sessionId} ${event.toolCallId}`;
    // A call refused before it ran (denied, or stopped while it waited) never started: its span is the instant it was settled.
    const span =
      this.tools.get(key) ??
      this.toolSpan(event.place.sessionId, event.tool, event.toolCallId, event.at - (event.durationMs ?? 0));
    this.tools.delete(key);
    span.setAttribute(`${OWN}.tool.outcome`, event.outcome);
    if (event.outcome === 'error') failed(span, 'tool_error');
    span.end(epochTime(event.at));
  }

  private toolSpan(sessionId: string, called: string, toolCallId: string, at: number): Span {
    const tool = reportedToolName(called, this.knownTools);
    return this.tracer.startSpan(
      `execute_tool ${tool}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: epochTime(at),
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool,
          'gen_ai.tool.call.id': toolCallId,
          'gen_ai.tool.type': 'function',
        },
      },
      this.parentOf(sessionId),
    );
  }

  private waitStarted(event: OpsEventOf<'wait_started'>): void {
    const key = `${event.place.sessionId} ${event.toolCallId}`;
    this.waits.get(key)?.end(epochTime(event.at));
    this.waits.set(key, this.waitSpan(event.place.sessionId, event.kind, event.tool, event.toolCallId, event.at));
  }

  private waitEnded(event: OpsEventOf<'wait_ended'>): void {
    const key = `${event.place.sessionId} ${event.toolCallId}`;
    let span = this.waits.get(key);
    this.waits.delete(key);
    if (!span) {
      // Asked before a restart, answered after it: drawn from how long it waited, when known.
      if (event.waitedMs === undefined) return;
      span = this.waitSpan(event.place.sessionId, event.kind, event.tool, event.toolCallId, event.at - event.waitedMs);
    }
    span.setAttributes({ [`${OWN}.wait.decision`]: event.decision, [`${OWN}.wait.answered`]: event.by !== undefined });
    span.end(epochTime(event.at));
  }

  private waitSpan(sessionId: string, kind: WaitKind, called: string, toolCallId: string, at: number): Span {
    const tool = reportedToolName(called, this.knownTools);
    return this.tracer.startSpan(
      kind === 'approval' ? `await_approval ${tool}` : `await_${kind}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: epochTime(at),
        attributes: { [`${OWN}.wait.kind`]: kind, 'gen_ai.tool.name': tool, 'gen_ai.tool.call.id': toolCallId },
      },
      this.parentOf(sessionId),
    );
  }

  /** The running turn's context; a call outside any turn (none today) starts a trace of its own. */
  private parentOf(sessionId: string): Context {
    return this.turns.get(sessionId)?.context ?? ROOT_CONTEXT;
  }
}

/** `error.type` and an error status; a stop by a person is recorded, but is not an error. */
function failed(span: Span, kind: string): void {
  span.setAttribute('error.type', kind);
  if (kind !== 'interrupted') span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Usage as the conventions count it: `input_tokens` includes the cached and cache-written
 * tokens (the ops events count them apart), `output_tokens` includes reasoning.
 */
function tokenAttributes(tokens: TokenCounts): Attributes {
  const attributes: Attributes = {
    'gen_ai.usage.input_tokens': tokens.input + tokens.cachedInput + tokens.cacheWrite,
    'gen_ai.usage.output_tokens': tokens.output,
  };
  if (tokens.cachedInput > 0) attributes['gen_ai.usage.cache_read.input_tokens'] = tokens.cachedInput;
  if (tokens.cacheWrite > 0) attributes['gen_ai.usage.cache_creation.input_tokens'] = tokens.cacheWrite;
  if (tokens.reasoning > 0) attributes['gen_ai.usage.reasoning.output_tokens'] = tokens.reasoning;
  // The server reported none: the counts are the bot's estimate (src/ops/metered-provider.ts).
  if (tokens.estimated) attributes[`${OWN}.usage.estimated`] = true;
  return attributes;
}

/** `openai:gpt-4.1` → provider `openai`, model `gpt-4.1` (the provider's own id, as the conventions want). */
function modelOf(name: string, fallbackProvider = 'unknown'): { provider: string; model: string } {
  try {
    return parseModelRef(name);
  } catch {
    return { provider: fallbackProvider, model: name };
  }
}

/**
 * An event's time (epoch milliseconds) as the SDK's own `[seconds, nanoseconds]`. A plain number
 * is not safe to hand over: the SDK reads any number at or below `performance.now()` as time
 * since the process started, so a clock of small numbers (an injected test clock, a process up
 * longer than the number) silently shifts every span.
 */
function epochTime(at: number): HrTime {
  const seconds = Math.floor(at / 1000);
  return [seconds, Math.round((at - seconds * 1000) * 1e6)];
}
