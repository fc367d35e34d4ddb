// Model names as users write them: `provider:model` (`openai:gpt-4.1`,
// `anthropic:claude-sonnet-4-6`). A bare id goes to the default provider. Model ids may
// themselves contain colons (`ollama` tags like `llama3.1:8b`), so only a known provider
// prefix is split off.
export const PROVIDER_NAMES = ['openai', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface ModelRef {
  provider: ProviderName;
  /** The id the vendor's API expects. */
  model: string;
}

export function parseModelRef(name: string, defaultProvider: ProviderName = 'openai'): ModelRef {
  const trimmed = name.trim();
  if (!trimmed) throw new Error('a model name is required (e.g. openai:gpt-4.1)');
  const colon = trimmed.indexOf(':');
  if (colon > 0) {
    const prefix = trimmed.slice(0, colon).toLowerCase();
    const rest = trimmed.slice(colon + 1).trim();
    if ((PROVIDER_NAMES as readonly string[]).includes(prefix)) {
      if (!rest) throw new Error(`"${name}" names a provider but no model (e.g. ${prefix}:<model id>)`);
      return { provider: prefix as ProviderName, model: rest };
    }
  }
  return { provider: defaultProvider, model: trimmed };
}

export function formatModelRef(ref: ModelRef): string {
  return `${ref.provider}:${ref.model}`;
}
