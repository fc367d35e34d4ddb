// Configuration from the environment (and `.env`), validated in one place. Every problem
// is reported at once, in one error, so a user fixes their setup in one go instead of
// discovering variables one crash at a time: the schema's issues, reworded, and the checks
// of src/config-checks.ts (model names, provider keys, user ids, tool names), in the order
// the variables are declared here. Each variable's schema, and what the settings page says of
// it, is in src/config/, one file per area.
import { z } from 'zod';
import { describeIssue, startProblems, valueProblems, wantsToRun, type RawSettings } from './config-checks.js';
import { accessSettings } from './config/access-settings.js';
import { agentSettings } from './config/agent-settings.js';
import { listenerSettings } from './config/listener-settings.js';
import { logSettings } from './config/log-settings.js';
import { platformSettings } from './config/platform-settings.js';
import { providerSettings } from './config/provider-settings.js';
import { sandboxSettings } from './config/sandbox-settings.js';
import { scheduleSettings } from './config/schedule-settings.js';
import { spendSettings } from './config/spend-settings.js';
import { storeSettings } from './config/store-settings.js';
import { surfaceSettings } from './config/surface-settings.js';
import { traceSettings } from './config/trace-settings.js';
import { turnSettings } from './config/turn-settings.js';
import { workspaceSettings } from './config/workspace-settings.js';

export { discordConfigured, discordGuildIds, slackConfigured } from './config-checks.js';

/**
 * Every setting, each declared with its description for the settings page in src/config/.
 * The order here is the order problems are reported in (inDeclarationOrder): models, then
 * limits, then platforms. The two log settings sit apart (LOG_FORMAT after the traces,
 * LOG_LEVEL last) because that is where a user's problems with them have been listed.
 */
export const ConfigSchema = z.object({
  ...providerSettings,
  ...spendSettings,
  ...turnSettings,
  ...storeSettings,
  ...workspaceSettings,
  ...accessSettings,
  ...sandboxSettings,
  ...agentSettings,
  ...scheduleSettings,
  ...platformSettings,
  ...listenerSettings,
  ...traceSettings,
  LOG_FORMAT: logSettings.LOG_FORMAT,
  ...surfaceSettings,
  LOG_LEVEL: logSettings.LOG_LEVEL,
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
  const raw: RawSettings = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const parsed = ConfigSchema.safeParse(raw);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => describeIssue(issue, fieldSchema(issue.path[0]), raw));
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
  return problems
    .map((problem, at) => ({ problem, at }))
    .sort((a, b) => rank(a.problem) - rank(b.problem) || a.at - b.at)
    .map(({ problem }) => problem);
}

/** Where conversations live: COORDINATION_URL's Redis in cluster mode, else STORE_URL. */
export function storeUrlOf(config: Pick<Config, 'STORE_URL' | 'COORDINATION_URL'>): string {
  return config.COORDINATION_URL ?? config.STORE_URL;
}

/** Cluster mode: the store is a Redis that several instances share. */
export function clustered(config: Pick<Config, 'STORE_URL' | 'COORDINATION_URL'>): boolean {
  return /^rediss?:\/\//i.test(storeUrlOf(config));
}
