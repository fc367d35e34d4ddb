// What well-known models can do. A model this table does not know still works, on safe
// fallbacks chosen per vendor (a new model name needs no code change):
// - OpenAI and every OpenAI-compatible server (Ollama, vLLM, LM Studio may run anything):
//   tools on (every serious chat model has them, and a server that lacks them says so), no
//   vision and no native PDF (the outbound view then sends a placeholder instead of bytes the
//   model would reject), and a modest context window, so compaction starts early, not late.
// - Anthropic: every Claude model reads images and PDFs and has at least a 200k window, so a
//   Claude newer than this table (claude-sonnet-5-5, say) is treated as one.
// - The demo model (demo-provider.ts): tools, no media (it reads only text), and a window
//   large enough that compaction, which would ask the demo for a summary, is rare.
// The output cap is not a capability: Anthropic calls send max_tokens 8192 (anthropic.ts),
// which every current Claude model accepts; OpenAI calls send none (the server decides).
import type { ModelCapabilities } from '../engine/index.js';
import type { ProviderName } from './model-ref.js';

interface CapabilityRule {
  provider: ProviderName;
  /** Matches the model id (prefix match, so dated snapshots inherit). */
  prefix: string;
  capabilities: ModelCapabilities;
}

const full = (contextWindow: number, pdf = false): ModelCapabilities => ({
  tools: true,
  vision: true,
  pdf,
  contextWindow,
});

// PDFs: only Claude models get a shared PDF as a document (Anthropic `document` blocks). OpenAI
// models get its extracted text (src/files/): Chat Completions takes a PDF only as a `file`
// part that compatible servers refuse and that is billed as an image per page, while the text
// reads everywhere and costs what it weighs. A PDF part already in a transcript goes the same way.

// Longest prefix wins, so order does not matter. Context windows are the vendors' figures.
const RULES: CapabilityRule[] = [
  { provider: 'openai', prefix: 'gpt-4.1', capabilities: full(1_047_576) },
  { provider: 'openai', prefix: 'gpt-4o', capabilities: full(128_000) },
  { provider: 'openai', prefix: 'gpt-5', capabilities: full(400_000) },
  { provider: 'openai', prefix: 'o3', capabilities: full(200_000) },
  { provider: 'openai', prefix: 'o4-mini', capabilities: full(200_000) },
  {
    provider: 'openai',
    prefix: 'gpt-3.5-turbo',
    capabilities: { tools: true, vision: false, pdf: false, contextWindow: 16_385 },
  },
  { provider: 'anthropic', prefix: 'claude-opus-4', capabilities: full(200_000, true) },
  { provider: 'anthropic', prefix: 'claude-sonnet-4', capabilities: full(200_000, true) },
  { provider: 'anthropic', prefix: 'claude-haiku-4', capabilities: full(200_000, true) },
  { provider: 'anthropic', prefix: 'claude-3-7-sonnet', capabilities: full(200_000, true) },
  { provider: 'anthropic', prefix: 'claude-3-5-sonnet', capabilities: full(200_000, true) },
  { provider: 'anthropic', prefix: 'claude-3-5-haiku', capabilities: full(200_000, false) },
];

/** @internal */
export const FALLBACK_CAPABILITIES: Record<ProviderName, ModelCapabilities> = {
  // An OpenAI-compatible server (Ollama, vLLM, LM Studio) may run anything: assume little.
  openai: { tools: true, vision: false, pdf: false, contextWindow: 32_768 },
  anthropic: full(200_000, true),
  demo: { tools: true, vision: false, pdf: false, contextWindow: 128_000 },
};

export function capabilitiesOf(provider: ProviderName, model: string): ModelCapabilities {
  const id = model.toLowerCase();
  let best: CapabilityRule | undefined;
  for (const rule of RULES) {
    if (rule.provider === provider && id.startsWith(rule.prefix) && rule.prefix.length > (best?.prefix.length ?? -1))
      best = rule;
  }
  return best?.capabilities ?? FALLBACK_CAPABILITIES[provider];
}

// ---- reasoning sent back -------------------------------------------------------------

// DeepSeek's thinking mode (tool calls in thinking mode came with V3.2) demands that the
// `reasoning_content` of every answer in a tool loop be sent back on that assistant message,
// in every later request: without it the API answers 400 "The reasoning_content in the
// thinking mode must be passed back to the API". Everywhere else reasoning is shown, never
// replayed, and strict servers (OpenAI, Groq) refuse a message key they do not know, so it
// goes only where it is demanded.
//
// How it is known, decided here: by model name, matched on the id after any `vendor/`
// prefix (OpenRouter's `deepseek/…`, Hugging Face's `deepseek-ai/…`):
// - `deepseek-reasoner` (DeepSeek's name for its thinking mode), `deepseek-flash` and
//   `deepseek-pro` (its current names, thinking by default), and `deepseek-v<N>` from 3.2 on
//   (`deepseek-v4-pro`, `deepseek-v4.1-flash`, `DeepSeek-V3.2`), thinking by default too;
// - `deepseek-chat` (the non-thinking mode) and older or distilled models (`deepseek-r1…`,
//   which had no tools in thinking mode) only when the call's settings turn thinking on
//   (`thinking: {type: "enabled"}`, DeepSeek's own switch).
// No setting: a name this misses gets DeepSeek's 400 in the thread, which names the field;
// a new DeepSeek name belongs in this rule.
const THINKING_DEEPSEEK = /^deepseek-(?:reasoner|flash|pro)\b/;
const DEEPSEEK_VERSION = /^deepseek-v(\d+)(?:\.(\d+))?/;

/** Whether calls to this model must carry each answer's `reasoning_content` back (see above). */
export function replaysReasoning(model: string, settings?: Record<string, unknown>): boolean {
  const id = (model.split('/').at(-1) ?? model).toLowerCase();
  if (!id.startsWith('deepseek')) return false;
  if (THINKING_DEEPSEEK.test(id)) return true;
  const version = DEEPSEEK_VERSION.exec(id);
  if (version) {
    const major = Number(version[1]);
    const minor = Number(version[2] ?? 0);
    if (major > 3 || (major === 3 && minor >= 2)) return true;
  }
  const thinking = settings?.thinking;
  return typeof thinking === 'object' && thinking !== null && (thinking as { type?: unknown }).type === 'enabled';
}
