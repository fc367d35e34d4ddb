// MODELS: the models a thread may switch to with /model. A model costs money and sees the
// thread, so it is chosen from a list the operator wrote, never typed freely. Names are
// compared as the provider resolver reads them (`gpt-4.1` and `openai:gpt-4.1` are one).
import { formatModelRef, type ProviderName } from './model-ref.js';
import { resolveModelRef } from './index.js';

export interface ModelMenuSettings {
  /** MODELS, comma-separated; unset: the default model and the compaction model. */
  models?: string;
  defaultModel: string;
  compactionModel?: string;
  defaultProvider?: ProviderName;
}

export type ModelChoice = { ok: true; model: string } | { ok: false; reason: string };

/** Satisfies the session layer's ModelMenu port (thread-controls.ts). */
export function modelMenu(settings: ModelMenuSettings): {
  available: readonly string[];
  choose(name: string): ModelChoice;
} {
  const canonical = (name: string): string => formatModelRef(resolveModelRef(name, settings.defaultProvider));
  const listed = settings.models?.trim()
    ? settings.models
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)
    : [settings.defaultModel, settings.compactionModel].filter((name): name is string => Boolean(name));
  const available = [
    ...new Set(
      listed.map((name) => {
        try {
          return canonical(name);
        } catch (error) {
          throw new Error(`MODELS: ${error instanceof Error ? error.message : String(error)}`);
        }
      }),
    ),
  ];
  return {
    available,
    choose(name): ModelChoice {
      let wanted: string;
      try {
        wanted = canonical(name);
      } catch (error) {
        return {
          ok: false,
          reason: `${error instanceof Error ? error.message : String(error)}. Available: ${available.join(', ')}.`,
        };
      }
      if (available.includes(wanted)) return { ok: true, model: wanted };
      return {
        ok: false,
        reason: `That model is not available here. Available: ${available.map((model) => `\`${model}\``).join(', ')} (MODELS).`,
      };
    },
  };
}
