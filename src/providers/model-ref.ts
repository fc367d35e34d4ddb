// Model names as users write them: `provider:model` (`openai:gpt-4.1`,
// `anthropic:claude-sonnet-4-6`). A bare id goes to the default provider. Model ids may
// themselves contain colons (`ollama` tags like `llama3.1:8b`), so only a known provider
// prefix is split off.
//
// One name is not a vendor's: `demo`, the built-in scripted model (demo-provider.ts), which
// needs no key and no server. It is the whole name (`demo`, or `demo:demo` as it is
// written back); `demo:<anything else>` is refused rather than sent to OpenAI as a model id.
/** The vendors a `provider:` prefix may name. */
export const PROVIDER_NAMES = ['openai', 'anthropic'] as const;
export type VendorName = (typeof PROVIDER_NAMES)[number];
export type ProviderName = VendorName | 'demo';

/** `MODEL=demo`: the built-in scripted model, no AI. */
export const DEMO_MODEL = 'demo';

export interface ModelRef {
  provider: ProviderName;
  /** The id the vendor's API expects. */
  model: string;
}

export function parseModelRef(name: string, defaultProvider: ProviderName = 'openai'): ModelRef {
  const trimmed = name.trim();
  if (!trimmed) throw new Error('a model name is required (e.g. openai:gpt-4.1)');
  const lower = trimmed.toLowerCase();
  if (lower === DEMO_MODEL || lower === `${DEMO_MODEL}:${DEMO_MODEL}`) return { provider: 'demo', model: DEMO_MODEL };
  const colon = trimmed.indexOf(':');
  if (colon > 0) {
    const prefix = trimmed.slice(0, colon).toLowerCase();
    const rest = trimmed.slice(colon + 1).trim();
    if (prefix === DEMO_MODEL) throw new Error(`"${name}": the built-in demo model is named just "${DEMO_MODEL}"`);
    if ((PROVIDER_NAMES as readonly string[]).includes(prefix)) {
      if (!rest) throw new Error(`"${name}" names a provider but no model (e.g. ${prefix}:<model id>)`);
      return { provider: prefix as VendorName, model: rest };
    }
  }
  return { provider: defaultProvider, model: trimmed };
}

export function formatModelRef(ref: ModelRef): string {
  return ref.provider === 'demo' ? DEMO_MODEL : `${ref.provider}:${ref.model}`;
}

/** Whether a model name is the built-in demo model. */
export function isDemoModel(name: string | undefined): boolean {
  if (!name?.trim()) return false;
  try {
    return parseModelRef(name).provider === 'demo';
  } catch {
    return false;
  }
}

/** A model name resolved to its vendor, with bare `claude-…` ids going to Anthropic. */
export function resolveModelRef(name: string, defaultProvider: ProviderName = 'openai'): ModelRef {
  const ref = parseModelRef(name, defaultProvider);
  const explicit = name.trim().toLowerCase().startsWith(`${ref.provider}:`);
  if (!explicit && ref.model.toLowerCase().startsWith('claude')) return { provider: 'anthropic', model: ref.model };
  return ref;
}
