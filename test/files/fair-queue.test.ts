// The queue the heavy media work waits in (PDF reading, image decoding): one job at a time,
// and people take turns, so one person's twenty files do not hold up another's one.
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/files/fair-queue.js';

/** A job that records when it starts and finishes only when released. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

describe('FairQueue', () => {
  it("two people's jobs interleave: one person's twenty queued first do not starve another's one", async () => {
    const queue = new FairQueue();
    const started: string[] = [];
    const first = gate();
    const all: Promise<void>[] = [];
    // Alice's first job holds the slot while the rest queue up behind it.
    all.push(
      queue.run('alice', async () => {
        started.push('alice-1');
        await first.done;
      }),
    );
    for (let i = 2; i <= 20; i++) all.push(queue.run('alice', async () => void started.push(`alice-${i}`)));
    all.push(queue.run('bob', async () => void started.push('bob-1')));
    all.push(queue.run('bob', async () => void started.push('bob-2')));
    expect(started).toEqual(['alice-1']);
    expect(queue.waiting).toBe(21);
    first.release();
    await Promise.all(all);
    // Bob waits for one of Alice's, not for nineteen.
    expect(started.slice(0, 5)).toEqual(['alice-1', 'alice-2', 'bob-1', 'alice-3', 'bob-2']);
    expect(started.slice(5)).toEqual(Array.from({ length: 17 }, (_, i) => `alice-${i + 4}`));
  });

  it('someone who arrives later joins the back of the line, behind one job of each person waiting', async () => {
    const queue = new FairQueue();
    const started: string[] = [];
    const first = gate();
    const all = [
      queue.run('a', async () => {
        started.push('a1');
        await first.done;
      }),
    ];
    all.push(
      queue.run('a', async () => void started.push('a2')),
      queue.run('b', async () => void started.push('b1')),
      queue.run('a', async () => void started.push('a3')),
    );
    all.push(queue.run('c', async () => void started.push('c1')));
    first.release();
    await Promise.all(all);
    expect(started).toEqual(['a1', 'a2', 'b1', 'c1', 'a3']);
  });

  it('runs one job at a time by default, and as many as its concurrency says', async () => {
    for (const concurrency of [1, 3]) {
      const queue = new FairQueue({ concurrency });
      let running = 0;
      let most = 0;
      const job = async (): Promise<void> => {
        running++;
        most = Math.max(most, running);
        // A few turns of the event loop, so overlapping jobs would be seen overlapping.
        for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
        running--;
      };
      await Promise.all(Array.from({ length: 9 }, (_, i) => queue.run(`person-${i % 2}`, job)));
      expect(most).toBe(concurrency);
    }
  });

  it('a job that fails, or throws before its first await, frees its slot and the next one runs', async () => {
    const queue = new FairQueue();
    const failing = queue.run('a', async () => Promise.reject(new Error('broken file')));
    const throwing = queue.run('a', () => {
      throw new Error('thrown at once');
    });
    const after = queue.run('b', async () => 'ran');
    await expect(failing).rejects.toThrow('broken file');
    await expect(throwing).rejects.toThrow('thrown at once');
    expect(await after).toBe('ran');
  });

  it('a stopped turn takes its waiting job out of the line: it never runs, and the others keep their order', async () => {
    const queue = new FairQueue();
    const started: string[] = [];
    const first = gate();
    const stop = new AbortController();
    const running = queue.run('a', async () => {
      started.push('a1');
      await first.done;
    });
    const stopped = queue.run('b', async () => void started.push('b1'), stop.signal);
    const later = queue.run('c', async () => void started.push('c1'));
    stop.abort(new Error('the turn was stopped'));
    await expect(stopped).rejects.toThrow('the turn was stopped');
    expect(queue.waiting).toBe(1);
    first.release();
    await Promise.all([running, later]);
    expect(started).toEqual(['a1', 'c1']);
    // Aborted before it was queued at all: refused at once.
    await expect(queue.run('d', async () => 'never', stop.signal)).rejects.toThrow('the turn was stopped');
  });
});
