// Picking the provider for a model name. `openai:gpt-4.1` and `anthropic:claude-sonnet-4-6`
// name their vendor; a bare id goes to Anthropic when it starts with `claude`, else to
// the default provider (OpenAI, which also covers every OpenAI-compatible server through
// OPENAI_BASE_URL). One client per vendor, created on first use, so a session can switch
// models across vendors without reconnecting. `demo` is the built-in scripted model
// (demo-provider.ts), which needs neither.
import type { Config } from '../config.js';
import { SummarizingCompactor, type Provider, type ProviderResolver } from '../engine/index.js';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic.js';
import { DemoProvider, type DemoProviderOptions } from './demo-provider.js';
import { resolveModelRef, type ProviderName } from './model-ref.js';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai.js';

export interface ProviderSettings {
  openai?: OpenAIProviderOptions;
  anthropic?: AnthropicProviderOptions;
  demo?: DemoProviderOptions;
  defaultProvider?: ProviderName;
}

export function createProviderResolver(settings: ProviderSettings = {}): ProviderResolver {
  const instances = new Map<ProviderName, Provider>();
  const make = (name: ProviderName): Provider => {
    switch (name) {
      case 'anthropic':
        return new AnthropicProvider(settings.anthropic);
      case 'openai':
        return new OpenAIProvider(settings.openai);
      case 'demo':
        return new DemoProvider(settings.demo);
    }
  };
  return (model) => {
    const { provider } = resolveModelRef(model, settings.defaultProvider);
    let instance = instances.get(provider);
    if (!instance) {
      instance = make(provider);
      instances.set(provider, instance);
    }
    return instance;
  };
}

/** Provider settings from the validated configuration. */
export function providerSettingsFrom(config: Config): ProviderSettings {
  const stallTimeoutMs = config.PROVIDER_STALL_TIMEOUT_MS;
  return {
    openai: { apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL, stallTimeoutMs },
    anthropic: {
      apiKey: config.ANTHROPIC_API_KEY,
      baseURL: config.ANTHROPIC_BASE_URL,
      stallTimeoutMs,
      thinking: config.ANTHROPIC_THINKING_BUDGET ? { budgetTokens: config.ANTHROPIC_THINKING_BUDGET } : undefined,
    },
  };
}

/** The compactor the configuration asks for, summarising with COMPACTION_MODEL if set. */
export function compactorFrom(config: Config, resolve: ProviderResolver): SummarizingCompactor {
  const model = config.COMPACTION_MODEL;
  return new SummarizingCompactor({
    threshold: config.COMPACTION_THRESHOLD,
    capTokens: config.COMPACTION_CAP_TOKENS,
    summarizer: model ? { provider: resolve(model), model } : undefined,
  });
}

export { resolveModelRef };
export type { ProviderName };
