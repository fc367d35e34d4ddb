// A model name the code has never seen (a newer Claude, a local model behind Ollama, a
// fine-tune) must work on sensible defaults, with no code change: sent to its vendor as
// written, with a context window that starts compaction in time and no feature the model may
// lack. And the names the docs and messages suggest must be ones the SDKs do not warn about.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { ProviderChunk, ProviderRequest } from '../../src/engine/index.js';
import { capabilitiesOf, FALLBACK_CAPABILITIES } from '../../src/providers/capabilities.js';
import { compactorFrom, createProviderResolver } from '../../src/providers/index.js';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';

const ROOT = new URL('../../', import.meta.url).pathname;

async function drain(stream: AsyncIterable<ProviderChunk>): Promise<string> {
  let text = '';
  for await (const chunk of stream) if (chunk.type === 'text_delta') text += chunk.text;
  return text;
}

function ask(model: string): ProviderRequest {
  return { model, messages: [{ role: 'user', content: 'hi' }], tools: [] };
}

describe('a model the capability table does not know', () => {
  it('a Claude newer than the table is treated as a Claude: tools, images, PDFs, a 200k window', () => {
    // Names from the SDK's own model list that no rule of the table names.
    for (const model of ['claude-sonnet-5-5', 'claude-opus-5', 'claude-fable-5-2']) {
      expect(capabilitiesOf('anthropic', model)).toEqual({
        tools: true,
        vision: true,
        pdf: true,
        contextWindow: 200_000,
      });
    }
  });

  it('an unknown OpenAI-compatible model gets tools, no vision or PDF, and a modest window', () => {
    for (const model of ['llama3.1:8b', 'qwen2.5-coder:14b', 'ft:my-org:custom-model']) {
      expect(capabilitiesOf('openai', model)).toEqual(FALLBACK_CAPABILITIES.openai);
    }
    expect(FALLBACK_CAPABILITIES.openai).toEqual({ tools: true, vision: false, pdf: false, contextWindow: 32_768 });
  });

  it('dated snapshots and other spellings of a known model inherit its entry', () => {
    expect(capabilitiesOf('openai', 'gpt-5.4-mini-2026-03-17')).toEqual(capabilitiesOf('openai', 'gpt-5'));
    expect(capabilitiesOf('openai', 'GPT-4.1')).toMatchObject({ contextWindow: 1_047_576 });
    expect(capabilitiesOf('anthropic', 'claude-haiku-4-5-20251001')).toMatchObject({
      vision: true,
      contextWindow: 200_000,
    });
  });

  it('compaction of an unknown local model starts at the threshold of its modest window, not at the cap', () => {
    const config = loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    const resolve = createProviderResolver({ openai: { baseURL: config.OPENAI_BASE_URL } });
    const compactor = compactorFrom(config, resolve);
    const capabilities = resolve('openai:my-local-model').capabilities('openai:my-local-model');
    expect(compactor.triggerTokens({ capabilities })).toBeCloseTo(0.8 * 32_768, 5);
  });
});

describe('an unknown model name on the wire', () => {
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAI;
  beforeEach(async () => {
    anthropic = await new FakeAnthropic().start();
    openai = await new FakeOpenAI().start();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await anthropic.stop();
    await openai.stop();
  });

  it('goes to Anthropic as written, with the default output cap, and the SDK warns about nothing', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    anthropic.replyText('hello from a new model');
    const provider = new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL: anthropic.baseURL, maxRetries: 0 });
    expect(await drain(provider.stream(ask('anthropic:claude-fable-5-2'), new AbortController().signal))).toBe(
      'hello from a new model',
    );
    expect(anthropic.requests[0]?.body).toMatchObject({ model: 'claude-fable-5-2', max_tokens: 8192 });
    expect(warn).not.toHaveBeenCalled();
  });

  it('goes to an OpenAI-compatible server as written, with no output cap of ours', async () => {
    openai.replyText('hello from a local model');
    const provider = new OpenAIProvider({ apiKey: 'sk-test', baseURL: openai.baseURL, maxRetries: 0 });
    expect(await drain(provider.stream(ask('openai:qwen2.5:14b'), new AbortController().signal))).toBe(
      'hello from a local model',
    );
    const body = openai.bodies[0] as unknown as Record<string, unknown>;
    expect(body.model).toBe('qwen2.5:14b');
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('max_completion_tokens');
  });
});

/** Every Claude model name the docs, the example configuration and the code's messages suggest. */
function suggestedClaudeModels(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  const files = [
    'README.md',
    'CONTRIBUTING.md',
    '.env.example',
    ...pages,
    'manifest/README.md',
    'manifest/discord.md',
  ].map((f) => join(ROOT, f));
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
    );
  // The price and capability tables name older models on purpose: people still run them.
  const tables = ['ops/pricing.ts', 'capabilities.ts'];
  for (const dir of ['src', 'connectors']) {
    files.push(
      ...walk(join(ROOT, dir)).filter(
        (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !tables.some((t) => f.endsWith(t)),
      ),
    );
  }
  const names = new Set<string>();
  for (const file of files.filter((f) => existsSync(f))) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\bclaude-[a-z]+(?:-\d+)+\b/g)) names.add(match[0]);
  }
  return [...names].sort();
}

describe('the model names we suggest', () => {
  let anthropic: FakeAnthropic;
  beforeEach(async () => {
    anthropic = await new FakeAnthropic().start();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await anthropic.stop();
  });

  it('are none the Anthropic SDK prints a deprecation warning for', async () => {
    const names = suggestedClaudeModels();
    expect(names.length).toBeGreaterThan(0);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const provider = new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL: anthropic.baseURL, maxRetries: 0 });
    for (const name of names) {
      anthropic.replyText('ok');
      await drain(provider.stream(ask(`anthropic:${name}`), new AbortController().signal));
    }
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([]);
    // The check can see a warning: the SDK does warn for a deprecated model.
    anthropic.replyText('ok');
    await drain(provider.stream(ask('anthropic:claude-sonnet-4-5'), new AbortController().signal));
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/deprecated/);
  });
});
