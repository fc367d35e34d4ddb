// The shutdown's fence: once closed, the store refuses every write with WritesFencedError
// (which the engine and the session layer treat as "stop quietly"), and still reads.
import Keyv from 'keyv';
import { describe, expect, it } from 'vitest';
import { isWritesFenced, WritesFencedError } from '../../src/engine/index.js';
import { SessionStore } from '../../src/store/session-store.js';
import { fenceWrites } from '../../src/store/write-fence.js';

describe('the write fence', () => {
  it('lets writes through until closed, then refuses every kind of write and keeps reads working', async () => {
    const keyv = new Keyv();
    const fence = fenceWrites(keyv);
    await keyv.set('a', 1);
    expect(fence.closed).toBe(false);
    fence.close('the bot is shutting down');
    expect(fence.closed).toBe(true);
    for (const write of [
      () => keyv.set('b', 2),
      () => keyv.setMany([{ key: 'c', value: 3 }]),
      () => keyv.delete('a'),
      () => keyv.deleteMany(['a']),
      () => keyv.clear(),
    ]) {
      const error = await write().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(WritesFencedError);
      expect(isWritesFenced(error)).toBe(true);
    }
    expect(await keyv.get('a')).toBe(1);
    expect(await keyv.get('b')).toBeUndefined();
  });

  it('stops the session store too: a transcript append after the fence is refused, what was written stays', async () => {
    const keyv = new Keyv();
    const fence = fenceWrites(keyv);
    const store = new SessionStore(keyv);
    await store.appendMessage('s1', { role: 'user', content: 'before' });
    fence.close('the bot is shutting down');
    await expect(store.appendMessage('s1', { role: 'user', content: 'after' })).rejects.toSatisfy(isWritesFenced);
    expect(await store.loadTranscript('s1')).toEqual([{ role: 'user', content: 'before' }]);
  });

  it('is recognised through a wrapping error (cause), and not confused with other errors', () => {
    expect(isWritesFenced(new Error('outer', { cause: new WritesFencedError('x') }))).toBe(true);
    expect(isWritesFenced(new Error('disk full'))).toBe(false);
    expect(isWritesFenced('WritesFencedError')).toBe(false);
  });
});

describe('the write fence with a kept prefix', () => {
  it('still writes keys under a kept prefix (a connector’s rendering), and nothing else', async () => {
    const keyv = new Keyv();
    const fence = fenceWrites(keyv);
    fence.keep('web:');
    fence.close('the bot is shutting down');
    await keyv.set('web:thread:1', { notes: ['restarting'] });
    await keyv.setMany([{ key: 'web:a', value: 1 }]);
    expect(await keyv.get('web:thread:1')).toEqual({ notes: ['restarting'] });
    await expect(keyv.set('session:1', {})).rejects.toSatisfy(isWritesFenced);
    // A batch with one key outside the prefix is refused whole.
    await expect(
      keyv.setMany([
        { key: 'web:b', value: 1 },
        { key: 'session:2', value: 1 },
      ]),
    ).rejects.toSatisfy(isWritesFenced);
    await expect(keyv.clear()).rejects.toSatisfy(isWritesFenced);
  });
});
