// Configuration from the environment (and `.env`), validated in one place. Every problem
// is reported at once, in one error, so a user fixes their setup in one go instead of
// discovering variables one crash at a time: the schema's issues, reworded, and the checks
// of src/config-checks.ts (model names, provider keys, user ids, tool names), in the order
// the variables are declared here.
import { isKnownTimezone } from './schedules/zoned-time.js';
import { z } from 'zod';
import { limitSetting } from './ops/spend/budget-limits.js';
import { describeIssue, startProblems, valueProblems, wantsToRun, type RawSettings } from './config-checks.js';

export { discordConfigured, discordGuildIds, slackConfigured, slackProblems } from './config-checks.js';

const positiveInt = z.coerce.number().int().positive();

const ratio = z.coerce.number().gt(0).max(1);

/** An http(s) URL: `localhost:11434` parses as a URL of scheme `localhost:`, which no client can reach. */
/** A duration: `15m`, `90s`, `2h`, or a number of minutes. */
const minutesSetting = (example: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?\s*(ms|s|sec|m|min|h)?$/i, `must be a duration such as ${example} (ms, s, m or h; a bare number is minutes)`)
    .transform((text) => {
      const [, amount, unit] = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text)!;
      const scale: Record<string, number> = { ms: 1, s: 1_000, sec: 1_000, m: 60_000, min: 60_000, h: 3_600_000, '': 60_000 };
      return Math.round(Number(amount) * scale[(unit ?? '').toLowerCase()]!);
    });
const timeZone = z.string().trim().refine(isKnownTimezone, 'must be a time zone name such as UTC or Europe/Paris');
const httpUrl = (example: string) => z.url({ protocol: /^https?$/, message: `must be a URL starting with http:// or https://, e.g. ${example}` });

/** A setting that holds a JSON array (a list whose items may hold commas). */
const jsonList = <T extends z.ZodType>(item: T, max: number, example: string) =>
  z
    .string()
    .transform((text, context): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        context.addIssue({ code: 'custom', message: `must be a JSON array, e.g. ${example}` });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .array(item, { error: (issue) => (issue.code === 'invalid_type' ? `must be a JSON array, e.g. ${example}` : undefined) })
        .min(1, 'must list at least one')
        .max(max, `must list at most ${max}`),
    );

/** OTLP encodings the bot exports in (both over HTTP); grpc is named apart, since it is a common setting to carry over. */
const otlpProtocol = z
  .string()
  .trim()
  .transform((value, context): 'http/protobuf' | 'http/json' => {
    if (value === 'http/protobuf' || value === 'http/json') return value;
    context.addIssue({
      code: 'custom',
      message: value === 'grpc' ? 'grpc is not supported: use http/protobuf (the default) or http/json, on the collector\'s OTLP/HTTP port (4318)' : 'must be http/protobuf or http/json',
    });
    return z.NEVER;
  });

/** `key=value,key2=value2`, values percent-decoded (the OpenTelemetry format). The message never repeats a value: they are keys. */
const otlpHeaders = z.string().transform((text, context): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const entry of text.split(',')) {
    if (!entry.trim()) continue;
    const equals = entry.indexOf('=');
    const name = equals > 0 ? entry.slice(0, equals).trim() : '';
    let value: string | undefined;
    try {
      value = equals > 0 ? decodeURIComponent(entry.slice(equals + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || !value) {
      context.addIssue({ code: 'custom', message: 'must be header=value pairs separated by commas, e.g. api-key=abc123,x-team=ops' });
      return z.NEVER;
    }
    headers[name] = value;
  }
  return headers;
});

