// Caps and fair use in the session layer: what one thread may queue, what one person may
// start, the bot-wide limit on model calls, and how many sessions stay in memory. Every
// refusal is a sentence for the person it affects.
import Keyv from 'keyv';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedResolver, ModelCallGate } from '../../src/providers/model-gate.js';
import { PendingInputs } from '../../src/store/pending-inputs.js';
import { ScriptedProvider, type ScriptStep } from '../fakes/scripted-provider.js';
import { waitFor } from '../support/engine-kit.js';
import { TestBot } from '../support/test-connector.js';

let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const stalled: ScriptStep = { stallBeforeFirstToken: true };
const answer = (text: string): ScriptStep => ({ text });

describe('what one thread may queue', () => {
  it('past MAX_QUEUED_INPUTS or MAX_QUEUED_BYTES a reply is refused, privately, and nothing of it is recorded', async () => {
    bot = await TestBot.start({
      provider: new ScriptedProvider([stalled]),
      manager: {
        fairUse: { maxQueuedInputs: 3, maxQueuedBytes: 100_000, turnsPerUserPerMinute: 100, threadsPerUser: 100 },
      },
    });
    expect(await bot.say('T1', 'U1', 'start')).toMatchObject({ status: 'started' });
    for (let i = 0; i < 3; i++) expect(await bot.say('T1', 'U2', `reply ${i}`)).toMatchObject({ status: 'queued' });
    const refused = await bot.say('T1', 'U2', 'one too many');
    expect(refused).toEqual({
      status: 'refused',
      reason: '3 messages are already waiting in this thread (the limit is 3); send this again once I have taken them.',
    });
    expect((await bot.store.getPendingInputs(bot.sessionId('T1'))).map((input) => input.text)).toEqual([
      'reply 0',
      'reply 1',
      'reply 2',
    ]);
  });

  it('counts bytes too: one huge reply does not fit', async () => {
    bot = await TestBot.start({
      provider: new ScriptedProvider([stalled]),
      manager: {
        fairUse: { maxQueuedInputs: 100, maxQueuedBytes: 50_000, turnsPerUserPerMinute: 100, threadsPerUser: 100 },
      },
    });
    await bot.say('T1', 'U1', 'start');
    expect(await bot.say('T1', 'U1', 'x'.repeat(40_000))).toMatchObject({ status: 'queued' });
    expect(await bot.say('T1', 'U1', 'y'.repeat(20_000))).toMatchObject({
      status: 'refused',
      reason: expect.stringContaining('more than 49 KB'),
    });
  });

  it('adding a message writes it and a small index, never the others again', async () => {
    const writes: { key: string; bytes: number }[] = [];
    // A Map as Keyv's store that records what each write puts there (Keyv serialises values).
    class RecordingMap extends Map<string, unknown> {
      override set(key: string, value: unknown): this {
        writes.push({ key: key.replace(/^keyv:/, ''), bytes: JSON.stringify(value).length });
        return super.set(key, value);
      }
    }
    const keyv = new Keyv({ store: new RecordingMap() });
    const pending = new PendingInputs(keyv);
    for (let i = 0; i < 80; i++) await pending.add('s1', { id: `in-${i}`, text: 'z'.repeat(40_000), receivedAt: i });
    const last = writes.slice(-2);
    // The 80th reply: its own 40 KB, and an index of 80 short entries; nothing near 80 × 40 KB.
    expect(last.map((write) => write.key)).toEqual(['pending-input:s1:in-79', 'pending-index:s1']);
    expect(Math.max(...last.map((write) => write.bytes))).toBeLessThan(45_000);
    expect(await pending.load('s1')).toEqual({ count: 80, bytes: 80 * 40_000 });
    await pending.remove('s1', ['in-0', 'in-1']);
    expect((await pending.list('s1')).map((input) => input.id).slice(0, 2)).toEqual(['in-2', 'in-3']);
  });

  it('a queue stored in the old single-list layout is read, and folded in at the next change', async () => {
    const keyv = new Keyv();
    await keyv.set('pending:s1', [{ id: 'old-1', text: 'from before', receivedAt: 1 }]);
    const pending = new PendingInputs(keyv);
    expect((await pending.list('s1')).map((input) => input.id)).toEqual(['old-1']);
    await pending.add('s1', { id: 'new-1', text: 'after', receivedAt: 2 });
    expect((await pending.list('s1')).map((input) => input.id)).toEqual(['old-1', 'new-1']);
    expect(await keyv.get('pending:s1')).toBeUndefined();
  });
});

