// The metric families /metrics serves, on a registry of their own (never prom-client's
// global one: two cores in one process, as in tests, must not share counters). Names and
// labels only; what fills them is metrics-sink.ts.
//
// The model-call families follow the OpenTelemetry GenAI client metrics (semantic conventions,
// development status), written the way OTel's Prometheus exporter writes them: dots become
// underscores and the unit is a suffix (`gen_ai.client.operation.duration` in seconds →
// `gen_ai_client_operation_duration_seconds`), with the same bucket boundaries the conventions
// recommend, so a dashboard built for OTel-instrumented agents reads these too. `gen_ai_token_type`
// keeps the two values the conventions define (input, output); cached input, cache writes and
// reasoning tokens, which the conventions have no token type for, are counted apart in
// `chat_agent_model_tokens_total` rather than mixed into a standard family under made-up values.
// Everything else is the bot's own, prefixed `chat_agent_`.
//
// The families fed on every model↔tool iteration are HotCounter/HotHistogram (hot-series.ts
// says why); their series are resolved once per label set by the sink. The rest are prom-client's.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from './hot-series.js';

/** OTel's recommended boundaries for gen_ai.client.operation.duration (seconds). */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** OTel's recommended boundaries for gen_ai.client.token.usage. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** How long a person takes to decide: seconds to a day. */
const DECISION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 14400, 86400];
/** A stop should feel instant: tens of milliseconds to the tool's grace period and beyond. */
const STOP_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What is read at each scrape, not counted as it happens. */
export interface LoadReading {
  /** Conversations whose engine is in memory. */
  liveSessions: number;
  /** Of those, the ones with a turn running or reserved. */
  workingSessions: number;
  /** Replies taken for running turns and not yet given to the model (steering), over all live sessions. */
  queuedSteering: number;
  /** Model calls holding a slot of MAX_CONCURRENT_MODEL_CALLS. */
  modelCallsRunning: number;
  /** Model calls waiting in line for a slot. */
  modelCallsWaiting: number;
}

