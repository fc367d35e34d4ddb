import { describe, expect, it } from 'vitest';
import { ProviderError, type Compactor } from '../../src/engine/index.js';
import { say, type ScriptStep } from '../fakes/scripted-provider.js';
import { collect, engineWith, only, typesOf } from '../support/engine-kit.js';
import { TrimmingCompactor } from '../support/trimming-compactor.js';

const overflow = (): ScriptStep => ({
  error: new ProviderError('context_overflow', "This model's maximum context length is 128000 tokens."),
});

function longHistory(turns: number) {
  const { engine } = engineWith(Array.from({ length: turns }, (_, i) => say(`answer ${i} ${'.'.repeat(400)}`)));
  return engine;
}

describe('compaction inside the loop', () => {
  it('a context overflow compacts and retries instead of showing an error', async () => {
    const seed = longHistory(3);
    for (let i = 0; i < 3; i++) await collect(seed.run(`question ${i}`));
    const { engine, provider } = engineWith([overflow(), say('fits now')], {
      messages: [...seed.messages],
      ports: { compactor: new TrimmingCompactor({ maxTokens: 1_000_000 }) },
    });
    const events = await collect(engine.run('the newest question'));
    expect(typesOf(events)).toEqual([
      'turn_start',
      'compacting',
      'compacted',
      'assistant_delta',
      'assistant_message',
      'turn_end',
    ]);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed', iterations: 2 });
    expect(only(events, 'error')).toEqual([]);
    // The retried call sees the compacted block and then the newest question, verbatim.
    expect(provider.requests[1]!.messages).toEqual([
      { role: 'user', content: expect.stringContaining('<compacted-history>') },
      { role: 'user', content: 'the newest question' },
    ]);
    // The canonical history is whole; the compaction is a notice plus serialisable state.
    expect(engine.messages.filter((m) => m.role === 'user')).toHaveLength(4);
    expect(engine.messages.at(-2)).toMatchObject({ role: 'notice', kind: 'compacted' });
    expect(JSON.parse(JSON.stringify(engine.compaction))).toEqual(engine.compaction);
  });

  it('is progress-guarded: when the boundary cannot move, the overflow ends in the error path', async () => {
    const { engine, provider } = engineWith([overflow(), overflow(), overflow(), overflow()], {
      ports: { compactor: new TrimmingCompactor({ maxTokens: 1_000_000 }) },
    });
    const events = await collect(engine.run('a single enormous message'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'error' });
    expect(only(events, 'error')[0]).toMatchObject({ errorKind: 'context_overflow' });
    expect(provider.requests).toHaveLength(1);
    expect(engine.messages.at(-1)).toMatchObject({ role: 'notice', kind: 'error' });
  });

  it('a model that keeps overflowing still terminates, after each pass moved the boundary', async () => {
    const seed = longHistory(4);
    for (let i = 0; i < 4; i++) await collect(seed.run(`question ${i}`));
    const { engine, provider } = engineWith([overflow(), overflow(), overflow()], {
      messages: [...seed.messages],
      ports: { compactor: new TrimmingCompactor({ maxTokens: 1_000_000 }) },
    });
    const events = await collect(engine.run('newest'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'error' });
    expect(only(events, 'compacted').length).toBeGreaterThanOrEqual(1);
    expect(provider.requests.length).toBe(only(events, 'compacted').length + 1);
  });

  it('the checkpoint compacts before a model call when due, announcing it first', async () => {
    const seed = longHistory(3);
    for (let i = 0; i < 3; i++) await collect(seed.run(`question ${i}`));
    const { engine, provider } = engineWith([say('ok')], {
      messages: [...seed.messages],
      ports: { compactor: new TrimmingCompactor({ maxTokens: 200 }) },
    });
    const events = await collect(engine.run('next'));
    expect(typesOf(events).slice(0, 3)).toEqual(['turn_start', 'compacting', 'compacted']);
    expect(JSON.stringify(provider.requests[0]!.messages[0])).toContain('compacted-history');
  });

  it('a compactor that throws does not break the turn', async () => {
    const broken: Compactor = {
      isDue: () => true,
      compact: async () => {
        throw new Error('summary model down');
      },
    };
    const { engine } = engineWith([say('still answered')], { ports: { compactor: broken } });
    const events = await collect(engine.run('q'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
  });
});
