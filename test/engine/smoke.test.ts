import { describe, expect, it } from 'vitest';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, lowRisk, recordingTool, typesOf } from '../support/engine-kit.js';

describe('smoke', () => {
  it('runs a tool round and answers', async () => {
    const { engine, provider } = engineWith([callTools(call('look', { q: 1 })), say('done')], {
      tools: [recordingTool('look', lowRisk)],
    });
    const events = await collect(engine.run('hi'));
    expect(typesOf(events)).toEqual([
      'turn_start', 'assistant_message', 'tool_proposed', 'tool_started', 'tool_finished', 'iteration_end',
      'assistant_delta', 'assistant_message', 'turn_end',
    ]);
    expect(provider.requests).toHaveLength(2);
    expect(engine.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});