export function metricFamilies(registry: Registry, load?: () => LoadReading) {
  const readings = load ? cachedPerScrape(load) : undefined;
  const gauge = (name: string, help: string, pick: (reading: LoadReading) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        if (readings) this.set(pick(readings()));
      },
    });
  return {
    turns: new Counter({
      name: 'chat_agent_turns_total',
      help: 'Turns ended, by platform and outcome (completed, max_iterations_exceeded, interrupted, error, budget_paused).',
      labelNames: ['platform', 'outcome'] as const,
      registers: [registry],
    }),
    /** Labels: gen_ai_operation_name, gen_ai_provider_name, gen_ai_request_model, error_type (failures only). */
    operationDuration: new HotHistogram(
      'gen_ai_client_operation_duration_seconds',
      'GenAI operation duration: each model call, from the request to its last chunk (compaction included).',
      DURATION_BUCKETS,
      registry,
    ),
    /** Labels: gen_ai_operation_name, gen_ai_provider_name, gen_ai_request_model, gen_ai_token_type (input, output). */
    tokenUsage: new HotHistogram(
      'gen_ai_client_token_usage',
      'Number of input and output tokens used per model call (input includes cached input).',
      TOKEN_BUCKETS,
      registry,
    ),
    /** Labels: gen_ai_operation_name, gen_ai_provider_name, gen_ai_request_model. */
    firstChunk: new HotHistogram(
      'gen_ai_client_operation_time_to_first_chunk_seconds',
      'Time to first token: from the request to the first streamed chunk (text or reasoning).',
      DURATION_BUCKETS,
      registry,
    ),
    /** Labels: gen_ai_provider_name, gen_ai_request_model, token_type. */
    modelTokens: new HotCounter(
      'chat_agent_model_tokens_total',
      'Tokens of model calls by type: input, cached_input, cache_write, output, reasoning.',
      registry,
    ),
    /** Labels: tool, outcome. */
    toolCalls: new HotCounter(
      'chat_agent_tool_calls_total',
      'Tool calls ended, by tool and outcome (ok, error, denied, interrupted).',
      registry,
    ),
    approvals: new Counter({
      name: 'chat_agent_approvals_total',
      help: 'Waits on a person that ended, by kind (approval, question, plan, directory) and decision.',
      labelNames: ['kind', 'decision'] as const,
      registers: [registry],
    }),
    decisionWait: new Histogram({
      name: 'chat_agent_approval_wait_seconds',
      help: 'Time to decision: from the card to the click (or to the close), by kind and decision.',
      labelNames: ['kind', 'decision'] as const,
      buckets: DECISION_BUCKETS,
      registers: [registry],
    }),
    stopRequests: new Counter({
      name: 'chat_agent_stop_requests_total',
      help: 'Stops asked for (the stop reaction, the Stop button, /stop), by platform.',
      labelNames: ['platform'] as const,
      registers: [registry],
    }),
    stopLatency: new Histogram({
      name: 'chat_agent_stop_latency_seconds',
      help: 'From a stop asked for to the running turn ended by it.',
      labelNames: ['platform'] as const,
      buckets: STOP_BUCKETS,
      registers: [registry],
    }),
    steering: new Counter({
      name: 'chat_agent_steering_inputs_total',
      help: 'Replies in a working thread taken into the running turn, by platform.',
      labelNames: ['platform'] as const,
      registers: [registry],
    }),
    platformCalls: new Counter({
      name: 'chat_agent_platform_calls_total',
      help: "Calls to a platform's API by method (a Slack method, a Discord route template) and outcome (ok, rate_limited: a 429, error).",
      labelNames: ['platform', 'method', 'outcome'] as const,
      registers: [registry],
    }),
    spendUsd: new Counter({
      name: 'chat_agent_spend_usd_total',
      help: 'What model calls cost in USD, by the scope it counts against (user, channel, workspace: kinds, not ids). Each call counts once in each scope it has; sum one scope, never several.',
      labelNames: ['scope'] as const,
      registers: [registry],
    }),
    unpricedTokens: new Counter({
      name: 'chat_agent_spend_unpriced_tokens_total',
      help: 'Tokens of model calls no price is known for (counted in tokens only), by type.',
      labelNames: ['token_type'] as const,
      registers: [registry],
    }),
    budgetRefusals: new Counter({
      name: 'chat_agent_budget_refusals_total',
      help: 'Spend limits that refused, by limit (user_daily, channel_daily, workspace_daily, turn) and what (model_call: the turn paused; new_request).',
      labelNames: ['limit', 'what'] as const,
      registers: [registry],
    }),
    budgetContinues: new Counter({
      name: 'chat_agent_budget_continues_total',
      help: 'Turns paused by a spend limit that an admin let go on.',
      registers: [registry],
    }),
    liveSessions: gauge('chat_agent_live_sessions', 'Conversations whose engine is in memory.', (r) => r.liveSessions),
    workingSessions: gauge(
      'chat_agent_working_sessions',
      'Conversations with a turn running now.',
      (r) => r.workingSessions,
    ),
    queuedSteering: gauge(
      'chat_agent_queued_steering_inputs',
      'Replies waiting to be given to a running turn, over all conversations.',
      (r) => r.queuedSteering,
    ),
    modelCallsRunning: gauge(
      'chat_agent_model_calls_running',
      'Model calls holding a slot of MAX_CONCURRENT_MODEL_CALLS.',
      (r) => r.modelCallsRunning,
    ),
    modelCallsWaiting: gauge(
      'chat_agent_model_calls_waiting',
      'Model calls waiting in line for a slot (the queue depth).',
      (r) => r.modelCallsWaiting,
    ),
  };
}

export type MetricFamilies = ReturnType<typeof metricFamilies>;

/** One reading per scrape: the gauges' collect() run one after another, within a tick of each other. */
function cachedPerScrape(load: () => LoadReading): () => LoadReading {
  let reading: LoadReading | undefined;
  return () => {
    if (!reading) {
      reading = load();
      queueMicrotask(() => (reading = undefined));
    }
    return reading;
  };
}
