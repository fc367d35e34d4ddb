// The metrics side of the operations stream: an OpsSink that turns each event into counter
// and histogram updates on its own prom-client registry, and renders that registry for
// GET /metrics (metrics-endpoint.ts serves it).
//
// What it keeps of an event is the kind of thing, never who or where: the platform, a tool's
// name, a model id, a decision word, a limit's name. No session, thread, channel, workspace or
// user id becomes a label, nor anything a person wrote. Labels fed from open-ended sources
// (tools, models, platform methods, error kinds) are capped (bounded-labels.ts). It holds no
// state per session or call: time to first token is computed from the call's start, kept only
// until the call ends.
import { Registry } from 'prom-client';
import { parseModelRef } from '../../providers/model-ref.js';
import type { OpsEvent, OpsEventOf, OpsSink, TokenCounts } from '../ops-events.js';
import { BoundedLabel } from './bounded-labels.js';
import { metricFamilies, type LoadReading, type MetricFamilies } from './metric-families.js';

/** How many distinct values each capped label may take before new ones count as `other`. */
export const LABEL_CAPS = {
  platform: 8,
  /** Built-in tools are about a dozen; MCP servers may add many more. */
  tool: 64,
  model: 24,
  provider: 8,
  /** Slack methods and Discord route templates the bot uses (a few dozen). */
  method: 96,
  errorType: 24,
  kind: 8,
  decision: 16,
} as const;

/** The last call starts kept for time to first token; a call that never ends is forgotten past this. */
const MAX_OPEN_CALLS = 4_096;

export interface MetricsSinkOptions {
  /** Read at each scrape for the gauges (live sessions, queue depths). */
  load?: () => LoadReading;
}

export class MetricsSink implements OpsSink {
  readonly registry = new Registry();
  private readonly m: MetricFamilies;
  private readonly labels = {
    platform: new BoundedLabel(LABEL_CAPS.platform),
    tool: new BoundedLabel(LABEL_CAPS.tool),
    model: new BoundedLabel(LABEL_CAPS.model),
    provider: new BoundedLabel(LABEL_CAPS.provider),
    method: new BoundedLabel(LABEL_CAPS.method),
    errorType: new BoundedLabel(LABEL_CAPS.errorType),
    kind: new BoundedLabel(LABEL_CAPS.kind),
    decision: new BoundedLabel(LABEL_CAPS.decision),
  };
  /** callId → when the call was sent and its time to first token, until the call ends. */
  private readonly openCalls = new Map<string, { started: number; firstChunkS?: number }>();

  constructor(options: MetricsSinkOptions = {}) {
    this.m = metricFamilies(this.registry, options.load);
  }

  /** The Prometheus text exposition of everything counted so far. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  handle(event: OpsEvent): void {
    const m = this.m;
    switch (event.type) {
      case 'turn_ended':
        m.turns.inc({ platform: this.labels.platform.of(event.place.platform), outcome: event.errorKind === 'budget' ? 'budget_paused' : event.status });
        return;
      case 'model_call_started':
        if (this.openCalls.size >= MAX_OPEN_CALLS) this.openCalls.delete(this.openCalls.keys().next().value!);
        this.openCalls.set(event.callId, { started: event.at });
        return;
      case 'model_call_first_token': {
        // Observed at the call's end, which names the model the labels need.
        const open = this.openCalls.get(event.callId);
        if (open) open.firstChunkS = Math.max(0, event.at - open.started) / 1000;
        return;
      }
      case 'model_call_ended':
        this.modelCallEnded(event);
        return;
      case 'tool_ended':
        m.toolCalls.inc({ tool: this.labels.tool.of(event.tool), outcome: event.outcome });
        return;
      case 'wait_ended': {
        const labels = { kind: this.labels.kind.of(event.kind), decision: this.labels.decision.of(event.decision) };
        m.approvals.inc(labels);
        if (event.waitedMs !== undefined && event.waitedMs >= 0) m.decisionWait.observe(labels, event.waitedMs / 1000);
        return;
      }
      case 'stop_requested':
        m.stopRequests.inc({ platform: this.labels.platform.of(event.place.platform) });
        return;
      case 'stopped':
        if (event.latencyMs !== undefined && event.latencyMs >= 0) m.stopLatency.observe({ platform: this.labels.platform.of(event.place.platform) }, event.latencyMs / 1000);
        return;
      case 'steered':
        m.steering.inc({ platform: this.labels.platform.of(event.place.platform) });
        return;
      case 'platform_call':
        m.platformCalls.inc({ platform: this.labels.platform.of(event.platform), method: this.labels.method.of(event.method), outcome: event.outcome });
        return;
      case 'spend':
        this.spend(event);
        return;
      case 'budget_refused':
        m.budgetRefusals.inc({ limit: event.limit, what: event.what });
        return;
      case 'budget_continued':
        m.budgetContinues.inc();
        return;
      default:
        return;
    }
  }

  private modelCallEnded(event: OpsEventOf<'model_call_ended'>): void {
    const m = this.m;
    const firstChunk = this.openCalls.get(event.callId)?.firstChunkS;
    this.openCalls.delete(event.callId);
    const base = {
      gen_ai_operation_name: 'chat',
      gen_ai_provider_name: this.labels.provider.of(event.provider),
      gen_ai_request_model: this.labels.model.of(modelIdOf(event.model)),
    };
    m.operationDuration.observe(event.error ? { ...base, error_type: this.labels.errorType.of(event.error) } : base, Math.max(0, event.durationMs) / 1000);
    if (firstChunk !== undefined) m.firstChunk.observe(base, firstChunk);
    const tokens = event.tokens;
    if (!tokens) return;
    m.tokenUsage.observe({ ...base, gen_ai_token_type: 'input' }, tokens.input);
    m.tokenUsage.observe({ ...base, gen_ai_token_type: 'output' }, tokens.output);
    const counted = { gen_ai_provider_name: base.gen_ai_provider_name, gen_ai_request_model: base.gen_ai_request_model };
    for (const [type, count] of tokenTypes(tokens)) if (count > 0) m.modelTokens.inc({ ...counted, token_type: type }, count);
  }

  private spend(event: OpsEventOf<'spend'>): void {
    const m = this.m;
    if (event.usd === undefined) {
      for (const [type, count] of tokenTypes(event.tokens)) if (count > 0) m.unpricedTokens.inc({ token_type: type }, count);
      return;
    }
    if (!(event.usd > 0)) return;
    m.spendUsd.inc({ scope: 'workspace' }, event.usd);
    m.spendUsd.inc({ scope: 'channel' }, event.usd);
    if (event.requester) m.spendUsd.inc({ scope: 'user' }, event.usd);
  }
}

/** `gpt-4.1` from `openai:gpt-4.1` (the provider's own id, as gen_ai.request.model wants it). */
function modelIdOf(model: string): string {
  try {
    return parseModelRef(model).model;
  } catch {
    return model;
  }
}

function tokenTypes(tokens: TokenCounts): [string, number][] {
  return [
    ['input', tokens.input],
    ['cached_input', tokens.cachedInput],
    ['cache_write', tokens.cacheWrite],
    ['output', tokens.output],
    ['reasoning', tokens.reasoning],
  ];
}
