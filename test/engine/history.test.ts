// The questions the engine asks of a session's history on every iteration, answered as the
// history grows: who the current turn is for (whose grants may cover its calls, who pays).
import { describe, expect, it } from 'vitest';
import { History } from '../../src/engine/history.js';
import type { Message, NoticeKind } from '../../src/engine/index.js';

/** The turn's requesters as defined: walk back to the last final answer or turn-ending notice before the latest user message. */
function walkedRequesters(messages: readonly Message[]): (string | undefined)[] {
  const ending: NoticeKind[] = ['error', 'interrupted', 'max_iterations', 'budget'];
  const requesters: (string | undefined)[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user') requesters.push(message.source?.userId);
    else if (message.role === 'assistant' && (message.tool_calls ?? []).length === 0 && requesters.length > 0) break;
    else if (message.role === 'notice' && ending.includes(message.kind) && requesters.length > 0) break;
  }
  return requesters;
}

/** A deterministic sequence of messages of every kind that bears on a turn's bounds. */
function messageAt(i: number, seed: number): Message {
  const pick = (i * 7919 + seed * 104729) % 11;
  const who = ['U1', 'U2', undefined, 'U3'][(i + seed) % 4];
  switch (pick) {
    case 0:
    case 1:
    case 2:
      return { role: 'user', content: `m${i}`, ...(who ? { source: { platform: 'slack', userId: who } } : {}) };
    case 3:
      return { role: 'assistant', content: 'answer' };
    case 4:
    case 5:
      return {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${seed}_${i}`, type: 'function', function: { name: 'look', arguments: '{}' } }],
      };
    case 6:
    case 7:
      return { role: 'tool', tool_call_id: `c${seed}_${i}`, content: 'ok' };
    case 8:
      return { role: 'notice', kind: 'interrupted' };
    case 9:
      return { role: 'notice', kind: 'model_switch', text: 'switched' };
    default:
      return { role: 'notice', kind: 'error', text: 'failed' };
  }
}

describe('the history', () => {
  it("knows the current turn's requesters, message after message, as a walk back would find them", async () => {
    for (let seed = 0; seed < 40; seed++) {
      const prior = Array.from({ length: seed % 7 }, (_, i) => messageAt(i + 1000, seed));
      const history = new History(prior, undefined);
      expect(history.turnRequesters()).toEqual(walkedRequesters(prior));
      for (let i = 0; i < 60; i++) {
        await history.append(messageAt(i, seed));
        const expected = walkedRequesters(history.messages);
        expect(history.turnRequesters()).toEqual(expected);
        expect(history.turnRequester()).toBe(expected.find((id) => id !== undefined));
      }
    }
  });

  it('a system prompt put first changes no turn', () => {
    const history = new History(
      [{ role: 'user', content: 'hi', source: { platform: 'slack', userId: 'U1' } }],
      undefined,
    );
    history.prependSystem('be brief');
    expect(history.turnRequesters()).toEqual(['U1']);
  });
});
