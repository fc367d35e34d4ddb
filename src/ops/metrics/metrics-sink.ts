// The metrics side of the operations stream: an OpsSink that turns each event into counter
// and histogram updates on its own prom-client registry, and renders that registry for
// GET /metrics (metrics-endpoint.ts serves it).
//
// What it keeps of an event is the kind of thing, never who or where: the platform, a tool's
// name (only a tool the bot registered: any other name the model makes up is `unknown`,
// tool-names.ts), a model id, a decision word, a limit's name. No session, thread, channel, workspace or
// user id becomes a label, nor anything a person wrote. Labels fed from open-ended sources
// (tools, models, platform methods, error kinds) are capped (bounded-labels.ts). It holds no
// state per session; per call only its start, until it ends (for time to first token).
//
// Cheap on the hot path (each model and tool call): the series of a model or a tool are
// resolved once and kept (hot-series.ts), so an event costs a few map lookups and additions.
import { Registry } from 'prom-client';
import { parseModelRef } from '../../providers/model-ref.js';
import type { OpsEvent, OpsEventOf, OpsSink, TokenCounts } from '../ops-events.js';
import { NO_KNOWN_TOOLS, reportedToolName, type KnownTools } from '../tool-names.js';
import { BoundedLabel } from './bounded-labels.js';
import type { CounterSeries, HistogramSeries } from './hot-series.js';
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
/** Raw model and tool names whose series are kept resolved; past this they are resolved per event (still capped). */
const MAX_CACHED = 256;

const TOKEN_TYPES = ['input', 'cached_input', 'cache_write', 'output', 'reasoning'] as const;
const TOOL_OUTCOMES = ['ok', 'error', 'denied', 'interrupted'] as const;

/** The resolved series of one provider and model. */
interface ModelSeries {
  duration: HistogramSeries;
  failed: Map<string, HistogramSeries>;
  firstChunk: HistogramSeries;
  input: HistogramSeries;
  output: HistogramSeries;
  tokens: CounterSeries[];
}

export interface MetricsSinkOptions {
  /** Read at each scrape for the gauges (live sessions, queue depths). */
  load?: () => LoadReading;
  /** The tools the bot registered: a `tool` label takes their names, and `unknown` for any other (default: none known). */
  knownTools?: KnownTools;
}

export class MetricsSink implements OpsSink {
  readonly registry = new Registry();
  private readonly m: MetricFamilies;
  private readonly labels = {
    platform: new BoundedLabel(LABEL_CAPS.platform),
    tool: new BoundedLabel(LABEL_CAPS.tool),
    model: new BoundedLabel(LABEL_CAPS.model, modelIdOf),
    provider: new BoundedLabel(LABEL_CAPS.provider),
    method: new BoundedLabel(LABEL_CAPS.method),
    errorType: new BoundedLabel(LABEL_CAPS.errorType),
    kind: new BoundedLabel(LABEL_CAPS.kind),
    decision: new BoundedLabel(LABEL_CAPS.decision),
  };
  private readonly models = new Map<string, Map<string, ModelSeries>>();
  private readonly tools = new Map<string, Record<string, CounterSeries>>();
  private cached = 0;
  /** callId → when the call was sent and its time to first token, until the call ends. */
  private readonly openCalls = new Map<string, { started: number; firstChunkS?: number }>();
  private readonly knownTools: KnownTools;

