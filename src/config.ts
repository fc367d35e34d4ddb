// Configuration from the environment (and `.env`), validated in one place. Every problem
// is reported at once, in one error, so a user fixes their setup in one go instead of
// discovering variables one crash at a time.
import { z } from 'zod';

const positiveInt = z.coerce.number().int().positive();

const ratio = z.coerce.number().gt(0).max(1);

export const ConfigSchema = z.object({
  /** `provider:model`; a bare id goes to OpenAI (or Anthropic for `claude-…`). */
  MODEL: z.string().trim().min(1).optional(),
  /** The models `/model` may switch to, comma-separated (default: MODEL and COMPACTION_MODEL). */
  MODELS: z.string().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url({ message: 'must be a URL, e.g. http://localhost:11434/v1' }).optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url({ message: 'must be a URL, without /v1' }).optional(),
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
  /** Where conversations live: any Keyv backend by URL. */
  STORE_URL: z.string().regex(/^[a-z][a-z0-9+.-]*:\/\//i, 'must be a URL such as sqlite://data/bot.sqlite').default('sqlite://data/bot.sqlite'),
  /** How long transcripts and prompts are kept after a thread's last activity. */
  RETENTION_DAYS: positiveInt.default(30),
  /** The folder the file and shell tools are confined to. */
  WORKSPACE_DIR: z.string().min(1).default('./workspace'),
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
  /** fetch_url may reach localhost and private networks (default: public internet only). */
  FETCH_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
  /** MCP servers, in the common `mcpServers` format. A missing file means none. */
  MCP_CONFIG: z.string().min(1).default('./mcp.json'),
  /** Replace the default system prompt. */
  SYSTEM_PROMPT: z.string().optional(),
  /** Slack: the bot token; with SLACK_APP_TOKEN Socket Mode, with SLACK_SIGNING_SECRET HTTP mode. */
  SLACK_BOT_TOKEN: z.string().startsWith('xoxb-', 'must be a bot token (xoxb-…)').optional(),
  SLACK_APP_TOKEN: z.string().startsWith('xapp-', 'must be an app-level token (xapp-…)').optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  /** The Slack Web API base URL (GovSlack, proxies, tests). */
  SLACK_API_URL: z.url({ message: 'must be a URL such as https://slack.com/api/' }).optional(),
  /** Discord: the bot token (Developer Portal → Bot → Reset Token). Set, the Discord connector starts. */
  DISCORD_TOKEN: z.string().trim().min(1).optional(),
  /** The Discord REST base URL, without the version (discord.js `rest.api`; proxies, tests). The gateway URL comes from `GET /gateway/bot` there. */
  DISCORD_API_URL: z.url({ message: 'must be a URL such as https://discord.com/api' }).optional(),
  /** A Discord server (guild) id: slash commands are registered there (appear at once) instead of globally. */
  DISCORD_GUILD_ID: z.string().regex(/^\d{17,20}$/, 'must be a Discord server id (a long number)').optional(),
  /** HTTP mode: the port for /slack/events and /healthz. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Socket Mode or Discord: serve GET /healthz on this port (HTTP mode answers it on PORT). Unset: no health endpoint. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** `npm run playground`: the local web page's port on 127.0.0.1 (0 picks a free one). */
  PLAYGROUND_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** Log lines: `pretty` (coloured, for a terminal), `json` (one object per line); default: pretty on a terminal, else json. */
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** Built-in tools the model is not offered, by name, comma-separated (e.g. run_shell,fetch_url). */
  DISABLED_TOOLS: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type Config = z.infer<typeof ConfigSchema>;

/** Slack is configured when a bot token and one way of receiving events are set. */
export function slackProblems(config: Config): string[] {
  const set = [config.SLACK_BOT_TOKEN, config.SLACK_APP_TOKEN, config.SLACK_SIGNING_SECRET].some(Boolean);
  if (!set) return [];
  const problems: string[] = [];
  if (!config.SLACK_BOT_TOKEN) problems.push('SLACK_BOT_TOKEN: missing (the xoxb-… token from OAuth & Permissions)');
  if (!config.SLACK_APP_TOKEN && !config.SLACK_SIGNING_SECRET) {
    problems.push('SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: set one (Socket Mode, or HTTP mode with a public URL)');
  }
  return problems;
}

/** Slack is wanted when any of its variables is set. */
export function slackConfigured(config: Config): boolean {
  return [config.SLACK_BOT_TOKEN, config.SLACK_APP_TOKEN, config.SLACK_SIGNING_SECRET].some(Boolean);
}

/** Discord is wanted when its token is set. */
export function discordConfigured(config: Config): boolean {
  return Boolean(config.DISCORD_TOKEN);
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parse the environment; empty strings count as unset (a blank line in .env). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = ConfigSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  return parsed.data;
}