export const ConfigSchema = z.object({
  /** `provider:model`; a bare id goes to OpenAI (or Anthropic for `claude-…`); `demo`: the built-in scripted model (the playground's default). */
  MODEL: z.string().trim().min(1).optional(),
  /** The models `/model` may switch to, comma-separated (default: MODEL and COMPACTION_MODEL). */
  MODELS: z.string().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  /** An OpenAI-compatible server (Ollama, LM Studio, vLLM…); set, OPENAI_API_KEY is optional. */
  OPENAI_BASE_URL: httpUrl('http://localhost:11434/v1').optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  /** Without /v1 (the SDK adds it); set, ANTHROPIC_API_KEY is optional (a proxy may hold it). */
  ANTHROPIC_BASE_URL: httpUrl('https://api.anthropic.com (without /v1)').optional(),
  /**
   * Prices of models in USD per million tokens, as JSON keyed `provider:model`:
   * `{"openai:gpt-4.1": {"input": 2, "cachedInput": 0.5, "output": 8}}`. Overrides the built-in
   * table (src/ops/pricing.ts); a model priced nowhere is counted in tokens only.
   */
  MODEL_PRICES: z
    .string()
    .transform((text, context): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        context.addIssue({ code: 'custom', message: 'must be a JSON object, e.g. {"openai:gpt-4.1": {"input": 2, "cachedInput": 0.5, "output": 8}}' });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .record(
          z.string(),
          z.object({ input: z.number().min(0), output: z.number().min(0), cachedInput: z.number().min(0).optional(), cacheWrite: z.number().min(0).optional() }).strict(),
        )
        .superRefine((prices, context) => {
          for (const key of Object.keys(prices)) {
            if (!/^[a-z0-9_-]+:\S+$/i.test(key)) context.addIssue({ code: 'custom', message: `each key is provider:model, e.g. openai:gpt-4.1 (not ${JSON.stringify(key)})` });
          }
        }),
    )
    .optional(),
  /**
   * Spend limits, checked before every model call (src/ops/spend/): an amount in USD (`5`,
   * `5.50`, `$5`) holds priced calls, an amount in tokens (`500000 tokens`, `2M tokens`) holds
   * every call; both may be given, comma-separated (`$5, 2M tokens`). Days are calendar days
   * in BUDGET_TIMEZONE. Unset: no limit (spend is recorded either way).
   */
  BUDGET_USER_DAILY: limitSetting.optional(),
  BUDGET_CHANNEL_DAILY: limitSetting.optional(),
  BUDGET_WORKSPACE_DAILY: limitSetting.optional(),
  /** What one turn may spend (its retries and compaction included). */
  BUDGET_TURN: limitSetting.optional(),
  /** The time zone whose midnight starts a budget day and month (an IANA name such as Europe/Paris; default UTC). */
  BUDGET_TIMEZONE: timeZone.optional(),
  /** Abandon a model stream that sends nothing for this long. */
  PROVIDER_STALL_TIMEOUT_MS: positiveInt.default(60_000),
  /** Extended thinking for Anthropic models: the token budget (unset: off). */
  ANTHROPIC_THINKING_BUDGET: z.coerce.number().int().min(1024).optional(),
  COMPACTION_THRESHOLD: ratio.default(0.8),
  COMPACTION_CAP_TOKENS: positiveInt.default(250_000),
  /** Summarise with this model instead of the active one. */
  COMPACTION_MODEL: z.string().trim().min(1).optional(),
  MAX_ITERATIONS: positiveInt.default(12),
  /** Tool calls of one model response that run; the rest are answered with an error (one note in the thread). */
  MAX_TOOL_CALLS_PER_RESPONSE: positiveInt.default(20),
  /** Messages waiting in one thread while it works (count, and their total size in bytes). */
  MAX_QUEUED_INPUTS: positiveInt.default(20),
  MAX_QUEUED_BYTES: positiveInt.default(256 * 1024),
  /** Fair use per person: new turns per minute, and threads working at once. */
  TURNS_PER_USER_PER_MINUTE: positiveInt.default(10),
  THREADS_PER_USER: positiveInt.default(3),
  /** Model calls running at once for the whole bot; more wait for a free slot. */
  MAX_CONCURRENT_MODEL_CALLS: positiveInt.default(8),
  /** Sessions kept in memory (least recently used are dropped, and rebuilt from the store on demand). */
  MAX_LIVE_SESSIONS: positiveInt.default(500),
  /** Slack Web API calls in flight for one thread; more wait their turn. */
  SLACK_CALLS_PER_THREAD: positiveInt.default(3),
  /**
   * Cluster mode: several instances share this Redis (leases, command lists, and the store).
   * Same as STORE_URL=redis://…; with it set, STORE_URL may be left out.
   */
  COORDINATION_URL: z.string().regex(/^rediss?:\/\/\S+$/i, 'must be a Redis URL such as redis://10.0.0.5:6379').optional(),
  /** Cluster mode: how long a session's lease lasts unrenewed (a dead instance's sessions are taken over after this plus a sweep). */
  CLUSTER_LEASE_MS: z.coerce.number().int().min(1_000).default(15_000),
  /** Cluster mode: how often each instance looks for sessions whose owner stopped renewing. */
  CLUSTER_SWEEP_MS: z.coerce.number().int().min(100).default(2_000),
  /** Where conversations live: any Keyv backend by URL. */
  STORE_URL: z.string().regex(/^[a-z][a-z0-9+.-]*:\/\//i, 'must be a URL such as sqlite://data/bot.sqlite').default('sqlite://data/bot.sqlite'),
  /** How long transcripts and prompts are kept after a thread's last activity. */
  RETENTION_DAYS: positiveInt.default(30),
  /** How long the audit trail's records are kept (src/ops/audit/), apart from the transcripts: /forget does not remove them. */
  AUDIT_RETENTION_DAYS: positiveInt.default(90),
  /** The folder the file and shell tools are confined to: each conversation gets a folder of its own in it (WORKSPACE_SCOPE). */
  WORKSPACE_DIR: z.string().min(1).default('./workspace'),
  /** What one conversation's folder (all of WORKSPACE_DIR when shared) may hold on disk, in MB: past it, commands and file writes are refused. */
  WORKSPACE_MAX_MB: positiveInt.default(2048),
  /**
   * Whether each thread's or channel's folder gets a disk of its own (a sized, loop-mounted
   * ext4 file), so the kernel holds WORKSPACE_MAX_MB whatever a command does: `off` (measured
   * only), `auto` (where a root bot can make one), `on` (or the start stops).
   */
  WORKSPACE_DISKS: z.enum(['auto', 'on', 'off']).default('off'),
  /** Files shared in a thread (src/files/): the largest one file the bot fetches, in bytes (default 20 MiB). */
  MAX_FILE_BYTES: positiveInt.default(20 * 1024 * 1024),
  /** Files one message may bring; the rest are named in the thread and not fetched. */
  MAX_FILES_PER_MESSAGE: positiveInt.default(10),
  /** What all the files shared in one conversation may add up to, in bytes (default 200 MiB). */
  MAX_CONVERSATION_FILE_BYTES: positiveInt.default(200 * 1024 * 1024),
  /** attach_file and compressed contents the secret check cannot read (xz, zstd, 7z…, an encrypted zip member, past the zip-bomb bounds): `refuse` (default) or `allow`; zip (and the office formats) and gzip are opened and checked either way. */
  ATTACH_COMPRESSED: z.enum(['refuse', 'allow']).default('refuse'),
  /** The most pixels (width × height) a shared image may have to be decoded at all; past it, refused from its header. */
  MAX_IMAGE_PIXELS: positiveInt.default(40_000_000),
  /** The memory the process reading one PDF's text may hold, in MB; past it, it is killed and the PDF's text is not read. */
  PDF_MAX_MEMORY_MB: z.coerce.number().int().min(128).default(512),
  /** Whose files a conversation sees: its thread's own folder (default), its channel's, or all of WORKSPACE_DIR (`shared`). */
  WORKSPACE_SCOPE: z.enum(['thread', 'channel', 'shared']).default('thread'),
  /** request_directory may grant only folders inside these (absolute paths, comma-separated); unset: anywhere but system and bot folders. */
  GRANT_ROOTS: z.string().optional(),
  /** Who may start or steer a conversation: platform user ids, comma-separated, or `*`. */
  ALLOWED_USERS: z.string().default('*'),
  /** Who may always approve and stop (comma-separated user ids). */
  ADMINS: z.string().optional(),
  PERMISSION_MODE: z.enum(['interactive', 'auto', 'read-only']).default('interactive'),
  /** Shell commands that run without asking, comma-separated (`git status, npm test`). */
  SHELL_ALLOWLIST: z.string().optional(),
  /** Where "always allow" grants apply: the thread (default) or the whole channel. */
  GRANT_SCOPE: z.enum(['thread', 'channel']).default('thread'),
  SHELL_TIMEOUT_MS: positiveInt.default(120_000),
  /** Where shell commands run: `auto` (the sandbox if bwrap works, else no shell), `bwrap` (must work), `off` (unconfined). */
  SHELL_SANDBOX: z.enum(['auto', 'bwrap', 'off']).default('auto'),
  /** Sandboxed commands may reach the network (default: they have none). */
  SHELL_NETWORK: z.enum(['on', 'off', 'true', 'false']).default('off').transform((value) => value === 'on' || value === 'true'),
  /** Variables handed to shell commands besides PATH, LANG, LC_*, TZ (comma-separated names). */
  SHELL_ENV: z.string().optional(),
  /** Extra folders commands may read (comma-separated): toolchains outside /usr, e.g. ~/.nvm. */
  SHELL_READ_PATHS: z.string().optional(),
  /** When the bot runs as root: the unprivileged `uid:gid` sandboxed commands run as (default 65534:65534, nobody). */
  SHELL_RUN_AS: z
    .string()
    .regex(/^\d+:\d+$/, 'must be uid:gid, e.g. 65534:65534')
    .refine((value) => !value.split(':').includes('0'), 'must not be 0 (root): commands run as an unprivileged user')
    .optional(),
  /** Address space of each process of a command, in MB (RLIMIT_AS). */
  SHELL_MAX_MEMORY_MB: z.coerce.number().int().min(256).default(4096),
  /** Size of a command's private /tmp (and /dev/shm), in MB. */
  SHELL_TMP_MB: positiveInt.default(512),
  /** fetch_url may reach localhost and private networks (default: public internet only). */
  FETCH_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
  /** MCP servers, in the common `mcpServers` format. A missing file means none. */
  MCP_CONFIG: z.string().min(1).default('./mcp.json'),
  /** Replace the default system prompt. */
  SYSTEM_PROMPT: z.string().optional(),
  /**
   * Profiles per place (src/profiles/): a YAML or JSON file whose entries set instructions,
   * models, tools, permission mode, approvers and more for a Slack channel or workspace, a
   * Discord channel or server, DMs or the playground. Reloaded on change and on SIGHUP.
   */
  PROFILES: z.string().trim().min(1).optional(),
  /** Scheduled work (src/schedules/): the time zone "every weekday at 9:00" is read in when the platform gives none (Discord; default UTC). */
  SCHEDULE_TZ: timeZone.default('UTC'),
  /** A run missed while the bot was down runs once at start if it was due less than this ago; older ones are skipped with a note. */
  SCHEDULE_GRACE: minutesSetting('15m').default(15 * 60_000),
  /** The shortest gap between two runs of one schedule. */
  SCHEDULE_MIN_INTERVAL: minutesSetting('5m').default(5 * 60_000),
  /** How long a scheduled run may wait for an approval or an answer before it is closed with a note. */
  SCHEDULE_WAIT_LIMIT: minutesSetting('60m').default(60 * 60_000),
  /** Schedules one person may have, and one channel. */
  SCHEDULES_PER_USER: positiveInt.default(10),
  SCHEDULES_PER_CHANNEL: positiveInt.default(25),
  /** Slack: the bot token; with SLACK_APP_TOKEN Socket Mode, with SLACK_SIGNING_SECRET HTTP mode. */
  SLACK_BOT_TOKEN: z.string().startsWith('xoxb-', 'must be a bot token (xoxb-…)').optional(),
  SLACK_APP_TOKEN: z.string().startsWith('xapp-', 'must be an app-level token (xapp-…)').optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  /** The Slack Web API base URL (GovSlack, proxies, tests). */
  SLACK_API_URL: httpUrl('https://slack.com/api/').optional(),
  /** Discord: the bot token (Developer Portal → Bot → Reset Token). Set, the Discord connector starts. */
  DISCORD_TOKEN: z.string().trim().min(1).optional(),
  /** The Discord REST base URL, without the version (discord.js `rest.api`; proxies, tests). The gateway URL comes from `GET /gateway/bot` there. */
  DISCORD_API_URL: httpUrl('https://discord.com/api').optional(),
  /**
   * The Discord servers (guild ids, comma-separated) whose members are members; the slash
   * commands are registered there (appear at once). Unset: every server the bot is in counts.
   * Each id is checked in src/config-checks.ts (discordGuildIds reads the list).
   */
  DISCORD_GUILD_ID: z.string().optional(),
  /** HTTP mode: the port for /slack/events and /healthz. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Socket Mode or Discord: serve GET /healthz on this port (HTTP mode answers it on PORT). Unset: no health endpoint. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /**
   * GET /metrics (Prometheus text) on 127.0.0.1:METRICS_PORT; with METRICS_TOKEN also on PORT
   * (HTTP mode) and HEALTH_PORT. On by default: its labels carry kinds and counts, never ids or
   * text (src/ops/metrics/metrics-placement.ts).
   */
  METRICS: z.enum(['on', 'off', 'true', 'false']).default('on').transform((value) => value === 'on' || value === 'true'),
  /** Set: every /metrics answers only `Authorization: Bearer <this>`, and PORT and HEALTH_PORT answer it too (for a scraper on another host). */
  METRICS_TOKEN: z.string().trim().min(16, 'must be at least 16 characters (e.g. the output of: openssl rand -hex 32)').optional(),
  /** The metrics' own listener, on 127.0.0.1 only (unset: 9464; 0: any free port, logged). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** `npm run playground`: the local web page's port on 127.0.0.1 (0: the last run's port when free, else any free one). */
  PLAYGROUND_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /**
   * `npm run playground`: a fixed access token (unset: a new one at each start, so one that
   * leaked dies at the next start). URL-safe, and long enough not to be guessed.
   */
  PLAYGROUND_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,256}$/, 'must be 32 to 256 characters of A-Z, a-z, 0-9, - and _ (e.g. the output of: openssl rand -hex 32)')
    .optional(),
  /**
   * Traces (src/ops/traces/), the standard OpenTelemetry settings: exported over OTLP/HTTP when
   * an endpoint is set, off otherwise. The generic endpoint gets `/v1/traces` appended; the
   * traces one is used as is.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl('http://localhost:4318').optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl('http://localhost:4318/v1/traces').optional(),
  /** `http/protobuf` (default) or `http/json`; the traces one wins. grpc is refused at start. */
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  /** Headers sent with every export, `key=value,key2=value2` (percent-encoded values): API keys, so masked everywhere. */
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders.optional(),
  /** The service name the traces carry (default `chat-agent`). */
  OTEL_SERVICE_NAME: z.string().trim().min(1).optional(),
  /** `true`: model calls' spans carry the messages sent and the answer, masked. Default: never. */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
  /** Log lines: `pretty` (coloured, for a terminal), `json` (one object per line); default: pretty on a terminal, else json. */
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** How tool calls show in a thread: `cards` (one message per call) or `compact` (steps of one reply; a call that asks a person still gets its card). */
  TOOL_DISPLAY: z.enum(['cards', 'compact']).default('cards'),
  /** Slack's Messages tab: up to four prompts offered when someone opens it, as JSON `[{"title": …, "message": …}]` (default: what the bot can do). */
  SUGGESTED_PROMPTS: jsonList(
    z.object({ title: z.string().trim().min(1).max(75), message: z.string().trim().min(1).max(2_000) }).strict(),
    4,
    '[{"title": "Summarise", "message": "Summarise this thread"}]',
  ).optional(),
  /** Slack: the short lines shown in turn while the bot works, as a JSON array of up to ten (default: a few of ours). */
  LOADING_MESSAGES: jsonList(z.string().trim().min(1).max(80), 10, '["Thinking…", "Reading the files…"]').optional(),
  /** Built-in tools the model is not offered, by name, comma-separated (e.g. run_shell,fetch_url). */
  DISABLED_TOOLS: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parse the environment; empty strings count as unset (a blank line in .env). Throws one
 * ConfigError with every problem. With a chat platform configured, what a run needs (MODEL,
 * the provider keys, Slack's second token) is checked too.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: RawSettings = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = ConfigSchema.safeParse(raw);
  const problems = parsed.success ? [] : parsed.error.issues.map((issue) => describeIssue(issue, fieldSchema(issue.path[0]), raw));
  problems.push(...valueProblems(raw));
  if (wantsToRun(raw)) problems.push(...startProblems(raw));
  if (problems.length > 0 || !parsed.success) throw new ConfigError(inDeclarationOrder(problems));
  return parsed.data;
}

/** The problems a configuration has for a run (MODEL, keys, Slack): for a caller that built it without a platform. */
export function configStartProblems(config: Config): string[] {
  return inDeclarationOrder(startProblems(config as unknown as RawSettings));
}

function fieldSchema(key: PropertyKey | undefined): z.ZodType | undefined {
  return typeof key === 'string' && key in ConfigSchema.shape ? ConfigSchema.shape[key as keyof Config] : undefined;
}

const DECLARED = Object.keys(ConfigSchema.shape);

/** Sorted as the variables are declared here: models, then limits, then platforms. */
function inDeclarationOrder(problems: string[]): string[] {
  const rank = (problem: string): number => {
    const index = DECLARED.indexOf(problem.match(/^[A-Z_]+/)?.[0] ?? '');
    return index === -1 ? DECLARED.length : index;
  };
  return problems.map((problem, at) => ({ problem, at })).sort((a, b) => rank(a.problem) - rank(b.problem) || a.at - b.at).map(({ problem }) => problem);
}

/** Where conversations live: COORDINATION_URL's Redis in cluster mode, else STORE_URL. */
export function storeUrlOf(config: Pick<Config, 'STORE_URL' | 'COORDINATION_URL'>): string {
  return config.COORDINATION_URL ?? config.STORE_URL;
}

/** Cluster mode: the store is a Redis that several instances share. */
export function clustered(config: Pick<Config, 'STORE_URL' | 'COORDINATION_URL'>): boolean {
  return /^rediss?:\/\//i.test(storeUrlOf(config));
}
