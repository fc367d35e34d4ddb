import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { SummarizingCompactor } from '../../src/engine/index.js';
import {
  compactorFrom,
  createProviderResolver,
  providerSettingsFrom,
  resolveModelRef,
} from '../../src/providers/index.js';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { parseModelRef } from '../../src/providers/model-ref.js';
import { capabilitiesOf, FALLBACK_CAPABILITIES } from '../../src/providers/capabilities.js';

describe('model names', () => {
  it('split a known provider prefix and send bare ids to the default provider', () => {
    expect(parseModelRef('openai:gpt-4.1')).toEqual({ provider: 'openai', model: 'gpt-4.1' });
    expect(parseModelRef('Anthropic:claude-sonnet-4-6')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-6' });
    expect(parseModelRef('gpt-4o-mini')).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    // Ollama tags carry colons of their own.
    expect(parseModelRef('llama3.1:8b')).toEqual({ provider: 'openai', model: 'llama3.1:8b' });
    expect(parseModelRef('openai:qwen2.5:14b')).toEqual({ provider: 'openai', model: 'qwen2.5:14b' });
    expect(() => parseModelRef('  ')).toThrow(/model name is required/);
    expect(() => parseModelRef('anthropic:')).toThrow(/names a provider but no model/);
  });

  it('send a bare claude id to Anthropic, unless a prefix says otherwise', () => {
    expect(resolveModelRef('claude-haiku-4-5')).toEqual({ provider: 'anthropic', model: 'claude-haiku-4-5' });
    expect(resolveModelRef('openai:claude-proxy')).toEqual({ provider: 'openai', model: 'claude-proxy' });
  });

  it('know the capabilities of well-known models and fall back safely for others', () => {
    expect(capabilitiesOf('openai', 'gpt-4.1-2025-04-14')).toMatchObject({ vision: true, contextWindow: 1_047_576 });
    expect(capabilitiesOf('anthropic', 'claude-sonnet-4-6')).toMatchObject({
      tools: true,
      vision: true,
      pdf: true,
      contextWindow: 200_000,
    });
    expect(capabilitiesOf('openai', 'llama3.1:8b')).toEqual(FALLBACK_CAPABILITIES.openai);
    expect(FALLBACK_CAPABILITIES.openai).toMatchObject({ tools: true, vision: false, pdf: false });
  });
});

describe('the provider resolver', () => {
  it('makes one provider per vendor, on first use', () => {
    const resolve = createProviderResolver({ openai: { apiKey: 'k' }, anthropic: { apiKey: 'k' } });
    const a = resolve('openai:gpt-4.1');
    expect(a).toBeInstanceOf(OpenAIProvider);
    expect(resolve('gpt-4o')).toBe(a);
    const b = resolve('anthropic:claude-sonnet-4-6');
    expect(b).toBeInstanceOf(AnthropicProvider);
    expect(resolve('claude-opus-4-7')).toBe(b);
    expect(b.capabilities('anthropic:claude-sonnet-4-6').contextWindow).toBe(200_000);
  });

  it('is configured from the environment, compaction included', () => {
    const config = loadConfig({
      OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_THINKING_BUDGET: '2048',
      PROVIDER_STALL_TIMEOUT_MS: '5000',
      COMPACTION_MODEL: 'anthropic:claude-haiku-4-5',
      COMPACTION_THRESHOLD: '0.5',
    });
    const settings = providerSettingsFrom(config);
    expect(settings.openai).toMatchObject({ baseURL: 'http://127.0.0.1:11434/v1', stallTimeoutMs: 5000 });
    expect(settings.anthropic).toMatchObject({ apiKey: 'sk-ant-test', thinking: { budgetTokens: 2048 } });
    const compactor = compactorFrom(config, createProviderResolver(settings));
    expect(compactor).toBeInstanceOf(SummarizingCompactor);
    expect(
      compactor.triggerTokens({ capabilities: { tools: true, vision: true, pdf: true, contextWindow: 100_000 } }),
    ).toBe(50_000);
  });
});
