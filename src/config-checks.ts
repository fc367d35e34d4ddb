// The configuration checks that a schema cannot express, and the words for the ones it can.
// One idea: every check reads the raw variables (blank ones removed), not the parsed
// configuration, so they all run even when the schema failed, and a user sees every problem
// of their setup in one run, each line naming the variable and saying how to fix it.
//
// Two kinds: value checks (a model name with an unknown provider, a user id that is no
// platform's, an unknown tool name) always apply; start checks (MODEL, the provider keys,
// Slack's second token) apply once a chat platform is configured, because that is when the
// bot is meant to run. A unit test that builds a partial configuration is not held to them.
import type { z } from 'zod';
import { resolveModelRef } from './providers/model-ref.js';
import { PROVIDER_NAMES, type ProviderName, type VendorName } from './providers/model-ref.js';
import { parseAccessConfig } from './sessions/access-policy.js';
import { BUILTIN_TOOL_NAMES } from './tools/index.js';

/** The files room's tools (src/files/), built per conversation beside the built-in ones: DISABLED_TOOLS may name them too. */
export const FILE_TOOL_NAMES = ['attach_file'] as const;

/** The schedules room's tool (src/schedules/schedule-tool.ts SCHEDULE_TOOL_NAMES; named here so the checks need not load it). */
export const SCHEDULE_TOOL_NAME = 'schedule_task';

/** The environment as given, blank values removed: what every check here reads. */
export type RawSettings = Readonly<Record<string, string | undefined>>;

/** The platforms' variables, as parsed (config.ts) or as given: strings either way. */
type SlackSettings = { SLACK_BOT_TOKEN?: string; SLACK_APP_TOKEN?: string; SLACK_SIGNING_SECRET?: string };

/** Slack is wanted when any of its variables is set. */
export function slackConfigured(config: SlackSettings): boolean {
  return [config.SLACK_BOT_TOKEN, config.SLACK_APP_TOKEN, config.SLACK_SIGNING_SECRET].some(Boolean);
}

/** Discord is wanted when its token is set. */
export function discordConfigured(config: { DISCORD_TOKEN?: string }): boolean {
  return Boolean(config.DISCORD_TOKEN);
}

/** Slack is configured when a bot token and one way of receiving events are set. */
function slackProblems(config: SlackSettings): string[] {
  if (!slackConfigured(config)) return [];
  const problems: string[] = [];
  if (!config.SLACK_BOT_TOKEN) problems.push('SLACK_BOT_TOKEN: missing (the xoxb-… token from OAuth & Permissions)');
  if (!config.SLACK_APP_TOKEN && !config.SLACK_SIGNING_SECRET) {
    problems.push('SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: set one (Socket Mode, or HTTP mode with a public URL)');
  }
  return problems;
}

// ---------------------------------------------------------------------------------------
// Value checks
// ---------------------------------------------------------------------------------------

/** Problems with single values that hold whatever runs: model names, user ids, tool names, the store's scheme. */
export function valueProblems(raw: RawSettings): string[] {
  return [
    ...modelNameProblems(raw),
    ...userIdProblems(raw),
    ...disabledToolProblems(raw),
    ...storeUrlProblems(raw),
    ...discordGuildProblems(raw),
  ];
}

/** The model variables, each model name with the variable it came from. */
function modelNames(raw: RawSettings): { variable: string; name: string }[] {
  const names: { variable: string; name: string }[] = [];
  for (const variable of ['MODEL', 'COMPACTION_MODEL'] as const) {
    const name = raw[variable]?.trim();
    if (name) names.push({ variable, name });
  }
  for (const name of (raw.MODELS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean))
    names.push({ variable: 'MODELS', name });
  return names;
}

/**
 * A `provider:` prefix must be one we know. A bare id may hold colons (Ollama tags such as
 * `llama3.1:8b`, OpenAI fine-tunes `ft:…`), so an unknown prefix is only an error when the
 * model would go to api.openai.com, which has no such ids: without OPENAI_BASE_URL,
 * `bogus:thing` is a typo, not a model.
 */