  constructor(options: MetricsSinkOptions = {}) {
    this.m = metricFamilies(this.registry, options.load);
    this.knownTools = options.knownTools ?? NO_KNOWN_TOOLS;
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
        m.turns.inc({
          platform: this.labels.platform.of(event.place.platform),
          outcome: event.errorKind === 'budget' ? 'budget_paused' : event.status,
        });
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
        this.toolSeries(event.tool)[event.outcome]?.inc();
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
        if (event.latencyMs !== undefined && event.latencyMs >= 0)
          m.stopLatency.observe({ platform: this.labels.platform.of(event.place.platform) }, event.latencyMs / 1000);
        return;
      case 'steered':
        m.steering.inc({ platform: this.labels.platform.of(event.place.platform) });
        return;
      case 'platform_call':
        m.platformCalls.inc({
          platform: this.labels.platform.of(event.platform),
          method: this.labels.method.of(event.method),
          outcome: event.outcome,
        });
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
    const firstChunk = this.openCalls.get(event.callId)?.firstChunkS;
    this.openCalls.delete(event.callId);
    const series = this.modelSeries(event.provider, event.model);
    const seconds = Math.max(0, event.durationMs) / 1000;
    if (event.error) this.failedSeries(series, event).observe(seconds);
    else series.duration.observe(seconds);
    if (firstChunk !== undefined) series.firstChunk.observe(firstChunk);
    const tokens = event.tokens;
    if (!tokens) return;
    series.input.observe(tokens.input);
    series.output.observe(tokens.output);
    const counts = [tokens.input, tokens.cachedInput, tokens.cacheWrite, tokens.output, tokens.reasoning];
    for (let i = 0; i < counts.length; i++) if (counts[i]! > 0) series.tokens[i]!.inc(counts[i]);
  }

  private modelSeries(provider: string, model: string): ModelSeries {
    const known = this.models.get(provider)?.get(model);
    if (known) return known;
    const m = this.m;
    const base = {
      gen_ai_operation_name: 'chat',
      gen_ai_provider_name: this.labels.provider.of(provider),
      gen_ai_request_model: this.labels.model.of(model),
    };
    const counted = {
      gen_ai_provider_name: base.gen_ai_provider_name,
      gen_ai_request_model: base.gen_ai_request_model,
    };
    const series: ModelSeries = {
      duration: m.operationDuration.series(base),
      failed: new Map(),
      firstChunk: m.firstChunk.series(base),
      input: m.tokenUsage.series({ ...base, gen_ai_token_type: 'input' }),
      output: m.tokenUsage.series({ ...base, gen_ai_token_type: 'output' }),
      tokens: TOKEN_TYPES.map((type) => m.modelTokens.series({ ...counted, token_type: type })),
    };
    if (this.cached < MAX_CACHED) {
      this.cached++;
      let byModel = this.models.get(provider);
      if (!byModel) this.models.set(provider, (byModel = new Map<string, ModelSeries>()));
      byModel.set(model, series);
    }
    return series;
  }

  private failedSeries(series: ModelSeries, event: OpsEventOf<'model_call_ended'>): HistogramSeries {
    const error = event.error!;
    let failed = series.failed.get(error);
    if (!failed) {
      failed = this.m.operationDuration.series({
        gen_ai_operation_name: 'chat',
        gen_ai_provider_name: this.labels.provider.of(event.provider),
        gen_ai_request_model: this.labels.model.of(event.model),
        error_type: this.labels.errorType.of(error),
      });
      if (series.failed.size < LABEL_CAPS.errorType) series.failed.set(error, failed);
    }
    return failed;
  }

  private toolSeries(called: string): Record<string, CounterSeries> {
    // Resolved before the cache, so a name the model made up is never kept, even in memory.
    const tool = reportedToolName(called, this.knownTools);
    const known = this.tools.get(tool);
    if (known) return known;
    const label = this.labels.tool.of(tool);
    const series = Object.fromEntries(
      TOOL_OUTCOMES.map((outcome) => [outcome, this.m.toolCalls.series({ tool: label, outcome })]),
    );
    if (this.cached < MAX_CACHED) {
      this.cached++;
      this.tools.set(tool, series);
    }
    return series;
  }

  private spend(event: OpsEventOf<'spend'>): void {
    const m = this.m;
    if (event.usd === undefined) {
      for (const [type, count] of tokenTypes(event.tokens))
        if (count > 0) m.unpricedTokens.inc({ token_type: type }, count);
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
