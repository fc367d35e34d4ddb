// The feedback book on a real SQLite store: an answer is recorded on its message's reference,
// a vote counts once per person per answer (the latest click wins), a reason sticks only to a
// 👎, totals add up by model, a forged or forgotten answer takes no vote, and forgetting a
// thread removes its votes.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FeedbackBook } from '../../src/feedback/feedback-book.js';
import { openKeyvStore } from '../../src/store/keyv-factory.js';
import { KeyvIdSet } from '../../src/store/keyv-id-set.js';
import { SessionStore } from '../../src/store/session-store.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function book(mask?: (text: string) => string) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const opened = await openKeyvStore(`sqlite://${join(dir.path, 'bot.sqlite')}`);
  cleanups.push(() => opened.close());
  const store = new SessionStore(opened.keyv);
  const feedback = new FeedbackBook(
    store,
    new KeyvIdSet(opened.keyv, 'feedback-votes', async () => []),
    mask ? { mask } : {},
  );
  const answer = async (sessionId: string, messageKey: string, model = 'openai:gpt-4.1') => {
    await store.putMessageRef(messageKey, { sessionId, kind: 'answer' });
    await feedback.answered({ sessionId, messageKey, model, requestId: 'req', turnStartedAt: 1 });
  };
  return { store, feedback, answer };
}

describe('feedback on answers', () => {
  it('counts one vote per person per answer: the same click twice once, a changed mind as the new vote, two people twice', async () => {
    const { feedback, answer } = await book();
    await answer('s1', 'test:C1:a1');
    expect(await feedback.vote('test:C1:a1', 'U_ADA', 'up')).toMatchObject({
      status: 'recorded',
      answer: { sessionId: 's1', model: 'openai:gpt-4.1', requestId: 'req' },
    });
    expect((await feedback.vote('test:C1:a1', 'U_ADA', 'up')).status).toBe('unchanged');
    expect((await feedback.totals()).up).toBe(1);
    expect((await feedback.vote('test:C1:a1', 'U_ADA', 'down')).status).toBe('changed');
    expect(await feedback.vote('test:C1:a1', 'U_BOB', 'down')).toMatchObject({ status: 'recorded' });
    expect(await feedback.totals()).toMatchObject({
      up: 0,
      down: 2,
      byModel: [{ model: 'openai:gpt-4.1', up: 0, down: 2 }],
    });
  });

  it('takes no vote on a message that is not a recorded final answer (a tool card, a forged key)', async () => {
    const { store, feedback } = await book();
    await store.putMessageRef('test:C1:card', { sessionId: 's1', kind: 'tool_card', toolCallId: 'c1' });
    expect(await feedback.vote('test:C1:card', 'U_ADA', 'up')).toEqual({ status: 'unknown_answer' });
    expect(await feedback.vote('test:C1:nothing', 'U_ADA', 'up')).toEqual({ status: 'unknown_answer' });
    expect((await feedback.totals()).up).toBe(0);
  });

  it('keeps a reason only with the person’s own 👎, masked and capped, newest first in the totals', async () => {
    const { feedback, answer } = await book((text) => text.replaceAll('sk-SECRET', '[secret]'));
    await answer('s1', 'test:C1:a1');
    await answer('s1', 'test:C1:a2', 'anthropic:claude-sonnet-4-6');
    await feedback.vote('test:C1:a1', 'U_ADA', 'up');
    expect(await feedback.giveReason('test:C1:a1', 'U_ADA', 'no reason for a thumbs up')).toBe(false);
    await feedback.vote('test:C1:a2', 'U_ADA', 'down');
    expect(await feedback.giveReason('test:C1:a2', 'U_ADA', `it leaked sk-SECRET ${'x'.repeat(900)}`)).toBe(true);
    expect(await feedback.giveReason('test:C1:a2', 'U_BOB', 'not my vote')).toBe(false);
    const totals = await feedback.totals();
    expect(totals.reasons).toHaveLength(1);
    expect(totals.reasons[0]!.reason.startsWith('it leaked [secret] x')).toBe(true);
    expect(totals.reasons[0]!.reason.length).toBe(500);
    expect(totals.reasons[0]!.model).toBe('anthropic:claude-sonnet-4-6');
  });

  it('forgets a thread: its answers take no more votes and its votes leave the totals; other threads stay', async () => {
    const { store, feedback, answer } = await book();
    await answer('s1', 'test:C1:a1');
    await answer('s2', 'test:C2:b1');
    await feedback.vote('test:C1:a1', 'U_ADA', 'up');
    await feedback.vote('test:C2:b1', 'U_ADA', 'down');
    await store.deleteSession('s1');
    await feedback.forgetSession('s1');
    expect(await feedback.totals()).toMatchObject({ up: 0, down: 1 });
    expect(await feedback.vote('test:C1:a1', 'U_BOB', 'up')).toEqual({ status: 'unknown_answer' });
  });
});
