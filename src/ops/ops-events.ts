// What the bot's operations side hears: one typed stream of facts about turns, model calls,
// tool calls, waits on a person, stops, settings changed in a thread, spend and the
// platforms' API calls. The session layer, the metered provider and the connectors emit;
// the sinks (metrics, traces, audit: src/ops/) listen. Nothing here renders a thread.
//
// The ideas to hold:
// - Facts, not text: no event carries what a person or the model wrote. A tool call's
//   arguments come as a short masked summary (for the audit trail), never the whole payload.
//   The one exception is opt-in: a model call's `content`, present only when traces record
//   message content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT), for the trace sink
//   alone, which masks it; every other sink ignores it.
// - Emitting never throws and never waits: a sink that fails is logged and the turn goes on;
//   a sink that must write (the audit trail) queues its own work.
// - `place` says where; a sink decides what it may keep of it (metrics keep only the platform:
//   a label must never grow without bound).
import type { AssistantTurn, EngineLogger, OutboundMessage, TurnEndStatus, TurnKind } from '../engine/index.js';

/** Where something happened: the thread's session and the parts of its key. */
export interface Place {
  sessionId: string;
  platform: string;
  workspace: string;
  channel: string;
}

export interface TokenCounts {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
  /** The server reported no usage: the counts are the metered provider's estimate. */
  estimated?: boolean;
}

/** A model call's messages and answer, unmasked (only when traces capture content: see the header). */
export interface CallContent {
  input: readonly OutboundMessage[];
  /** The answer, when the call produced one. */
  output?: AssistantTurn;
}

type ToolOutcome = 'ok' | 'error' | 'denied' | 'interrupted';
export type WaitKind = 'approval' | 'question' | 'plan' | 'directory';
export type BudgetLimitName = 'user_daily' | 'channel_daily' | 'workspace_daily' | 'turn';

export type OpsEvent =
  /** A turn began (`by`: whose message it answers, or who retried it; the starter when not known). */
  | { type: 'turn_started'; at: number; place: Place; kind: TurnKind; by?: string; model: string }
  /** A turn ended; `errorKind` when it ended in an error (`budget`: paused by a spend limit). */
  | { type: 'turn_ended'; at: number; place: Place; status: TurnEndStatus; errorKind?: string; iterations: number }
  /** A model call is about to be sent (`callId` is this process's own id for it). */
  | {
      type: 'model_call_started';
      at: number;
      place: Place;
      callId: string;
      provider: string;
      model: string;
      purpose: 'turn' | 'compaction';
      maxOutputTokens?: number;
    }
  /** Its first streamed token (text or reasoning) arrived. */
  | { type: 'model_call_first_token'; at: number; place: Place; callId: string }
  /**
   * It ended. `tokens` when the provider reported usage; `error`: the ProviderErrorKind (or
   * `interrupted`) when it failed; `responseModel`: the model id the provider said answered.
   */
  | {
      type: 'model_call_ended';
      at: number;
      place: Place;
      callId: string;
      provider: string;
      model: string;
      purpose: 'turn' | 'compaction';
      requester?: string;
      durationMs: number;
      tokens?: TokenCounts;
      finishReason?: string;
      responseModel?: string;
      error?: string;
      content?: CallContent;
    }
  | { type: 'tool_started'; at: number; place: Place; toolCallId: string; tool: string }
  /** `args`: a short masked summary of the arguments (audit only). */
  | {
      type: 'tool_ended';
      at: number;
      place: Place;
      toolCallId: string;
      tool: string;
      outcome: ToolOutcome;
      durationMs?: number;
      args?: string;
    }
  /** A call waits on a person (an approval card, a question). */
  | { type: 'wait_started'; at: number; place: Place; toolCallId: string; tool: string; kind: WaitKind }
  /** The person answered (`by`), or the wait was closed without a click (`by` absent: a stop, a reply, a restart). */
  | {
      type: 'wait_ended';
      at: number;
      place: Place;
      toolCallId: string;
      tool: string;
      kind: WaitKind;
      decision: string;
      by?: string;
      waitedMs?: number;
    }
  /** Someone asked for a stop (🛑, the Stop button, /stop). */
  | { type: 'stop_requested'; at: number; place: Place; by: string }
  /** A running turn ended by a stop; `latencyMs` from the request, when this process saw both. */
  | { type: 'stopped'; at: number; place: Place; by?: string; latencyMs?: number }
  /** A reply in a working thread was taken into the running turn. */
  | { type: 'steered'; at: number; place: Place }
  | { type: 'model_switched'; at: number; place: Place; by: string; from: string; to: string }
  /** An "always" grant given (on an approval) or revoked (/revoke). `what`: the tool, command or folder. */
  | {
      type: 'grant_changed';
      at: number;
      place: Place;
      by: string;
      change: 'given' | 'revoked';
      what: string;
      scope: string;
    }
  | { type: 'forgotten'; at: number; place: Place; by: string }
  /** An admin let a turn paused by a spend limit go on. */
  | { type: 'budget_continued'; at: number; place: Place; by: string; limit?: BudgetLimitName }
  /** A spend limit refused a model call (the turn paused) or a new request. */
  | { type: 'budget_refused'; at: number; place: Place; limit: BudgetLimitName; what: 'model_call' | 'new_request' }
  /** What a model call cost, once settled (`usd` undefined: no price known; tokens only). */
  | { type: 'spend'; at: number; place: Place; requester?: string; model: string; usd?: number; tokens: TokenCounts }
  /** A call to a platform's API (`method`: e.g. chat.postMessage, or a Discord route template). */
  | { type: 'platform_call'; at: number; platform: string; method: string; outcome: 'ok' | 'rate_limited' | 'error' };

type OpsEventType = OpsEvent['type'];
export type OpsEventOf<T extends OpsEventType> = Extract<OpsEvent, { type: T }>;

export interface OpsSink {
  /** Called synchronously, in order; must not throw (a throw is logged and dropped). */
  handle(event: OpsEvent): void;
  /** Write out what is buffered (traces, the audit trail): called at shutdown. */
  flush?(): Promise<void>;
  close?(): Promise<void>;
}

/** Fans each event out to the sinks. With no sink, `emit` is a loop over nothing. */
export class OpsBus {
  private readonly sinks: OpsSink[] = [];

  constructor(private readonly logger?: EngineLogger) {}

  add(sink: OpsSink): void {
    this.sinks.push(sink);
  }

  /** Whether any sink listens (an emitter may skip building an event nobody reads). */
  get listening(): boolean {
    return this.sinks.length > 0;
  }

  emit(event: OpsEvent): void {
    for (const sink of this.sinks) {
      try {
        sink.handle(event);
      } catch (error) {
        this.logger?.warn({ err: error, event: event.type }, 'an operations sink failed');
      }
    }
  }

  async close(): Promise<void> {
    for (const sink of this.sinks) {
      try {
        await sink.flush?.();
        await sink.close?.();
      } catch (error) {
        this.logger?.warn({ err: error }, 'an operations sink failed to close');
      }
    }
  }
}

/** The place of a session, from its key. */
export function placeOf(session: { id: string; key: { platform: string; workspace: string; channel: string } }): Place {
  return {
    sessionId: session.id,
    platform: session.key.platform,
    workspace: session.key.workspace,
    channel: session.key.channel,
  };
}
