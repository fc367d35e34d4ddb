// Which model answers and how the bot reaches its provider: the model's name, the models a
// thread may switch to, and each provider's key and base URL.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { httpUrl } from './setting-values.js';

export const providerSettings = {
  MODEL: z
    .string()
    .trim()
    .min(1)
    .optional()
    .register(settingDocs, {
      section: 'Model and providers',
      description:
        'the model, as `provider:model` (e.g. `openai:gpt-4.1`, `anthropic:claude-sonnet-4-6`); a bare id goes to ' +
        'OpenAI, or to Anthropic when it starts with `claude`. Any name works: one the bot does not know gets ' +
        'safe defaults (no images, a 32k window for OpenAI-compatible servers). `demo` is the built-in demo model ' +
        '(scripted answers, no AI, no key): what `npm run playground` runs without `MODEL`; `npm start` runs it ' +
        'only when named, with a warning at start, e.g. to check a Slack or Discord setup before you have a key',
      unset: 'none (`npm start` refuses to start without it)',
    }),
  MODELS: z.string().optional().register(settingDocs, {
    section: 'Model and providers',
    description: 'the models `/model` may switch a thread to, comma-separated `provider:model`',
    unset: '`MODEL` and `COMPACTION_MODEL`',
  }),
  OPENAI_API_KEY: z.string().min(1).optional().register(settingDocs, {
    section: 'Model and providers',
    description: 'OpenAI key (a local compatible server needs none)',
    unset: 'none',
  }),
  OPENAI_BASE_URL: httpUrl('http://localhost:11434/v1').optional().register(settingDocs, {
    section: 'Model and providers',
    description:
      'any OpenAI-compatible server: Ollama `http://localhost:11434/v1`, vLLM, LM Studio, OpenRouter, a proxy',
    unset: 'OpenAI',
  }),
  ANTHROPIC_API_KEY: z.string().min(1).optional().register(settingDocs, {
    section: 'Model and providers',
    description: 'Anthropic key',
    unset: 'none',
  }),
  ANTHROPIC_BASE_URL: httpUrl('https://api.anthropic.com (without /v1)').optional().register(settingDocs, {
    section: 'Model and providers',
    description: 'Anthropic API base URL, without `/v1` (proxies, gateways)',
    unset: 'Anthropic',
  }),
};
