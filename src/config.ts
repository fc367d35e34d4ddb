// Configuration from the environment (and `.env`), validated in one place. Every problem
// is reported at once, in one error, so a user fixes their setup in one go instead of
// discovering variables one crash at a time.
import { z } from 'zod';

const positiveInt = z.coerce.number().int().positive();

const ratio = z.coerce.number().gt(0).max(1);

export const ConfigSchema = z.object({
  /** `provider:model`; a bare id goes to OpenAI (or Anthropic for `claude-…`). */
  MODEL: z.string().trim().min(1).optional(),
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
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type Config = z.infer<typeof ConfigSchema>;

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
