import { describe, expect, it } from 'vitest';
import { CUSTOM_ID_MAX, promptCustomId, readCustomId, retryCustomId } from '../../connectors/discord/custom-ids.js';

const ITEM = '0b6f3c1e-5a4d-4c3b-9f2e-1a2b3c4d5e6f';

describe('what a Discord button carries', () => {
  it('a prompt button holds the item and the choice, and reads back', () => {
    const id = promptCustomId(ITEM, 'always_command_all', 4)!;
    expect(id).toBe(`p:${ITEM}:always_command_all`);
    expect(readCustomId(id)).toEqual({ kind: 'prompt', item: ITEM, choice: 'always_command_all' });
  });

  it('a choice too long for 100 characters is carried by its index', () => {
    const option = 'a very long answer to the question, '.repeat(4);
    const id = promptCustomId(ITEM, option, 7)!;
    expect(id.length).toBeLessThanOrEqual(CUSTOM_ID_MAX);
    expect(readCustomId(id)).toEqual({ kind: 'prompt_index', item: ITEM, index: 7 });
  });

  it('a choice may hold colons; Retry carries the session id', () => {
    expect(readCustomId(`p:${ITEM}:a:b`)).toEqual({ kind: 'prompt', item: ITEM, choice: 'a:b' });
    const session = 'discord:123456789012345678:223456789012345678:323456789012345678';
    expect(readCustomId(retryCustomId(session)!)).toEqual({ kind: 'retry', session });
  });

  it('an id that is not ours is not read', () => {
    for (const id of ['', 'x:1', 'p:', 'p:item', `p:${ITEM}:`, 'p:bad item!:once', 'r:'])
      expect(readCustomId(id)).toBeUndefined();
  });
});