describe('what one person may start', () => {
  it('past THREADS_PER_USER a new thread is refused while the others work; another person is not affected', async () => {
    bot = await TestBot.start({
      provider: new ScriptedProvider([stalled, stalled, stalled]),
      manager: {
        fairUse: { maxQueuedInputs: 20, maxQueuedBytes: 100_000, turnsPerUserPerMinute: 100, threadsPerUser: 2 },
      },
    });
    expect(await bot.say('T1', 'U1', 'one')).toMatchObject({ status: 'started' });
    expect(await bot.say('T2', 'U1', 'two')).toMatchObject({ status: 'started' });
    expect(await bot.say('T3', 'U1', 'three')).toMatchObject({
      status: 'refused',
      reason: expect.stringContaining('You have 2 threads working already (the limit is 2)'),
    });
    expect(await bot.say('T4', 'U2', 'mine')).toMatchObject({ status: 'started' });
    expect(await bot.store.getSession(bot.sessionId('T3'))).toMatchObject({ id: bot.sessionId('T3') }); // the thread exists, its message was not recorded
    expect(await bot.store.getPendingInputs(bot.sessionId('T3'))).toEqual([]);
  });

  it('past TURNS_PER_USER_PER_MINUTE a new request is refused with how long to wait', async () => {
    bot = await TestBot.start({
      provider: new ScriptedProvider(Array.from({ length: 5 }, (_unused, i) => answer(`answer ${i}`))),
      manager: {
        fairUse: { maxQueuedInputs: 20, maxQueuedBytes: 100_000, turnsPerUserPerMinute: 3, threadsPerUser: 10 },
      },
    });
    for (let i = 0; i < 3; i++) {
      expect(await bot.say(`T${i}`, 'U1', 'go')).toMatchObject({ status: 'started' });
      await bot.manager.idle();
    }
    expect(await bot.say('T9', 'U1', 'go')).toMatchObject({
      status: 'refused',
      reason: expect.stringMatching(
        /You started 3 requests in the last minute \(the limit is 3\); send this again in \d+ s\./,
      ),
    });
  });
});

describe('the bot-wide limit on model calls', () => {
  it('past MAX_CONCURRENT_MODEL_CALLS a call waits in line, the thread is told, and a stop while waiting ends it at once', async () => {
    const gate = new ModelCallGate(1);
    const waiting: (number | null)[] = [];
    const provider = new ScriptedProvider([stalled, answer('second')]);
    bot = await TestBot.start({
      provider,
      setup: {
        provider: gatedResolver(() => provider, gate, {
          waiting: (ahead) => void waiting.push(ahead),
          admitted: () => void waiting.push(null),
        }),
      },
    });
    await bot.say('T1', 'U1', 'first');
    await waitFor(() => provider.requests.length === 1);
    await bot.say('T2', 'U2', 'second');
    await waitFor(() => waiting.length === 1);
    expect(waiting).toEqual([0]);
    expect(gate.load).toEqual({ running: 1, waiting: 1 });
    expect(provider.requests).toHaveLength(1); // the second call has not reached the provider

    // A stop of the first frees the slot: the second goes ahead and is admitted.
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
    expect(waiting).toEqual([0, null]);
    expect(provider.requests).toHaveLength(2);
  });

  it('a stop while waiting leaves the line at once', async () => {
    const gate = new ModelCallGate(1);
    const provider = new ScriptedProvider([stalled, answer('never')]);
    bot = await TestBot.start({ provider, setup: { provider: gatedResolver(() => provider, gate) } });
    await bot.say('T1', 'U1', 'hog');
    await waitFor(() => provider.requests.length === 1);
    await bot.say('T2', 'U2', 'wait');
    await waitFor(() => gate.load.waiting === 1);
    expect(await bot.manager.interrupt(bot.sessionId('T2'), 'U2')).toMatchObject({ status: 'done' });
    await waitFor(() => !bot!.manager.isWorking(bot!.sessionId('T2')));
    expect(gate.load).toEqual({ running: 1, waiting: 0 });
    expect(provider.requests).toHaveLength(1);
  });
});

describe('sessions kept in memory', () => {
  it('at most MAX_LIVE_SESSIONS idle sessions stay in memory; a dropped one is rebuilt from the store with its history', async () => {
    const provider = new ScriptedProvider(Array.from({ length: 12 }, (_unused, i) => answer(`answer ${i}`)));
    bot = await TestBot.start({
      provider,
      manager: {
        maxLiveSessions: 3,
        fairUse: { maxQueuedInputs: 20, maxQueuedBytes: 100_000, turnsPerUserPerMinute: 100, threadsPerUser: 100 },
      },
    });
    for (let i = 0; i < 10; i++) {
      await bot.say(`T${i}`, 'U1', `question ${i}`);
      await bot.manager.idle();
    }
    await waitFor(() => bot!.manager.liveCount <= 3);
    // T0 was dropped long ago: a reply rebuilds it, and the model sees the whole thread.
    await bot.say('T0', 'U1', 'and again');
    await bot.manager.idle();
    const request = JSON.stringify(provider.requests.at(-1)!.messages);
    expect(request).toContain('question 0');
    expect(request).toContain('and again');
  });
});