function modelNameProblems(raw: RawSettings): string[] {
  const problems: string[] = [];
  for (const { variable, name } of modelNames(raw)) {
    const judged = judgeModelName(name, raw);
    if ('problem' in judged) problems.push(`${variable}: ${judged.problem}`);
  }
  return problems;
}

function judgeModelName(name: string, raw: RawSettings): { provider: ProviderName } | { problem: string } {
  let provider: ProviderName;
  try {
    provider = resolveModelRef(name).provider;
  } catch (error) {
    return { problem: (error as Error).message };
  }
  const colon = name.indexOf(':');
  if (colon <= 0 || /^https?:\/\//i.test(raw.OPENAI_BASE_URL ?? '')) return { provider };
  const prefix = name.slice(0, colon).toLowerCase();
  if ((PROVIDER_NAMES as readonly string[]).includes(prefix) || prefix === 'ft') return { provider };
  return {
    problem: `unknown provider "${prefix}" in "${name}" (known providers: ${PROVIDER_NAMES.join(', ')}; write provider:model, e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-6; for a local OpenAI-compatible server set OPENAI_BASE_URL)`,
  };
}

/**
 * Why a model named outside the environment (a PROFILES entry) cannot be called with these
 * settings: a malformed or unknown provider, or a provider whose key (or base URL) is unset.
 */
export function modelNameProblem(name: string, raw: RawSettings): string | undefined {
  const judged = judgeModelName(name, raw);
  if ('problem' in judged) return judged.problem;
  if (judged.provider === 'demo') return undefined;
  const { key, baseUrl, vendor } = KEY_OF[judged.provider];
  return raw[key] || raw[baseUrl]
    ? undefined
    : `it uses ${vendor}, and ${key} is not set (set it; or ${baseUrl} for a server that needs none)`;
}

/** Slack member ids: U… (or W… on Enterprise Grid), upper-case letters and digits. */
const SLACK_MEMBER_ID = /^[UW][A-Z0-9]+$/;
/** Discord user ids are snowflakes: 17 to 20 digits. */
const DISCORD_USER_ID = /^\d{17,20}$/;
const HOW_TO_FIND = {
  slack: "Slack member ids look like U012AB3CDE (in Slack: open the person's profile → ⋮ → Copy member ID)",
  discord:
    'Discord user ids are 17–20 digits (in Discord: Settings → Advanced → Developer Mode on, then right-click the person → Copy User ID)',
} as const;

/**
 * ALLOWED_USERS and ADMINS hold member ids of the configured platform (either, with both or
 * none configured). A name such as `alice` would match nobody and lock everyone out, or,
 * in ADMINS, leave the bot without the admins its owner thinks it has.
 */
function userIdProblems(raw: RawSettings): string[] {
  const slack = slackConfigured(raw);
  const discord = discordConfigured(raw);
  const platforms =
    slack === discord ? (['slack', 'discord'] as const) : slack ? (['slack'] as const) : (['discord'] as const);
  const accepts = (id: string): boolean =>
    platforms.some((platform) => (platform === 'slack' ? SLACK_MEMBER_ID : DISCORD_USER_ID).test(id));
  const problems: string[] = [];
  for (const variable of ['ALLOWED_USERS', 'ADMINS'] as const) {
    const value = raw[variable]?.trim() ?? '';
    if (value === '*' && variable === 'ALLOWED_USERS') continue;
    const bad = value.split(/[\s,]+/).filter((id) => id && id !== '*' && !accepts(id));
    if (bad.length > 0)
      problems.push(
        `${variable}: not user ids: ${bad.join(', ')}. ${platforms.map((platform) => HOW_TO_FIND[platform]).join('; ')}`,
      );
  }
  if (problems.length > 0) return problems;
  try {
    // Its other rules (`*` mixed with ids, an empty list) in its own words.
    parseAccessConfig(raw.ALLOWED_USERS, raw.ADMINS);
  } catch (error) {
    problems.push((error as Error).message);
  }
  return problems;
}

/** Discord server (guild) ids are snowflakes, like user ids. */
const DISCORD_GUILD_ID = /^\d{17,20}$/;

/**
 * DISCORD_GUILD_ID as a list: the home servers, in the order given, each once. Commas or
 * blanks separate them. Empty: no server is named (every server the bot is in counts).
 */
export function discordGuildIds(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(/[\s,]+/).filter(Boolean))];
}

