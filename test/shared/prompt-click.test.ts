// A click that cannot be recorded (the store, or in cluster mode Redis, is unreachable) is
// answered to the clicker, and the failure still reaches the connector's log.
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core.js';
import { answerPromptClick, CLICK_NOT_RECORDED } from '../../connectors/shared/prompt-click.js';

describe('a prompt click', () => {
  it('that cannot be recorded tells the clicker so, and throws for the log', async () => {
    const down = new Error('not connected to Redis at 127.0.0.1:6379 (reconnecting); nothing was sent');
    const core = {
      manager: {
        resolve: () => Promise.reject(down),
        records: { session: () => Promise.resolve(undefined), prompt: () => Promise.resolve(undefined) },
      },
    } as unknown as Pick<Core, 'manager'>;
    const said: string[] = [];
    const click = answerPromptClick(
      core,
      () => {
        throw new Error('no presenter is needed');
      },
      { item: 'item-1', choice: 'once', userId: 'U1' },
      async (text) => void said.push(text),
      { cardHoldsAll: () => true },
    );
    await expect(click).rejects.toBe(down);
    expect(said).toEqual([CLICK_NOT_RECORDED]);
  });
});
