import { describe, expect, it } from 'vitest';
import { modelMenu } from '../../src/providers/model-menu.js';

describe('MODELS: the models /model may choose', () => {
  it('defaults to MODEL and COMPACTION_MODEL, compared as the resolver reads them', () => {
    const menu = modelMenu({ defaultModel: 'gpt-4.1', compactionModel: 'claude-haiku-4-5' });
    expect(menu.available).toEqual(['openai:gpt-4.1', 'anthropic:claude-haiku-4-5']);
    expect(menu.choose('openai:gpt-4.1')).toEqual({ ok: true, model: 'openai:gpt-4.1' });
    expect(menu.choose(' gpt-4.1 ')).toEqual({ ok: true, model: 'openai:gpt-4.1' });
    expect(menu.choose('anthropic:claude-haiku-4-5')).toEqual({ ok: true, model: 'anthropic:claude-haiku-4-5' });
  });

  it('refuses anything else, listing what is available', () => {
    const menu = modelMenu({ models: 'openai:gpt-4.1, openai:gpt-4o-mini', defaultModel: 'openai:gpt-4.1' });
    expect(menu.choose('openai:o1-pro')).toEqual({
      ok: false,
      reason: 'That model is not available here. Available: `openai:gpt-4.1`, `openai:gpt-4o-mini` (MODELS).',
    });
    expect(menu.choose('openai:<!channel>')).toMatchObject({ ok: false });
    expect(menu.choose('anthropic:')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('names a provider but no model'),
    });
  });

  it('a malformed MODELS entry stops the start with its name', () => {
    expect(() => modelMenu({ models: 'openai:gpt-4.1, anthropic:', defaultModel: 'openai:gpt-4.1' })).toThrow(
      /^MODELS: "anthropic:" names a provider but no model/,
    );
  });
});