/**
 * Every entry must be a server id: a name or a mistyped id would match no server, and the
 * bot would then treat everyone, even the operator's own server, as outsiders.
 */
function discordGuildProblems(raw: RawSettings): string[] {
  const bad = discordGuildIds(raw.DISCORD_GUILD_ID).filter((id) => !DISCORD_GUILD_ID.test(id));
  if (bad.length === 0) return [];
  return [
    `DISCORD_GUILD_ID: not server ids: ${bad.join(', ')}. Discord server ids are 17–20 digits, comma-separated for several (in Discord: Settings → Advanced → Developer Mode on, then right-click the server → Copy Server ID)`,
  ];
}

function disabledToolProblems(raw: RawSettings): string[] {
  const known: readonly string[] = [...BUILTIN_TOOL_NAMES, ...FILE_TOOL_NAMES, SCHEDULE_TOOL_NAME];
  const unknown = disabledToolNames(raw.DISABLED_TOOLS).filter((name) => !known.includes(name));
  if (unknown.length === 0) return [];
  return [
    `DISABLED_TOOLS: unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (the built-in tools are ${known.join(', ')})`,
  ];
}

/** DISABLED_TOOLS as a list of names. */
export function disabledToolNames(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter(Boolean);
}

/** The schemes src/store/keyv-factory.ts opens. */
const STORE_SCHEMES = ['sqlite', 'memory', 'redis', 'rediss', 'postgres', 'postgresql', 'mysql', 'mongodb'];

