// What the engine tells a tool about the people behind its call (ToolContext): who approved it
// when a person was asked (`approval.by`), and whose request the turn answers (`requester`),
// so a tool that acts for someone (schedule_task) knows who.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineTool, type ToolContext } from '../../src/engine/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith } from '../support/engine-kit.js';

function contextRecorder(seen: ToolContext[], metadata: { risk: 'low' | 'high'; category: string }) {
  return defineTool({
    name: 'act',
    description: 'acts for someone',
    schema: z.object({}),
    metadata,
    execute: async (_args, context) => {
      seen.push(context);
      return 'done';
    },
  });
}

describe('the tool context', () => {
  it('names who approved a call and whose request the turn answers', async () => {
    const seen: ToolContext[] = [];
    const { engine } = engineWith([callTools(call('act')), say('ok')], {
      tools: [contextRecorder(seen, { risk: 'high', category: 'write' })],
      ports: { approver: async () => ({ outcome: 'once', by: 'U9' }) },
    });
    await collect(engine.run('do it', { source: { platform: 'slack', userId: 'U1' } }));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ approval: { via: 'human', by: 'U9' }, requester: 'U1' });
  });

  it('a call nobody was asked about names the requester only; a turn from no one names nobody', async () => {
    const seen: ToolContext[] = [];
    const { engine } = engineWith([callTools(call('act')), say('ok'), callTools(call('act')), say('ok')], {
      tools: [contextRecorder(seen, { risk: 'low', category: 'read' })],
    });
    await collect(engine.run('do it', { source: { platform: 'slack', userId: 'U1' } }));
    await collect(engine.run('again'));
    expect(seen[0]).toMatchObject({ approval: { via: 'policy' }, requester: 'U1' });
    expect(seen[0]!.approval).not.toHaveProperty('by');
    // The second turn's request named no one: the first turn's person is not carried over.
    expect(seen[1]).not.toHaveProperty('requester');
  });
});