function storeUrlProblems(raw: RawSettings): string[] {
  const url = raw.STORE_URL?.trim();
  const scheme = url?.match(/^([a-z][a-z0-9+.-]*):\/\//i)?.[1]?.toLowerCase();
  // No scheme at all is the schema's to report.
  if (!url || !scheme) return [];
  if (!STORE_SCHEMES.includes(scheme))
    return [
      `STORE_URL: unsupported scheme "${scheme}://" (use sqlite://, memory://, redis://, postgresql://, mysql:// or mongodb://)`,
    ];
  if (scheme === 'sqlite' && url.length === 'sqlite://'.length)
    return ['STORE_URL: sqlite:// needs a file path, e.g. sqlite://data/bot.sqlite'];
  const coordination = raw.COORDINATION_URL?.trim();
  if (coordination && url !== coordination) {
    return [
      'STORE_URL: with COORDINATION_URL set, conversations are kept in that same Redis (its writes are checked against the session leases there): leave STORE_URL unset or give it the same URL',
    ];
  }
  return [];
}

// ---------------------------------------------------------------------------------------
// Start checks
// ---------------------------------------------------------------------------------------

const KEY_OF: Record<VendorName, { key: string; baseUrl: string; vendor: string }> = {
  openai: { key: 'OPENAI_API_KEY', baseUrl: 'OPENAI_BASE_URL', vendor: 'OpenAI' },
  anthropic: { key: 'ANTHROPIC_API_KEY', baseUrl: 'ANTHROPIC_BASE_URL', vendor: 'Anthropic' },
};

/**
 * What running the bot needs beyond well-formed values: a model, the key of every provider
 * a configured model uses, and a complete Slack setup. A provider with a base URL set may
 * go without a key: a local OpenAI-compatible server (Ollama, LM Studio, vLLM) needs none,
 * and a proxy in front of Anthropic may hold the key itself; `npm run doctor` then shows
 * whether the server accepts the bot. The built-in demo model (`MODEL=demo`) needs nothing.
 */
export function startProblems(raw: RawSettings): string[] {
  const problems = [...slackProblems(raw)];
  if (!raw.MODEL?.trim()) problems.push('MODEL: missing (e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-6)');
  const users = new Map<ProviderName, string[]>();
  for (const { variable, name } of modelNames(raw)) {
    const judged = judgeModelName(name, raw);
    if (!('provider' in judged)) continue; // reported by the value checks
    const { provider } = judged;
    users.set(provider, [...(users.get(provider) ?? []), `${variable}=${name}`]);
  }
  for (const [provider, uses] of users) {
    if (provider === 'demo') continue;
    const { key, baseUrl, vendor } = KEY_OF[provider];
    if (raw[key] || raw[baseUrl]) continue;
    problems.push(
      `${key}: missing, and ${[...new Set(uses)].join(', ')} uses ${vendor} (set the key; or ${baseUrl} for a server that needs none)`,
    );
  }
  return problems;
}

/** The start checks apply once a chat platform is configured: then the bot is meant to run. */
export function wantsToRun(raw: RawSettings): boolean {
  return slackConfigured(raw) || discordConfigured(raw);
}

// ---------------------------------------------------------------------------------------
// The schema's issues, in words
// ---------------------------------------------------------------------------------------

/**
 * One zod issue as a line naming the variable. The schema's own messages (`must be a bot
 * token (xoxb-…)`) are kept; zod's defaults ("Invalid input: expected number, received NaN")
 * are replaced by what the variable takes. Values are quoted only for numbers and choices:
 * a malformed URL or token may be a secret pasted into the wrong variable.
 */
export function describeIssue(issue: z.core.$ZodIssue, field: z.ZodType | undefined, raw: RawSettings): string {
  const variable = issue.path.map(String).join('.');
  const given = raw[variable];
  const got = given !== undefined ? ` (got "${given.length > 40 ? `${given.slice(0, 40)}…` : given}")` : '';
  const number = field ? numberSchema(field) : undefined;
  if (number) return `${variable}: must be ${describeNumber(number)}${got}`;
  if (issue.code === 'invalid_value') return `${variable}: must be one of ${issue.values.map(String).join(', ')}${got}`;
  if (!/^(Invalid|Too (small|big))\b/.test(issue.message)) return `${variable}: ${issue.message}`;
  if (issue.code === 'invalid_format') return `${variable}: is not in the expected format (${issue.format})`;
  return `${variable}: is not valid (${issue.message})`;
}

interface NumberChecks {
  int: boolean;
  min?: { value: number; inclusive: boolean };
  max?: { value: number; inclusive: boolean };
}

/** The number a field takes under its default / optional wrappers, with its bounds. */
function numberSchema(field: z.ZodType): NumberChecks | undefined {
  let schema = field as z.ZodType & { unwrap?: () => z.ZodType };
  while (schema.unwrap && schema.def.type !== 'number') schema = schema.unwrap();
  if (schema.def.type !== 'number') return undefined;
  const checks: NumberChecks = { int: false };
  for (const check of (schema.def as { checks?: { _zod: { def: Record<string, unknown> } }[] }).checks ?? []) {
    const def = check._zod.def;
    if (def.check === 'number_format' && String(def.format).includes('int')) checks.int = true;
    if (def.check === 'greater_than') checks.min = { value: Number(def.value), inclusive: Boolean(def.inclusive) };
    if (def.check === 'less_than') checks.max = { value: Number(def.value), inclusive: Boolean(def.inclusive) };
  }
  return checks;
}

function describeNumber({ int, min, max }: NumberChecks): string {
  const kind = int ? 'a whole number' : 'a number';
  // Integers' implicit upper bound (MAX_SAFE_INTEGER) says nothing to a person.
  const upper = max && max.value < Number.MAX_SAFE_INTEGER ? max : undefined;
  if (min && upper && min.inclusive && upper.inclusive) return `${kind} from ${min.value} to ${upper.value}`;
  const bounds = [
    ...(min ? [min.inclusive ? `at least ${min.value}` : `above ${min.value}`] : []),
    ...(upper ? [upper.inclusive ? `at most ${upper.value}` : `below ${upper.value}`] : []),
  ];
  return bounds.length > 0 ? `${kind} ${bounds.join(' and ')}` : kind;
}
